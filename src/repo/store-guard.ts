import { storePath } from "../domain/store-layout.js";
import { chmodSync, lstatSync, readdirSync, readFileSync, readlinkSync, type Stats } from "node:fs";
import { join } from "node:path";
import { UnwindError } from "../domain/errors.js";
import { STORE_FORMAT } from "../domain/version.js";

/** Group and other may neither read, write nor enter a directory of the store. */
const OPEN_TO_OTHERS = 0o077;
const WRITABLE_BY_OTHERS = 0o022;

/**
 * The store holds bytes git never stores (an ignored `.env` a file tool
 * wrote), so it is private to its user (SPEC section 2). Checked wherever a
 * command or a hook finds its store, by one lstat: a store that is a
 * symlink would send every byte wherever the link points; one owned by
 * another user, or one others can write, may hold records or links they
 * planted, and is refused rather than trusted. The store path is used as
 * found, never resolved: `<git-common-dir>/unwind` and `<root>/.unwind` are
 * not followed, and UNWIND_STORE was resolved when it was read (the person
 * named it, links and all), so what is checked is the directory it leads to.
 * A store missing yet passes: each directory of it is made 0700.
 *
 * A store from before this rule (directories 0755, by the umask) is made
 * private here, on first use, by any command or hook. Its top directory is
 * chmodded last, so the top's mode alone says whether that was done: every
 * later call costs the lstat, never a walk. Files keep their modes (content
 * 0444): no other user can reach them through a 0700 directory.
 */
export function guardStore(store: string): void {
  const st = lstatSync(store, { throwIfNoEntry: false });
  if (!st) return;
  const refuse = (what: string, hint: string) => new UnwindError("E_STORE_UNSAFE", `the store ${store} ${what}; nothing was read or written`, { hint });
  if (st.isSymbolicLink()) {
    throw refuse(`is a symlink (to ${linkTarget(store)}): unwind does not follow it`, "remove the link (what it points to is left alone), or name a directory of your own in UNWIND_STORE");
  }
  if (!st.isDirectory()) throw refuse("is not a directory", "move it aside: unwind makes a new store on its next capture");
  const uid = process.getuid?.();
  if (uid !== undefined && st.uid !== uid) throw refuse(`belongs to another user (uid ${st.uid})`, "run unwind as the user who owns it, or move it aside");
  if ((st.mode & WRITABLE_BY_OTHERS) !== 0) {
    throw refuse(`can be written by other users (mode ${octal(st)})`, `if no one else could have written there, make it private (chmod -R go-rwx ${store}); else move it aside`);
  }
  if ((st.mode & OPEN_TO_OTHERS) !== 0) makePrivate(store, st);
  checkFormat(store);
}

/** A store this unwind must not read: its format is newer, or its VERSION says nothing readable. The hook logs it there. */
export class StoreFormatError extends UnwindError {
  readonly store: string;
  constructor(store: string, code: "E_STORE_NEWER" | "E_STORE_DAMAGED", message: string, hint?: string) {
    super(code, message, hint === undefined ? {} : { hint });
    this.store = store;
  }
}

/**
 * Refuses a store whose VERSION names a format newer than this unwind's:
 * read by today's rules, a later format's records could be misread, and
 * an undo planned from a misread record writes the wrong bytes. One read of
 * a tiny file, by every command and hook. A store without VERSION, or with
 * an empty one, is format 1: hooks append to a store before any command
 * has written VERSION, and only this version's own non-atomic write (before
 * VERSION was written atomically) could leave it empty.
 */
export function checkFormat(store: string): void {
  let text: string;
  try {
    text = readFileSync(storePath(store, "VERSION"), "utf8").trim();
  } catch (e) {
    const code = (e as NodeJS.ErrnoException).code;
    if (code === "ENOENT" || code === "ENOTDIR") return;
    throw e;
  }
  if (text === "" || text === String(STORE_FORMAT)) return;
  if (/^[1-9][0-9]{0,8}$/.test(text) && Number(text) > STORE_FORMAT) {
    throw new StoreFormatError(store, "E_STORE_NEWER", `the store is format ${text}, newer than this unwind reads (${STORE_FORMAT}): upgrade unwind`);
  }
  throw new StoreFormatError(store, "E_STORE_DAMAGED", `the store's VERSION reads '${text.slice(0, 20)}', not a format unwind knows`, "run unwind verify");
}

/**
 * Takes group and other permissions off every directory of the store, the
 * top one last. Symlinks inside are not followed (readdir's types are
 * lstat's). One that cannot be changed (another user's directory in it) is
 * a refusal: the store stays as it was and says so every time.
 */
function makePrivate(store: string, top: Stats): void {
  try {
    const walk = (dir: string) => {
      for (const e of readdirSync(dir, { withFileTypes: true })) {
        if (!e.isDirectory()) continue;
        const p = join(dir, e.name);
        walk(p);
        const st = lstatSync(p);
        if ((st.mode & OPEN_TO_OTHERS) !== 0) chmodSync(p, st.mode & 0o7777 & ~OPEN_TO_OTHERS);
      }
    };
    walk(store);
    chmodSync(store, top.mode & 0o7777 & ~OPEN_TO_OTHERS);
  } catch (e) {
    throw new UnwindError("E_STORE_UNSAFE", `the store ${store} is open to other users and could not be made private: ${(e as Error).message}`, {
      hint: `make it private (chmod -R go-rwx ${store}), or move it aside`,
    });
  }
}

function linkTarget(p: string): string {
  try {
    return readlinkSync(p);
  } catch {
    return "?";
  }
}

const octal = (st: Stats) => `0${(st.mode & 0o777).toString(8)}`;
