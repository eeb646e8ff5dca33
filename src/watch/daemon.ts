import { randomBytes } from "node:crypto";
import { lstatSync, readdirSync, readFileSync, rmSync, statfsSync, watch, writeFileSync, type FSWatcher } from "node:fs";
import { createServer, type Socket } from "node:net";
import { join } from "node:path";
import { decodePath, fsPath } from "../domain/path-bytes.js";
import { insideRoot } from "../domain/paths.js";
import { writeFileAtomic } from "../sys/atomic.js";
import { ask, readWatchInfo, watchFiles, type ChangesAnswer, type StatusAnswer, type WatchFiles, type WatchInfo, type WatchRequest, type WatchToken } from "./protocol.js";
import { mkdirPrivate } from "../sys/files.js";

// The watcher daemon (`unwind watch start`, its own bundle: dist/watch.cjs).
// One per root. It watches every directory of the work tree with Node's
// fs.watch (one inotify watch per directory on Linux), keeps the set of
// paths changed since the oldest token a snapshot still holds, and answers
// "what changed since token T" over a unix socket. It never guesses: when it
// cannot vouch for a period (an overflow, a watch error, the clock going
// back, the root replaced, a token of another instance or one it has
// forgotten), it says so, and the snapshot scans everything.

/** More changed paths than this since the oldest live token: forgotten, and the next snapshot scans everything. */
const MAX_PATHS = positive(process.env.UNWIND_WATCH_MAX_PATHS) ?? 100_000;
const DOT_GIT = Buffer.from(".git");
/** How long a request waits for its cookie's event. */
const COOKIE_TIMEOUT_MS = 1500;

function positive(v: string | undefined): number | undefined {
  const n = Number(v);
  return v && Number.isInteger(n) && n > 0 ? n : undefined;
}

/**
 * The kernel's inotify queue (`max_queued_events`) drops events when it is
 * full, and neither libuv nor any watching library reports that
 * (IN_Q_OVERFLOW has no watch, so libuv drops it). A full queue is drained in
 * one read burst, which Node delivers within one turn of the event loop; so
 * a turn that brings half that many events is taken for an overflow.
 */
function burstLimit(): number {
  try {
    return Math.max(64, Math.floor(Number(readFileSync("/proc/sys/fs/inotify/max_queued_events", "utf8").trim()) / 2));
  } catch {
    return 8192;
  }
}

class Watcher {
  readonly instance = randomBytes(8).toString("hex");
  readonly startedAt = new Date().toISOString();
  private readonly dirs = new Map<string, FSWatcher>();
  /** Changed path -> the sequence number of its last change. */
  private readonly changed = new Map<string, number>();
  private seq = 0;
  /** Tokens below this are not answerable (forgotten, or before trouble). */
  private floor = 0;
  /** The sequence number handed out last: a snapshot holds it. */
  private handedOut = -1;
  private troubleAt = 0;
  private trouble: string | null = "just started: the first snapshot scans everything";
  private events = 0;
  private burst = 0;
  private readonly burstMax = burstLimit();
  private lastClock = Date.now();
  private readonly rootId: string;
  private readonly cookieWaits = new Map<string, () => void>();
  private cookieN = 0;

  constructor(
    readonly root: string,
    private readonly skip: (rel: string) => boolean,
    private readonly files: WatchFiles,
  ) {
    this.rootId = identity(root);
  }

  /** Watches the cookie directory, then the whole tree. Throws when a watch cannot be added (too many directories for the inotify limit). */
  start(): void {
    rmSync(this.files.cookies, { recursive: true, force: true });
    mkdirPrivate(this.files.cookies);
    const cookies = watch(this.files.cookies, { persistent: true }, (_type, name) => {
      const wake = name ? this.cookieWaits.get(String(name)) : undefined;
      if (wake) wake();
    });
    cookies.on("error", (e) => this.fail(`cookie watch error: ${e.message}`));
    this.add("");
    this.trouble = "just started: the first snapshot scans everything";
    this.troubleAt = this.seq;
  }

  /** Watches `rel` and every directory below it: each directory is watched before it is listed, so nothing created meanwhile slips between. */
  private add(rel: string): void {
    const stack = [rel];
    while (stack.length > 0) {
      const d = stack.pop()!;
      if (this.dirs.has(d)) continue;
      const abs = d === "" ? this.root : join(this.root, d);
      let w: FSWatcher;
      try {
        w = watch(fsPath(abs), { persistent: true, encoding: "buffer" }, (type, name) => this.onEvent(d, type, name as Buffer | null));
      } catch (e) {
        const code = (e as NodeJS.ErrnoException).code;
        if (code === "ENOENT" || code === "ENOTDIR") continue; // gone already: its parent's event says so
        throw e;
      }
      w.on("error", (e) => this.fail(`watch error on ${d || "."}: ${e.message}`));
      this.dirs.set(d, w);
      let entries;
      try {
        entries = readdirSync(fsPath(abs), { withFileTypes: true, encoding: "buffer" });
      } catch {
        continue;
      }
      for (const e of entries) {
        if (!e.isDirectory()) continue;
        const child = d === "" ? decodePath(e.name) : `${d}/${decodePath(e.name)}`;
        if (!this.skip(child)) stack.push(child);
      }
    }
  }

