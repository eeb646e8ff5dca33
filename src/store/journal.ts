import { storePath } from "../domain/store-layout.js";
import { type BigIntStats, closeSync, existsSync, fstatSync, openSync, readdirSync, readFileSync, readSync, statSync, writeSync, fsyncSync, unlinkSync } from "node:fs";
import { writeFileAtomic } from "../sys/atomic.js";
import { sha256 } from "../domain/hash.js";
import { join } from "node:path";
import type { RepoPath, State } from "../domain/types.js";
import { mkdirPrivate } from "../sys/files.js";
import { readCacheFile, writeCacheFile } from "./cache-file.js";

interface RecordBase {
  v: 1;
  at: string;
  /** The work tree the capture was taken in (absent in records from before 2026-12-01). */
  root?: string;
  session: string;
  harness: string;
  agent?: string;
  agentType?: string;
  task?: string;
  /** The run capsule it was captured inside (SPEC section 9: `UNWIND_RUN`). */
  run?: string;
  tool: string;
  call: string;
  phase: "pre" | "post";
  /**
   * A post written for the call by something other than its own post event,
   * at the session's next event: "next-event" when its own post never came
   * (interrupted, killed), "background" when it came but the command ran on;
   * "read" when a command that read the record closed it, its post not come.
   * Its window ends here unless a later post comes.
   */
  closedBy?: "next-event" | "background" | "read";
  /** On a shell call's own post: it runs on in the background, its window open until the session's next call. */
  background?: true;
  /**
   * Read from the client's own session transcript by `unwind import`, not
   * captured while the call ran: its states are what the transcript says
   * (docs/import.md). Absent on every captured record.
   */
  imported?: true;
}

/** A file capture: the exact state of one path before or after a tool call. */
export interface FileRecord extends RecordBase {
  kind: "file";
  path: RepoPath;
  /** null: the path did not exist. */
  state: State | null;
  /** Captured as the target of this symlink, the path the tool was given. */
  via?: RepoPath;
}

/** A tree capture: a snapshot taken before or after a shell (or unknown) tool call. */
export interface TreeRecord extends RecordBase {
  kind: "tree";
  snapshot: string;
  tree: string;
  /**
   * On a shell call's own post finished after its hook ran out of time
   * (src/capture/finish-later.ts): when the post came, which is where the
   * window ends; the snapshot was taken later.
   */
  sealedAt?: string;
  /** With `sealedAt`: paths changed since then, whose state at the post the snapshot cannot vouch for. */
  doubt?: RepoPath[];
}

/**
 * A call the record holds no capture of: an imported shell (or unknown)
 * call, whose effects nobody saw (docs/import.md). It claims no path; undo
 * of its scope says it was not captured. Only `unwind import` writes one.
 */
export interface UnknownRecord extends RecordBase {
  kind: "unknown";
  imported: true;
  /** What the call ran, as the transcript gives it (a shell command), for a person to judge. */
  command?: string;
}

export type JournalRecord = FileRecord | TreeRecord | UnknownRecord;

export interface DamagedLine {
  file: string;
  line: number;
  why: string;
}

export function journalDir(store: string): string {
  return storePath(store, "journal");
}

/** One file per session, so concurrent sessions never contend for one file. */
export function sessionFile(store: string, session: string): string {
  const harness =
    session
      .split(":")[0]!
      .replace(/[^A-Za-z0-9_-]/g, "_")
      .slice(0, 24) || "session";
  const key = sha256(session).slice(0, 16);
  return join(journalDir(store), `${harness}-${key}.jsonl`);
}

function checksum(body: string): string {
  return sha256(body).slice(0, 16);
}

/**
 * Serialises records as checksummed JSON lines. The checksum covers the
 * record's own JSON, so a torn, truncated or edited line is detected and
 * reported instead of being read as a different capture.
 */
