import { closeSync, openSync, readFileSync, unlinkSync, writeSync, mkdirSync } from "node:fs";
import { hostname } from "node:os";
import { join } from "node:path";
import { UnwindError } from "../errors.js";

export interface LockOwner {
  pid: number;
  host: string;
  at: string;
  what: string;
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (e) {
    return (e as NodeJS.ErrnoException).code === "EPERM";
  }
}

function readOwner(path: string): LockOwner | null {
  try {
    return JSON.parse(readFileSync(path, "utf8")) as LockOwner;
  } catch {
    return null;
  }
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/**
 * The store lock: capture, undo and gc never race. An O_EXCL file holding
 * the owner's pid; a lock whose owner died on this host is taken over (a
 * SIGKILLed apply must not wedge the store; its intent record is recovered
 * under the new holder).
 */
export async function withLock<T>(
  store: string,
  what: string,
  fn: () => Promise<T>,
  opts: { timeoutMs?: number } = {},
): Promise<T> {
  const envTimeout = Number(process.env.UNWIND_LOCK_TIMEOUT_MS);
  const timeout = opts.timeoutMs ?? (Number.isFinite(envTimeout) && envTimeout > 0 ? envTimeout : 30_000);
  const release = await acquire(store, what, timeout);
  try {
    return await fn();
  } finally {
    release();
  }
}

export async function acquire(store: string, what: string, timeoutMs: number): Promise<() => void> {
  mkdirSync(store, { recursive: true });
  const path = join(store, "lock");
  const me: LockOwner = { pid: process.pid, host: hostname(), at: new Date().toISOString(), what };
  const deadline = Date.now() + timeoutMs;
  let delay = 5;
  for (;;) {
    try {
      const fd = openSync(path, "wx", 0o644);
      writeSync(fd, JSON.stringify(me));
      closeSync(fd);
      return () => {
        const owner = readOwner(path);
        if (owner && owner.pid === process.pid) unlinkSync(path);
      };
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code !== "EEXIST") throw e;
    }
    const owner = readOwner(path);
    if (owner && owner.host === me.host && !alive(owner.pid)) {
      // Stale: re-read right before removing so we never remove a lock another process just took.
      const again = readOwner(path);
      if (again && again.pid === owner.pid && again.at === owner.at) {
        try {
          unlinkSync(path);
        } catch {
          /* someone else cleared it */
        }
        continue;
      }
    }
    if (Date.now() >= deadline) {
      throw new UnwindError("E_LOCKED", `the store is locked by ${owner ? `pid ${owner.pid} (${owner.what})` : "another process"}`, {
        hint: "wait for it to finish, then run the command again",
      });
    }
    await sleep(delay);
    delay = Math.min(delay * 2, 100);
  }
}