  private remove(rel: string): void {
    for (const [d, w] of this.dirs) {
      if (d === rel || d.startsWith(rel + "/")) {
        w.close();
        this.dirs.delete(d);
      }
    }
  }

  private onEvent(dir: string, type: string, name: Buffer | null): void {
    this.events++;
    if (this.burst++ === 0) setImmediate(() => (this.burst = 0));
    if (this.burst === this.burstMax) this.fail(`overflow: ${this.burst} events in one burst (the kernel drops events past ${this.burstMax * 2})`);
    if (!name) {
      // An event about the watched directory itself: everything below it is suspect.
      if (dir === "") this.fail("an event on the root itself");
      else this.note(dir);
      return;
    }
    const rel = dir === "" ? decodePath(name) : `${dir}/${decodePath(name)}`;
    // A .git appearing or going below the root makes (or unmakes) a nested repository, which status shows
    // as one entry for its directory: that directory changed as a whole. Nothing inside a .git is watched.
    if (dir !== "" && name.equals(DOT_GIT)) {
      this.note(dir);
      return;
    }
    if (this.skip(rel)) return;
    this.note(rel);
    if (type !== "rename") return;
    let isDir = false;
    try {
      isDir = lstatSync(fsPath(join(this.root, rel))).isDirectory();
    } catch {
      /* gone */
    }
    try {
      if (isDir) this.add(rel);
      else if (this.dirs.has(rel)) this.remove(rel);
    } catch (e) {
      this.fail(`cannot watch ${rel}: ${(e as Error).message}`);
    }
  }

  private note(rel: string): void {
    this.changed.set(rel, ++this.seq);
    if (this.changed.size > MAX_PATHS) this.fail(`overflow: more than ${MAX_PATHS} paths changed since the last snapshot`);
  }

  /** From now on the period before this point cannot be vouched for: every live token is void. */
  private fail(why: string): void {
    this.trouble = why;
    this.troubleAt = ++this.seq;
    this.floor = this.troubleAt;
    this.changed.clear();
    process.stderr.write(`${new Date().toISOString()} cannot vouch: ${why}\n`);
  }

  /** Waits until every event queued before now has been seen: the cookie file's own event comes after them (one inotify queue, in order). */
  private sync(): Promise<boolean> {
    const name = `${this.instance}-${++this.cookieN}`;
    const file = join(this.files.cookies, name);
    return new Promise((resolve) => {
      const finish = (ok: boolean) => {
        clearTimeout(timer);
        this.cookieWaits.delete(name);
        rmSync(file, { force: true });
        resolve(ok);
      };
      const timer = setTimeout(() => finish(false), COOKIE_TIMEOUT_MS);
      this.cookieWaits.set(name, () => finish(true));
      try {
        writeFileSync(file, "");
      } catch {
        finish(false);
      }
    });
  }

  /** The checks no event covers: a clock that went back, a root that was replaced. */
  private checkWorld(): void {
    const now = Date.now();
    if (now < this.lastClock) this.fail(`the clock went back ${this.lastClock - now} ms`);
    this.lastClock = now;
    if (identity(this.root) !== this.rootId) this.fail("the root directory was replaced");
  }

  async changes(since: WatchToken | null): Promise<ChangesAnswer> {
    this.checkWorld();
    const synced = await this.sync();
    if (!synced) this.fail("a cookie's event did not arrive in time");
    this.checkWorld();
    const seq = this.seq;
    const answer = (vouch: boolean, reason: string | null, paths: string[] = []): ChangesAnswer => {
      this.handedOut = seq;
      if (!vouch) {
        // The asker scans everything and keeps this token: what came before it is of no use to anyone.
        this.floor = seq;
        this.changed.clear();
      }
      return { instance: this.instance, seq, vouch, reason, paths };
    };
    if (!since) return answer(false, "no earlier token");
    if (since.instance !== this.instance) return answer(false, "the token is from another watcher (restarted since)");
    if (since.seq < this.floor) return answer(false, this.troubleAt > since.seq && this.trouble ? this.trouble : "the token is older than the watcher remembers");
    const paths: string[] = [];
    for (const [p, s] of this.changed) {
      if (s > since.seq) paths.push(p);
      else this.changed.delete(p); // the snapshot holding `since` has them; nobody asks before it again
    }
    this.floor = since.seq;
    return answer(true, null, paths);
  }

  status(): StatusAnswer {
    this.checkWorld();
    return {
      instance: this.instance,
      pid: process.pid,
      since: this.startedAt,
      root: this.root,
      events: this.events,
      pending: [...this.changed.values()].filter((s) => s > this.handedOut).length,
      canVouch: this.handedOut >= this.troubleAt,
      trouble: this.handedOut >= this.troubleAt ? null : this.trouble,
    };
  }

  close(): void {
    for (const w of this.dirs.values()) w.close();
    this.dirs.clear();
    rmSync(this.files.cookies, { recursive: true, force: true });
  }
}