export function encode(records: readonly JournalRecord[]): string {
  return records
    .map((r) => {
      const body = JSON.stringify(r);
      return `${body.slice(0, -1)},"sum":"${checksum(body)}"}\n`;
    })
    .join("");
}

export function decodeLine(line: string): JournalRecord | string {
  let parsed: Record<string, unknown>;
  try {
    parsed = JSON.parse(line) as Record<string, unknown>;
  } catch {
    return "not valid JSON (torn or truncated)";
  }
  const sum = parsed.sum;
  if (typeof sum !== "string") return "no checksum";
  delete parsed.sum;
  if (checksum(JSON.stringify(parsed)) !== sum) return "checksum mismatch (altered)";
  return parsed as unknown as JournalRecord;
}

/**
 * Appends in one write(2) on an O_APPEND descriptor, then fsyncs: records
 * of concurrent hook processes never interleave, and a record is durable
 * before the hook reports success.
 */
export function append(store: string, records: readonly JournalRecord[]): void {
  if (records.length === 0) return;
  mkdirPrivate(journalDir(store));
  const fd = openSync(sessionFile(store, records[0]!.session), "a+", 0o644);
  try {
    // A line torn by a crash or a full disk must not swallow the next record.
    const size = fstatSync(fd).size;
    const last = Buffer.alloc(1);
    const torn = size > 0 && readSync(fd, last, 0, 1, size - 1) === 1 && last[0] !== 10;
    const buf = Buffer.from((torn ? "\n" : "") + encode(records));
    let off = 0;
    while (off < buf.length) off += writeSync(fd, buf, off, buf.length - off);
    fsyncSync(fd);
  } finally {
    closeSync(fd);
  }
}

export interface JournalRead {
  records: JournalRecord[];
  damaged: DamagedLine[];
}

interface FileRead {
  /** The stat it was read under, where that vouches for its bytes (`settled`); "" where it does not. */
  key: string;
  /** Its complete lines (up to the last newline): their bytes and count, and what they hold. */
  whole: { bytes: Buffer; lines: number; records: readonly JournalRecord[]; damaged: readonly DamagedLine[] };
  /** A last line with no newline yet (torn, or being written): read each time. */
  records: readonly JournalRecord[];
  damaged: readonly DamagedLine[];
}

/**
 * Each journal file as this process last read it, by directory: a
 * long-lived process (the MCP and UI servers, a library user) reads again
 * only what was written since. A file whose stat is as it was is not read
 * at all: appends grow it and gc renames a new one over it, so any change
 * moves its size, inode or times; but a file changed in the last RACY_MS is
 * read again, since an edit in place within the file system's clock tick
 * can leave all of them as they were (git's racy-index rule). A file read
 * again whose earlier complete lines are byte for byte as they were is
 * parsed only past them: a session's own file, appended to at every call.
 */
const readCache = new Map<string, Map<string, FileRead>>();
const RACY_MS = 2000;

/** Whether a file stat'ed at `now` (ms) was last changed long enough before it that an edit since must show in its times. */
export function settled(st: { ctimeNs: bigint; mtimeNs: bigint }, now: number): boolean {
  const ms = (ns: bigint) => Number(ns / 1_000_000n);
  return ms(st.ctimeNs) < now - RACY_MS && ms(st.mtimeNs) < now - RACY_MS;
}

/**
 * Which journal files a fold of one scope must read (`readJournal`): the
 * files of `sessions`, whatever their age, and every file with a record at
 * or after `since` or a call still open. A file all of whose records are
 * older, its calls closed, holds only windows that ended before `since`.
 */
export interface JournalWindow {
  since: string;
  sessions: ReadonlySet<string>;
  /**
   * Write the facts worked out of the files read (`JournalFacts`). Only the
   * read of a scope already resolved asks it: a command given a name that
   * matches nothing changes no file, the cache included.
   */
  keepFacts?: boolean;
}

