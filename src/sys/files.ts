import { type BigIntStats, closeSync, type Dirent, existsSync, mkdirSync, openSync, readdirSync, readFileSync, readSync, statSync, writeFileSync } from "node:fs";
import { lstat } from "node:fs/promises";
import { join } from "node:path";

/**
 * Makes `dir` and any parent it lacks, 0700: every directory of the store
 * is made so (SPEC section 2: it holds bytes git never stores, and a
 * directory made by the umask would be open to every local user).
 */
export function mkdirPrivate(dir: string): void {
  mkdirSync(dir, { recursive: true, mode: 0o700 });
}

/** Every file under `dir` (none if it is missing), without following symlinks. */
export function* walkFiles(dir: string): Generator<string> {
  if (!existsSync(dir)) return;
  for (const e of readdirSync(dir, { withFileTypes: true })) {
    const p = join(dir, e.name);
    if (e.isDirectory()) yield* walkFiles(p);
    else yield p;
  }
}

/**
 * The bytes of every file under `dir` (`each` is shown each file's path as
 * the walk passes it). Asked of the file system in batches
 * off the main thread: a store holds tens of thousands of blobs, and a
 * long-lived server (the UI's status bar) must go on answering meanwhile.
 *
 * `settled` names directories whose files are only ever added or removed,
 * never rewritten in place (the CAS's shards): such a directory's sum is
 * kept in this process under its own stat data, and while that is the same
 * its files are not looked at again. The UI asks for the status bar after
 * every burst of captures; with 17,500 blobs that was 17,500 `lstat`s
 * (0.4-0.5 s of the server) each time. A directory changed in the last
 * two seconds is not kept: a file added within its clock's tick after the
 * listing would leave its stat data as it was.
 */
export async function dirBytes(dir: string, each?: (path: string) => void, settled?: (dir: string) => boolean): Promise<number> {
  let n = 0;
  let batch: Promise<number>[] = [];
  const settle = async () => {
    for (const size of await Promise.all(batch)) n += size;
    batch = [];
  };
  const walk = async (d: string): Promise<void> => {
    const kept = settled?.(d) ? await keptSum(d) : null;
    if (kept?.hit) {
      for (const f of kept.hit.files) each?.(f);
      n += kept.hit.bytes;
      return;
    }
    let entries: Dirent[];
    try {
      entries = readdirSync(d, { withFileTypes: true });
    } catch {
      return; // missing, or gone meanwhile
    }
    const files: string[] = [];
    const sizes: Promise<number>[] = [];
    for (const e of entries) {
      const p = join(d, e.name);
      if (e.isDirectory()) {
        await walk(p);
        continue;
      }
      each?.(p);
      files.push(p);
      // One that vanished meanwhile counts nothing.
      const size = lstat(p).then(
        (s) => s.size,
        () => 0,
      );
      batch.push(size);
      if (kept?.key) sizes.push(size);
      if (batch.length >= DIR_BYTES_BATCH) await settle();
    }
    if (kept?.key && files.length === entries.length) {
      const bytes = (await Promise.all(sizes)).reduce((a, b) => a + b, 0);
      sums.set(d, { key: kept.key, files, bytes });
    }
  };
  await walk(dir);
  await settle();
  return n;
}

/** The sums `dirBytes` keeps, by directory. */
const sums = new Map<string, { key: string; files: string[]; bytes: number }>();

/** A settled directory's kept sum if its stat data is the same; else the key to keep a new one under (none while it is changing). */
async function keptSum(d: string): Promise<{ hit?: { files: string[]; bytes: number }; key?: string } | null> {
  let st: BigIntStats;
  try {
    st = await lstat(d, { bigint: true });
  } catch {
    return null;
  }
  const key = `${st.dev}:${st.ino}:${st.mtimeNs}:${st.ctimeNs}`;
  const was = sums.get(d);
  if (was?.key === key) return { hit: was };
  sums.delete(d);
  return Date.now() - Number(st.mtimeMs) > 2000 ? { key } : {};
}

const DIR_BYTES_BATCH = 256;

/**
 * The file system's own clock now, in its own resolution: `file` is
 * written and its modification time read back. Stat data older than this
 * cannot be left unchanged by a later write (src/capture/observe.ts
 * `unchangedSince`).
 */
export function fsClock(file: string): number {
  writeFileSync(file, "t"); // a write, which always sets the time (an empty truncate may not)
  return statSync(file).mtimeMs;
}

/**
 * The lines of a UTF-8 text file (without their newlines), read 64 KiB at a
 * time: a file of megabytes never becomes one string, only lines that die
 * young. The file is opened when the first line is asked for and closed when
 * the last one is given or the caller stops early.
 */
export function* fileLines(file: string): Generator<string> {
  const fd = openSync(file, "r");
  try {
    const chunk = Buffer.allocUnsafe(64 * 1024);
    let carry: Buffer | null = null;
    for (let n; (n = readSync(fd, chunk, 0, chunk.length, null)) > 0; ) {
      // A newline byte never falls inside a multi-byte UTF-8 character: splitting bytes at it is safe.
      const buf: Buffer = carry ? Buffer.concat([carry, chunk.subarray(0, n)]) : chunk.subarray(0, n);
      let at = 0;
      for (let nl; (nl = buf.indexOf(10, at)) >= 0; at = nl + 1) yield buf.toString("utf8", at, nl);
      carry = at < buf.length ? Buffer.from(buf.subarray(at)) : null;
    }
    if (carry) yield carry.toString("utf8");
  } finally {
    closeSync(fd);
  }
}

const SCRATCH = 64 * 1024;
let scratch: Buffer | undefined;

/**
 * A file's bytes, valid only until the next call: one under 64 KiB (`size`,
 * from the caller's lstat, or 0 when unknown) is read into one buffer used
 * again and again, with no `fstat` and nothing allocated per file; a larger
 * one is read whole, and one that turns out larger (grown since, or of a
 * size not known) is read on from the same open file. Planning reads every
 * path in scope, 10,000 small files for a large undo: each read allocated
 * its own buffer, garbage the collector then chased (docs/design.md
 * "Memory"). `file`: a path, or a descriptor open for reading at its start
 * (left open).
 */
export function readFileBriefly(file: string | Buffer | number, size: number): Buffer {
  if (size >= SCRATCH) return readFileSync(file);
  scratch ??= Buffer.allocUnsafe(SCRATCH);
  const fd = typeof file === "number" ? file : openSync(file, "r");
  try {
    let got = 0;
    for (let n; got < SCRATCH && (n = readSync(fd, scratch, got, SCRATCH - got, null)) > 0; ) got += n;
    // Read from a file descriptor, readFileSync goes on from where the reads above stopped.
    return got < SCRATCH ? scratch.subarray(0, got) : Buffer.concat([scratch, readFileSync(fd)]);
  } finally {
    if (fd !== file) closeSync(fd);
  }
}