/** statfs(2) magic numbers of file systems whose changes can come from elsewhere, unseen by inotify. */
const REMOTE = new Map<number, string>([
  [0x6969, "NFS"],
  [0xff534d42, "CIFS"],
  [0xfe534d42, "SMB2"],
  [0x517b, "SMB"],
  [0x65735546, "FUSE"],
  [0x01021997, "9P"],
  [0x73757245, "Coda"],
  [0x564c, "NCP"],
  [0x61636673, "ACFS"],
  [0x47504653, "GPFS"],
  [0xa501fcf5, "VXFS"],
  [0x0bd00bd0, "Lustre"],
]);

function remoteFileSystem(root: string): string | null {
  try {
    const t = statfsSync(root).type >>> 0;
    const name = REMOTE.get(t);
    return name ? `${name} (a network or user-space file system)` : null;
  } catch {
    return null;
  }
}

function identity(p: string): string {
  try {
    const st = lstatSync(p);
    return `${st.dev}:${st.ino}`;
  } catch {
    return "gone";
  }
}

/** `node dist/watch.cjs <root> <store>`: runs until `unwind watch stop` (or a signal). */
export async function main(argv: string[]): Promise<void> {
  const [root, store] = argv;
  if (!root || !store) {
    process.stderr.write("usage: watch.cjs <root> <store>\n");
    process.exit(2);
  }
  const files = watchFiles(root, store);
  mkdirPrivate(files.dir);
  // Never captured, so never watched: git's own directories, unwind's stores (ours included, with the cookies).
  const storeRel = insideRoot(root, store);
  const skip = (rel: string) => {
    const parts = rel.split("/");
    if (parts.includes(".git") || parts.includes(".unwind")) return true;
    return storeRel !== null && storeRel !== "" && (rel === storeRel || rel.startsWith(storeRel + "/"));
  };
  const remote = remoteFileSystem(root);
  if (remote) {
    process.stderr.write(`cannot watch ${root}: it is on ${remote}, where inotify does not see changes made by other machines\n`);
    process.exit(1);
  }
  const w = new Watcher(root, skip, files);
  const server = createServer((conn) => serve(conn, w, stop));
  await listen(server, files);
  let stopped = false;
  function stop(code: number): void {
    if (stopped) return;
    stopped = true;
    // Only our own files: a newer daemon may have replaced them.
    if (readWatchInfo(files)?.instance === w.instance) rmSync(files.info, { force: true });
    server.close();
    rmSync(files.socket, { force: true });
    w.close();
    process.exit(code);
  }
  process.on("SIGTERM", () => stop(0));
  process.on("SIGINT", () => stop(0));
  try {
    w.start();
  } catch (e) {
    const hint = (e as NodeJS.ErrnoException).code === "ENOSPC" ? " (one inotify watch per directory: raise fs.inotify.max_user_watches)" : "";
    process.stderr.write(`cannot watch ${root}: ${(e as Error).message}${hint}\n`);
    stop(1);
    return;
  }
  const info: WatchInfo = { pid: process.pid, since: w.startedAt, root, instance: w.instance, socket: files.socket };
  writeFileAtomic(files.info, JSON.stringify(info) + "\n", { sync: false });
  process.stderr.write(`${new Date().toISOString()} watching ${root} (instance ${w.instance})\n`);
}

/** Listens on the socket; a socket left by a dead daemon is replaced, a live one means another daemon runs: this one leaves. */
async function listen(server: ReturnType<typeof createServer>, files: WatchFiles): Promise<void> {
  for (let attempt = 0; attempt < 2; attempt++) {
    const err = await new Promise<NodeJS.ErrnoException | null>((resolve) => {
      server.once("error", resolve);
      server.listen(files.socket, () => resolve(null));
    });
    if (!err) return;
    if (err.code !== "EADDRINUSE") throw err;
    const alive = await ask(files.socket, { op: "status" }, 1000).then(
      () => true,
      () => false,
    );
    if (alive) {
      process.stderr.write("another watcher already serves this root\n");
      process.exit(0);
    }
    rmSync(files.socket, { force: true });
  }
  throw new Error(`cannot listen on ${files.socket}`);
}

function serve(conn: Socket, w: Watcher, stop: (code: number) => void): void {
  let buf = "";
  conn.on("error", () => undefined);
  conn.on("data", (b: Buffer) => {
    buf += b.toString("utf8");
    const nl = buf.indexOf("\n");
    if (nl < 0) return;
    let req: WatchRequest;
    try {
      req = JSON.parse(buf.slice(0, nl)) as WatchRequest;
    } catch {
      conn.end(JSON.stringify({ error: "bad request" }) + "\n");
      return;
    }
    buf = "";
    const reply = (v: unknown) => conn.end(JSON.stringify(v) + "\n");
    if (req.op === "changes") {
      w.changes(req.since).then(reply, (e: unknown) => reply({ error: String(e) }));
    } else if (req.op === "status") {
      reply(w.status());
    } else if (req.op === "stop") {
      conn.end(JSON.stringify({ stopping: true }) + "\n", () => stop(0));
    } else reply({ error: "unknown op" });
  });
}