export interface WindowRead extends JournalRead {
  /** Every session the journal holds, read or not. */
  sessions: Set<string>;
  /** How many files were left unread (their facts vouched for them). */
  skipped: number;
  /** Whether a file left unread may hold a record of this call id, or names this task or run. */
  unread: { mayHoldCall(id: string): boolean; names(task: string | undefined, run: string | undefined): boolean };
}

/** Whether this process has read the journal's files (a fold did): a whole read now parses only what changed since. */
export function journalReadHere(store: string): boolean {
  return (readCache.get(journalDir(store))?.size ?? 0) > 0;
}

/**
 * Every record of every session, in time order (ties keep file order); with
 * a window, only the files it names (src/scope/calls.ts, `scopeWindow`).
 * A file is left unread only when its facts (`JournalFacts`) were worked out
 * from the bytes it holds now, as its stat shows.
 */
export function readJournal(store: string, window?: JournalWindow): WindowRead {
  const dir = journalDir(store);
  const records: JournalRecord[] = [];
  const damaged: DamagedLine[] = [];
  const sessions = new Set<string>();
  const left: JournalFacts[] = [];
  const unread = {
    mayHoldCall: (id: string) => left.some((x) => bloomHas(x.calls, id)),
    names: (task: string | undefined, run: string | undefined) => left.some((x) => (task !== undefined && x.tasks.includes(task)) || (run !== undefined && x.runs.includes(run))),
  };
  if (!existsSync(dir)) return { records, damaged, sessions, skipped: 0, unread };
  const was = readCache.get(dir) ?? new Map<string, FileRead>();
  const kept = new Map<string, FileRead>();
  const facts = loadFacts(store);
  let factsChanged = false;
  const names = readdirSync(dir)
    .filter((f) => f.endsWith(".jsonl"))
    .sort();
  for (const f of names) {
    const path = join(dir, f);
    const seen = statOf(path);
    const key = seen.key;
    const known = facts.get(f);
    if (window && known?.key === key && !known.open && known.last < window.since && !known.sessions.some((s) => window.sessions.has(s))) {
      for (const s of known.sessions) sessions.add(s);
      // Its parse, if this process has one, is kept for the next whole read.
      const parsed = was.get(f);
      if (parsed) kept.set(f, parsed);
      left.push(known);
      continue;
    }
    const read = readAsSeen(f, path, was.get(f), seen);
    kept.set(f, read);
    const all = [...read.whole.records, ...read.records];
    for (const r of all) {
      records.push(r);
      sessions.add(r.session);
    }
    for (const d of read.whole.damaged) damaged.push(d);
    for (const d of read.damaged) damaged.push(d);
    // Facts are kept only under a key that vouches for the bytes they were worked out from.
    if (read.key !== "" && known?.key !== read.key) {
      facts.set(f, factsOf(read.key, all, read.whole.damaged.length + read.damaged.length));
      factsChanged = true;
    }
  }
  readCache.set(dir, kept);
  if (dropGone(facts, names)) factsChanged = true;
  if (factsChanged && window?.keepFacts) saveFacts(store, facts);
  records.sort((a, b) => (a.at < b.at ? -1 : a.at > b.at ? 1 : 0));
  return { records, damaged, sessions, skipped: left.length, unread };
}

/**
 * What a windowed read needs to know of a file it leaves unread: the
 * sessions it holds, its newest record's time, and whether a call in it is
 * still open. Kept in `<store>/cache/journal-files.json` under each file's
 * stat (size, inode, modification and change times in nanoseconds), and only
 * for a file that had settled when it was read (`settled`): appends grow a
 * file and gc renames a new one over it, so a file whose stat is as it was
 * holds the same bytes. A cache, never a record: lost or damaged, every
 * file is read.
 */
