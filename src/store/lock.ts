import { storePath } from "../domain/store-layout.js";
import { linkSync, readFileSync, renameSync, statSync, unlinkSync, writeFileSync } from "node:fs";
import { randomBytes } from "node:crypto";
import { hostname } from "node:os";
import { UnwindError } from "../domain/errors.js";
import { mkdirPrivate } from "../sys/files.js";

export interface LockOwner {
  pid: number;
  /** The process's start time (Linux /proc), so a recycled pid is not mistaken for the owner. */
  start: string | null;
  host: string;
  at: string;
  what: string;
}

function startTimeOf(pid: number): string | null {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
    // Field 22, counted after the command name, which may itself hold spaces and parentheses.
    return stat.slice(stat.lastIndexOf(")") + 2).split(" ")[19] ?? null;
  } catch {
    return null;
  }
}

/** This process's start time, read once: every retry of `tryLock` names the same owner. */
let myStart: string | null | undefined;

function alive(owner: LockOwner): boolean {
  try {
    process.kill(owner.pid, 0);
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code !== "EPERM") return false;
  }
  if (!owner.start) return true;
  const start = startTimeOf(owner.pid);
  return start === null || start === owner.start;
}

function readOwner(path: string): { owner: LockOwner | null; raw: string } | null {
  try {
    const raw = readFileSync(path, "utf8");
    try {
      return { owner: JSON.parse(raw) as LockOwner, raw };
    } catch {
      return { owner: null, raw };
    }
  } catch {
    return null;
  }
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/**
 * The store lock: capture, undo and gc never race. The lock file appears
 * with its content in one step (written aside, then hard-linked into place),
 * so it always names its owner. A lock whose owner died on this host is
 * taken over: it is renamed aside and removed only if it is still the one
 * seen dead, so a live process's fresh lock is never removed. A SIGKILLed
 * apply must not wedge the store; its intent record is recovered under the
 * next holder.
 */
export async function withLock<T>(store: string, what: string, fn: () => Promise<T>, opts: { timeoutMs?: number } = {}): Promise<T> {
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
  const deadline = Date.now() + timeoutMs;
  let delay = 5;
  for (;;) {
    const got = tryLock(store, what);
    if ("release" in got) return got.release;
    if (Date.now() >= deadline) {
      const o = got.holder;
      throw new UnwindError("E_LOCKED", `the store is locked by ${o ? `pid ${o.pid} (${o.what})` : "another process"}`, {
        hint: "wait for it to finish, then run the command again",
      });
    }
    await sleep(delay);
    delay = Math.min(delay * 2, 100);
  }
}

/**
 * One synchronous try at the lock, breaking it first if its holder is dead:
 * its release, or who holds it.
 */
export function tryLock(store: string, what: string): { release: () => void } | { holder: LockOwner | null } {
  mkdirPrivate(store);
  const path = storePath(store, "lock");
  myStart ??= startTimeOf(process.pid);
  const me: LockOwner = { pid: process.pid, start: myStart, host: hostname(), at: new Date().toISOString(), what };
  const mine = JSON.stringify(me);
  const aside = `${path}.${process.pid}.${randomBytes(4).toString("hex")}`;
  writeFileSync(aside, mine);
  try {
    for (;;) {
      try {
        linkSync(aside, path);
        return {
          release: () => {
            if (readOwner(path)?.raw === mine) unlinkSync(path);
          },
        };
      } catch (e) {
        if ((e as NodeJS.ErrnoException).code !== "EEXIST") throw e;
      }
      const seen = readOwner(path);
      if (seen && isStale(seen, path, me.host)) {
        breakStale(path, seen.raw);
        continue;
      }
      return { holder: seen?.owner ?? null };
    }
  } finally {
    try {
      unlinkSync(aside);
    } catch {
      /* already gone */
    }
  }
}

function isStale(seen: { owner: LockOwner | null; raw: string }, path: string, host: string): boolean {
  if (seen.owner) return seen.owner.host === host && !alive(seen.owner);
  // Unreadable content (an older unwind's torn lock): stale once it is clearly not being written.
  try {
    return Date.now() - statSync(path).mtimeMs > 10_000;
  } catch {
    return false;
  }
}

/** Moves the lock aside, then removes it only if it is still the stale one we judged. */
function breakStale(path: string, staleRaw: string): void {
  const moved = `${path}.stale.${randomBytes(4).toString("hex")}`;
  try {
    renameSync(path, moved);
  } catch {
    return; // someone else moved it first
  }
  if (readOwner(moved)?.raw === staleRaw) {
    unlinkSync(moved);
    return;
  }
  // We moved a lock someone took in the meantime: put it back.
  try {
    linkSync(moved, path);
  } catch {
    /* a third process holds the lock now; the moved one's owner will find its lock gone on release */
  }
  unlinkSync(moved);
}
