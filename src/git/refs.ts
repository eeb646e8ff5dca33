import { closeSync, existsSync, lstatSync, mkdirSync, openSync, renameSync, statSync, unlinkSync, writeSync } from "node:fs";
import { dirname, join } from "node:path";

/**
 * Creates the ref `name`, a fresh name nothing has used (a snapshot id: a
 * millisecond time and 32 random bits), pointing at `oid`.
 *
 * With git's files backend the ref is written as git writes it, which spares
 * a git process per snapshot (~13 ms): `<ref>.lock` taken exclusively (git
 * and every other writer of that ref must hold it too), the ref checked
 * absent while holding it, then the lock renamed into place. A kill leaves
 * at most the lock, as a killed git would. Anything unusual (a reftable
 * repository, a lock someone else holds, a ref or file in the way) goes to
 * `git update-ref <name> <oid> ""`, which decides and words the error.
 * packed-refs is not read (it can be large): a fresh name is not in it.
 */
export async function createRef(repo: { commonDir: string; git(args: string[]): Promise<unknown> }, name: string, oid: string): Promise<void> {
  if (!existsSync(join(repo.commonDir, "reftable")) && writeLooseRef(repo.commonDir, name, oid)) return;
  await repo.git(["update-ref", "--no-deref", name, oid, ""]);
}

function writeLooseRef(gitDir: string, name: string, oid: string): boolean {
  const path = join(gitDir, name);
  const lock = `${path}.lock`;
  let fd: number;
  try {
    // Directories as open as the git dir, as git makes them under core.sharedRepository: a store's private git dir (0700) stays private.
    mkdirSync(dirname(path), { recursive: true, mode: statSync(gitDir).mode & 0o777 });
    fd = openSync(lock, "wx", 0o666);
  } catch {
    return false; // a file in the way, or someone holds the lock
  }
  let done = false;
  try {
    try {
      writeSync(fd, `${oid}\n`);
    } finally {
      closeSync(fd);
    }
    if (lstatSync(path, { throwIfNoEntry: false })) return false; // it exists: git refuses it below
    renameSync(lock, path);
    done = true;
    return true;
  } catch {
    return false;
  } finally {
    if (!done) {
      try {
        unlinkSync(lock);
      } catch {
        /* already gone */
      }
    }
  }
}