interface JournalFacts {
  key: string;
  sessions: string[];
  last: string;
  open: boolean;
  /** Its call ids (`bloomOf`), the tasks and the runs its records name: who an undo's scope may reach in it. */
  calls: string;
  tasks: string[];
  runs: string[];
  /** What `unwind status` counts (`journalCensus`): its records, its damaged lines, the sessions with a hooked record, the imported calls (session, call). */
  records: number;
  damaged: number;
  hooked: string[];
  imported: [string, string][];
}

const FACTS_VERSION = 4;

function factsFile(store: string): string {
  return storePath(store, "cache", "journal-files.json");
}

function factsOf(key: string, records: readonly JournalRecord[], damaged: number): JournalFacts {
  let last = "";
  const sessions = new Set<string>();
  const calls = new Set<string>();
  const tasks = new Set<string>();
  const runs = new Set<string>();
  const hooked = new Set<string>();
  const imported = new Map<string, [string, string]>();
  for (const r of records) {
    if (r.at > last) last = r.at;
    sessions.add(r.session);
    calls.add(r.call);
    if (r.task !== undefined) tasks.add(r.task);
    if (r.run !== undefined) runs.add(r.run);
    if (r.imported) imported.set(`${r.session}\0${r.call}`, [r.session, r.call]);
    else hooked.add(r.session);
  }
  return {
    key,
    sessions: [...sessions],
    last,
    open: anyOpen(records),
    calls: bloomOf(calls),
    tasks: [...tasks],
    runs: [...runs],
    records: records.length,
    damaged,
    hooked: [...hooked],
    imported: [...imported.values()],
  };
}

/** What `unwind status` says of the journal: the whole of it, counted. */
export interface JournalCensus {
  sessions: Set<string>;
  records: number;
  damaged: number;
  /** Sessions with a record the hooks wrote (not imported). */
  hooked: Set<string>;
  /** Imported calls, as `session\0call`. */
  imported: Set<string>;
}

/**
 * The journal counted, each file from its facts where they vouch for the
 * bytes it holds now (its stat is the one they were worked out under), the
 * others read: `unwind status` on a long record, and the UI's status bar,
 * which before parsed and checked every record each time.
 */
export function journalCensus(store: string): JournalCensus {
  const out: JournalCensus = { sessions: new Set(), records: 0, damaged: 0, hooked: new Set(), imported: new Set() };
  const dir = journalDir(store);
  if (!existsSync(dir)) return out;
  const was = readCache.get(dir) ?? new Map<string, FileRead>();
  const kept = new Map<string, FileRead>();
  const facts = loadFacts(store);
  let factsChanged = false;
  const names = readdirSync(dir).filter((f) => f.endsWith(".jsonl"));
  for (const f of names) {
    const path = join(dir, f);
    const seen = statOf(path);
    let x = facts.get(f);
    const parsed = was.get(f);
    if (x?.key !== seen.key) {
      const read = readAsSeen(f, path, parsed, seen);
      kept.set(f, read);
      x = factsOf(read.key, [...read.whole.records, ...read.records], read.whole.damaged.length + read.damaged.length);
      if (read.key !== "") {
        facts.set(f, x);
        factsChanged = true;
      }
    } else if (parsed) kept.set(f, parsed);
    out.records += x.records;
    out.damaged += x.damaged;
    for (const s of x.sessions) out.sessions.add(s);
    for (const s of x.hooked) out.hooked.add(s);
    for (const [s, c] of x.imported) out.imported.add(`${s}\0${c}`);
  }
  readCache.set(dir, kept);
  if (dropGone(facts, names)) factsChanged = true;
  if (factsChanged) saveFacts(store, facts);
  return out;
}

/** A journal file's stat, as the key its parse and its facts are kept under, and when it was taken. */
function statOf(path: string): { key: string; st: BigIntStats; before: number } {
  const before = Date.now();
  const st = statSync(path, { bigint: true });
  return { key: `${st.size} ${st.ino} ${st.mtimeNs} ${st.ctimeNs}`, st, before };
}

