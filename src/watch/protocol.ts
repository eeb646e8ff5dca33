import { storePath } from "../domain/store-layout.js";
import { createHash } from "node:crypto";
import { lstatSync, readFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";

// What the watcher daemon (src/watch/daemon.ts) and its clients share: where
// its files are, and the messages they exchange over its unix socket, one
// JSON document a line each way. docs/design.md, "The watcher", has the why.

/** The watcher's files for one root: all in `<store>/watch/`, named by a key of the root. */
export interface WatchFiles {
  dir: string;
  /** Written by the daemon once it watches everything, removed when it stops: `WatchInfo`. */
  info: string;
  socket: string;
  /** The daemon's stdout and stderr. */
  log: string;
  /** Where the daemon creates its cookie files (watched apart from the work tree). */
  cookies: string;
}

export interface WatchInfo {
  pid: number;
  /** ISO time the daemon began watching. */
  since: string;
  root: string;
  /** Random per daemon process: a token from another instance is never vouched for. */
  instance: string;
  socket: string;
}

/** What the snapshot code keeps between snapshots: "every change up to `seq` of daemon `instance` has been seen". */
export interface WatchToken {
  instance: string;
  seq: number;
}

export type WatchRequest = { op: "changes"; since: WatchToken | null } | { op: "status" } | { op: "stop" };

export interface ChangesAnswer {
  instance: string;
  /** The token to keep once this answer's changes are in a snapshot. */
  seq: number;
  /** False: the daemon cannot vouch for the period since the token given (`reason` says why): scan everything. */
  vouch: boolean;
  reason: string | null;
  /** Root-relative paths changed since the token (directories among them stand for everything below). */
  paths: string[];
}

export interface StatusAnswer {
  instance: string;
  pid: number;
  since: string;
  root: string;
  /** File system events seen since start. */
  events: number;
  /** Paths changed since the last token handed out: what the next snapshot will be told. */
  pending: number;
  /** Whether the next snapshot can be told what changed (false until one full scan took a token, or after trouble). */
  canVouch: boolean;
  /** While it cannot vouch, why (just started, an overflow, a watch error, the clock); else null. */
  trouble: string | null;
}

/** unix socket paths are limited to ~107 bytes: a deep store falls back to the temp dir, named by user and key. */
const SOCKET_MAX = 100;

export function rootKey(root: string): string {
  return createHash("sha256").update(root).digest("hex").slice(0, 16);
}

export function watchFiles(root: string, store: string): WatchFiles {
  const key = rootKey(root);
  const dir = storePath(store, "watch");
  let socket = join(dir, `${key}.sock`);
  if (Buffer.byteLength(socket) > SOCKET_MAX) socket = join(tmpdir(), `unwind-${process.getuid?.() ?? 0}-${key}.sock`);
  return { dir, info: join(dir, `${key}.json`), socket, log: join(dir, `${key}.log`), cookies: join(dir, `${key}.cookies`) };
}

export function readWatchInfo(files: WatchFiles): WatchInfo | null {
  try {
    const info = JSON.parse(readFileSync(files.info, "utf8")) as WatchInfo;
    return typeof info.pid === "number" && typeof info.instance === "string" ? info : null;
  } catch {
    return null;
  }
}

/** How long a snapshot waits for the daemon's answer (its cookie round trip included) before scanning everything. */
export const ASK_TIMEOUT_MS = 2000;

/**
 * One request and its answer. Rejects on any failure (no daemon, a socket
 * someone else owns, a timeout, a garbled answer): the caller then does
 * without the watcher. `node:net` is loaded only here, so code that never
 * meets a watcher never pays for it. The connection starts before this
 * returns.
 */
export function ask<T>(socket: string, req: WatchRequest, timeoutMs: number): Promise<T> {
  // A socket in the shared temp dir could be anyone's: only one of ours is believed.
  try {
    const st = lstatSync(socket);
    if (!st.isSocket() || (process.getuid && st.uid !== process.getuid())) throw new Error(`${socket} is not this user's watcher socket`);
  } catch (e) {
    return Promise.reject(e as Error);
  }
  // Synchronously: the early start of `unwind snapshot` connects before the CLI bundle loads, so the answer arrives meanwhile.
  const { connect } = process.getBuiltinModule("node:net") as typeof import("node:net");
  return new Promise<T>((resolve, reject) => {
    const conn = connect(socket);
    const chunks: Buffer[] = [];
    const timer = setTimeout(() => {
      conn.destroy();
      reject(new Error(`no answer from the watcher within ${timeoutMs} ms`));
    }, timeoutMs);
    const done = (e: Error | null, v?: T) => {
      clearTimeout(timer);
      conn.destroy();
      if (e) reject(e);
      else resolve(v as T);
    };
    conn.on("error", (e) => done(e));
    conn.on("data", (b: Buffer) => {
      chunks.push(b);
      if (!b.includes(10)) return;
      const text = Buffer.concat(chunks).toString("utf8");
      try {
        done(null, JSON.parse(text.slice(0, text.indexOf("\n"))) as T);
      } catch (e) {
        done(e as Error);
      }
    });
    conn.on("end", () => done(new Error("the watcher closed the connection without an answer")));
    conn.write(JSON.stringify(req) + "\n");
  });
}