/** The file's parse as `seen` found it: the one kept where it is of that stat, else read now. */
function readAsSeen(f: string, path: string, kept: FileRead | undefined, seen: ReturnType<typeof statOf>): FileRead {
  if (kept?.key === seen.key) return kept;
  const bytes = readFileSync(path);
  // Bytes that are not the ones stat saw (an append in between) are not vouched for by it.
  return readBytes(f, bytes, kept, BigInt(bytes.length) === seen.st.size && settled(seen.st, seen.before) ? seen.key : "");
}

/** Drops the facts of files no longer in the journal; whether any were. */
function dropGone(facts: Map<string, JournalFacts>, names: readonly string[]): boolean {
  const present = new Set(names);
  let dropped = false;
  for (const f of [...facts.keys()]) {
    if (present.has(f)) continue;
    facts.delete(f);
    dropped = true;
  }
  return dropped;
}

/**
 * Whether a call in these records has no end yet, by the rule of
 * `callWindows` (src/scope/fold/windows.ts), which decides what is open: a
 * run of a call (its pre, then its posts; a pre after a post starts another
 * run, where ids repeat) with no post, or whose last post says it runs on in
 * the background.
 */
export function anyOpen(records: readonly JournalRecord[]): boolean {
  // In time order, as the fold reads them (a file holds them in the order they were appended).
  const inOrder = [...records].sort((a, b) => (a.at < b.at ? -1 : a.at > b.at ? 1 : 0));
  const runsOn = (post: JournalRecord | null) => post === null || (post.closedBy === undefined && post.background === true);
  const last = new Map<string, JournalRecord | null>();
  for (const r of inOrder) {
    const k = `${r.session}\0${r.call}`;
    const cur = last.get(k);
    if (r.phase === "pre") {
      // A pre after a post ends that run where its last post left it.
      if (cur && runsOn(cur)) return true;
      if (cur === undefined || cur !== null) last.set(k, null);
    } else last.set(k, r);
  }
  for (const post of last.values()) if (runsOn(post)) return true;
  return false;
}

/**
 * The call ids a file holds, as a Bloom filter: 16 bits an id (a power of
 * two, at least 1,024), 7 hashes, about one false "may" in 2,000 a file. A
 * windowed fold asks whether an undo's scope of a call id may have members
 * in a file it left unread; a false "may" reads the whole record, a "no" is
 * never wrong. (A fixed 1,024 bits said "may" of nearly every id once a
 * session held 500 calls: the soak's folds all read the whole record.)
 */
const BLOOM_HASHES = 7;

function bloomSlots(id: string, bits: number): number[] {
  const h = sha256(id);
  const out: number[] = [];
  for (let k = 0; k < BLOOM_HASHES; k++) out.push(Number.parseInt(h.slice(k * 8, k * 8 + 8), 16) % bits);
  return out;
}

export function bloomOf(ids: ReadonlySet<string>): string {
  let bits = 1024;
  while (bits < ids.size * 16) bits *= 2;
  const buf = Buffer.alloc(bits / 8);
  for (const id of ids) for (const b of bloomSlots(id, bits)) buf[b >> 3]! |= 1 << (b & 7);
  return buf.toString("base64");
}

export function bloomHas(bloom: string, id: string): boolean {
  const buf = Buffer.from(bloom, "base64");
  if (buf.length < 128) return true;
  return bloomSlots(id, buf.length * 8).every((b) => (buf[b >> 3]! & (1 << (b & 7))) !== 0);
}

function loadFacts(store: string): Map<string, JournalFacts> {
  const out = new Map<string, JournalFacts>();
  // A damaged file is dropped, and every journal file read.
  const body = readCacheFile(factsFile(store));
  if (body === null) return out;
  try {
    const doc = JSON.parse(body.toString("utf8")) as { v: number; files: Record<string, JournalFacts> };
    if (doc.v !== FACTS_VERSION) return out;
    for (const [f, x] of Object.entries(doc.files)) {
      const strings = (a: unknown) => Array.isArray(a) && a.every((v) => typeof v === "string");
      const pairs = (a: unknown) => Array.isArray(a) && a.every((v) => Array.isArray(v) && v.length === 2 && strings(v));
      const count = (n: unknown) => Number.isSafeInteger(n) && (n as number) >= 0;
      if (
        typeof x.key === "string" &&
        typeof x.last === "string" &&
        typeof x.open === "boolean" &&
        typeof x.calls === "string" &&
        strings(x.sessions) &&
        strings(x.tasks) &&
        strings(x.runs) &&
        count(x.records) &&
        count(x.damaged) &&
        strings(x.hooked) &&
        pairs(x.imported)
      )
        out.set(f, x);
    }
  } catch {
    /* rebuilt from the files */
  }
  return out;
}

function saveFacts(store: string, facts: ReadonlyMap<string, JournalFacts>): void {
  writeCacheFile(factsFile(store), JSON.stringify({ v: FACTS_VERSION, files: Object.fromEntries(facts) }));
}

/** One file's records from its bytes, its complete lines as `earlier` read them reused where they are the same bytes. */
function readBytes(f: string, bytes: Buffer, earlier: FileRead | undefined, key: string): FileRead {
  const end = bytes.lastIndexOf(10) + 1;
  const e = earlier?.whole;
  const same = e !== undefined && e.bytes.length <= end && e.bytes.equals(bytes.subarray(0, e.bytes.length));
  const from = same ? e.bytes.length : 0;
  let lines = same ? e.lines : 0;
  const records: JournalRecord[] = same ? [...e.records] : [];
  const damaged: DamagedLine[] = same ? [...e.damaged] : [];
  const decode = (line: string, n: number, into: { records: JournalRecord[]; damaged: DamagedLine[] }) => {
    const r = decodeLine(line);
    if (typeof r === "string") into.damaged.push({ file: f, line: n, why: r });
    else into.records.push(deepFreeze(r));
  };
  const text = bytes.toString("utf8", from, end);
  let at = 0;
  while (at < text.length) {
    const nl = text.indexOf("\n", at);
    decode(text.slice(at, nl), ++lines, { records, damaged });
    at = nl + 1;
  }
  const last = { records: [] as JournalRecord[], damaged: [] as DamagedLine[] };
  if (end < bytes.length) decode(bytes.toString("utf8", end), lines + 1, last);
  return { key, whole: { bytes: bytes.subarray(0, end), lines, records, damaged }, ...last };
}

/** A record kept across reads is shared by every caller: none may change it. */
function deepFreeze<T>(o: T): T {
  if (o !== null && typeof o === "object" && !Object.isFrozen(o)) {
    for (const v of Object.values(o)) deepFreeze(v);
    Object.freeze(o);
  }
  return o;
}

/**
 * gc: rewrites each session's journal without records older than `cutoff`
 * (damaged lines are kept: evidence is never dropped silently). The caller
 * holds the store lock, so no hook appends meanwhile.
 *
 * A call is kept or dropped whole, by its newest record: a pre without its
 * post (or the reverse) would lose the call's changes. A call that has not
 * closed lives as long as its session does (SPEC section 7): its post may
 * still come, and its pre is all that can bring back what it deleted; the
 * session's newest call, if open, may still be running (a long build) and is
 * kept whatever its age. And a call whose window overlaps a kept call's is
 * kept too: without it, a change both may have made would become the kept
 * call's alone (docs/attribution.md).
 */
export function pruneJournal(store: string, cutoff: string, dryRun: boolean): { dropped: number; live: JournalRecord[] } {
  const dir = journalDir(store);
  const live: JournalRecord[] = [];
  let dropped = 0;
  if (!existsSync(dir)) return { dropped, live };
  const files = readdirSync(dir)
    .filter((f) => f.endsWith(".jsonl"))
    .sort()
    .map((f) => {
      const path = join(dir, f);
      const lines = readFileSync(path, "utf8")
        .split("\n")
        .filter((l) => l !== "");
      return { path, lines, decoded: lines.map(decodeLine) };
    });
  const windows = new Map<string, { start: string; end: string }>();
  const newest = new Map<string, string>();
  const sessionLast = new Map<string, { at: string; key: string }>();
  const closed = new Set<string>();
  // A call taken in a work tree that is gone (or before records named theirs) can never close: it is not kept open.
  const rootGone = new Map<string, boolean>();
  const gone = (root: string | undefined) => {
    if (root === undefined) return true;
    if (!rootGone.has(root)) rootGone.set(root, !existsSync(root));
    return rootGone.get(root)!;
  };
  // Calls are judged by run: an id that repeats (Gemini, `record`) starts another run with a pre after its post.
  const runOf = new Map<string, { n: number; posted: boolean }>();
  const runKeys = files.map(({ decoded }) =>
    decoded.map((r) => {
      if (typeof r === "string") return "";
      const id = `${r.session}\0${r.call}`;
      const run = runOf.get(id) ?? { n: 0, posted: false };
      if (r.phase === "pre" && run.posted) {
        run.n++;
        run.posted = false;
      }
      if (r.phase === "post") run.posted = true;
      runOf.set(id, run);
      return `${id}\0${run.n}`;
    }),
  );
  files.forEach(({ decoded }, f) => {
    decoded.forEach((r, i) => {
      if (typeof r === "string") return;
      const key = runKeys[f]![i]!;
      if (gone(r.root)) closed.add(key);
      if ((newest.get(key) ?? "") < r.at) newest.set(key, r.at);
      const w = windows.get(key);
      windows.set(key, { start: w && w.start < r.at ? w.start : r.at, end: w && w.end > r.at ? w.end : r.at });
      if ((sessionLast.get(r.session)?.at ?? "") <= r.at) sessionLast.set(r.session, { at: r.at, key });
      if (r.phase === "post" && !r.background) closed.add(key);
    });
  });
  for (const [key, at] of newest) {
    if (closed.has(key)) continue;
    const last = sessionLast.get(key.slice(0, key.indexOf("\0")))!;
    newest.set(key, last.key === key ? "~" : last.at > at ? last.at : at);
    // Still open: its window reaches to now, and keeps what it meets, until a reading command
    // closes it (docs/attribution.md); dropping what it meets could charge it with their work.
    windows.get(key)!.end = "~";
  }
  const kept = new Set([...newest].filter(([, at]) => at >= cutoff).map(([k]) => k));
  // The union of the kept windows, as disjoint intervals in order.
  const union: { start: string; end: string }[] = [];
  for (const w of [...kept].map((k) => windows.get(k)!).sort((a, b) => (a.start < b.start ? -1 : 1))) {
    const last = union[union.length - 1];
    if (last && w.start <= last.end) last.end = w.end > last.end ? w.end : last.end;
    else union.push({ ...w });
  }
  const overlapsKept = (w: { start: string; end: string }) => {
    let lo = 0;
    let hi = union.length;
    while (lo < hi) {
      const mid = (lo + hi) >> 1;
      if (union[mid]!.end < w.start) lo = mid + 1;
      else hi = mid;
    }
    return lo < union.length && union[lo]!.start <= w.end;
  };
  for (const [k, w] of windows) if (!kept.has(k) && overlapsKept(w)) kept.add(k);
  files.forEach(({ path, lines, decoded }, f) => {
    const keptLines: string[] = [];
    decoded.forEach((r, i) => {
      if (typeof r !== "string" && !kept.has(runKeys[f]![i]!)) {
        dropped++;
        return;
      }
      if (typeof r !== "string") live.push(r);
      keptLines.push(lines[i]!);
    });
    if (dryRun || keptLines.length === lines.length) return;
    if (keptLines.length === 0) unlinkSync(path);
    else writeFileAtomic(path, keptLines.join("\n") + "\n");
  });
  return { dropped, live };
}

/**
 * A journal file as a kept change set saw it (src/scope/carry.ts): its
 * stat (a fold that left the file unread does not open it for this).
 * Appends grow a file in place and gc renames a new one over it, so a file
 * of the same inode that grew holds what it held then, and more; one that
 * did not grow must have kept its times too (an edit in place of the same
 * length moves them). An edit in place that also grows a file is not seen
 * here: unwind never makes one, and `unwind verify` reads every record.
 */
export interface FileMark {
  size: number;
  ino: string;
  /** Its modification and change times, in nanoseconds. */
  times: string;
}

const markOf = (st: BigIntStats): FileMark => ({ size: Number(st.size), ino: String(st.ino), times: `${st.mtimeNs} ${st.ctimeNs}` });

/** Each journal file's mark now. */
export function journalMarks(store: string): Record<string, FileMark> {
  const dir = journalDir(store);
  const out: Record<string, FileMark> = {};
  if (!existsSync(dir)) return out;
  for (const f of readdirSync(dir).filter((n) => n.endsWith(".jsonl"))) {
    out[f] = markOf(statSync(join(dir, f), { bigint: true }));
  }
  return out;
}

/**
 * What was appended to the journal since `marks`: the records past each
 * marked file's end, and every record of a file not marked. Null where the
 * journal did more than grow: a marked file gone, replaced (another inode,
 * or shorter: gc rewrites files), marked in the middle of a record, or with
 * a line written since that is damaged or not yet whole.
 */
export function appendedSince(store: string, marks: Readonly<Record<string, FileMark>>, limit: number): { records: JournalRecord[]; marks: Record<string, FileMark> } | null {
  const dir = journalDir(store);
  const names = existsSync(dir) ? readdirSync(dir).filter((n) => n.endsWith(".jsonl")) : [];
  const present = new Set(names);
  if (Object.keys(marks).some((f) => !present.has(f))) return null;
  const records: JournalRecord[] = [];
  const out: Record<string, FileMark> = {};
  const grown: { path: string; size: number; was: FileMark | undefined }[] = [];
  let bytes = 0;
  for (const f of names) {
    const was = marks[f];
    const path = join(dir, f);
    const now = markOf(statSync(path, { bigint: true }));
    const size = now.size;
    if (was && (was.ino !== now.ino || size < was.size || (size === was.size && now.times !== was.times))) return null;
    out[f] = now;
    if (was?.size === size || size === 0) continue;
    grown.push({ path, size, was });
    bytes += size - (was?.size ?? 0);
  }
  // Past `limit` bytes appended, reading them to decide costs more than the fold it would spare.
  if (bytes > limit) return null;
  for (const { path, size, was } of grown) {
    const from = was ? Math.max(0, was.size - 1) : 0;
    const fd = openSync(path, "r");
    let buf: Buffer;
    try {
      buf = Buffer.alloc(size - from);
      let got = 0;
      while (got < buf.length) {
        const n = readSync(fd, buf, got, buf.length - got, from + got);
        if (n === 0) return null;
        got += n;
      }
    } finally {
      closeSync(fd);
    }
    // A mark ends at a record's end, and so does what follows: else a write was under way.
    if ((was && was.size > 0 && buf[0] !== 10) || buf[buf.length - 1] !== 10) return null;
    for (const line of buf.toString("utf8", was && was.size > 0 ? 1 : 0).split("\n")) {
      if (line === "") continue;
      const r = decodeLine(line);
      if (typeof r === "string") return null;
      records.push(r);
    }
  }
  records.sort((a, b) => (a.at < b.at ? -1 : a.at > b.at ? 1 : 0));
  return { records, marks: out };
}
