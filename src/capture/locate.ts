import { join, resolve } from "node:path";
import { discoverRepo, privateRootOf, realpathLoose } from "../store/discover.js";

export interface Located {
  root: string;
  store: string;
  mode: "git" | "private";
  /** The repository's hash: states carry git oids so every report names content the same way. */
  objectFormat: "sha1" | "sha256";
}

/**
 * Root and store for a hook, found exactly as `resolveContext` finds them
 * (the same discovery), but without loading the git wrapper: a file edit's
 * hook never spawns git. Only a layout that needs git's own judgement pays
 * for `git rev-parse`.
 */
export async function locate(cwd: string): Promise<Located> {
  const envStore = process.env.UNWIND_STORE ? realpathLoose(resolve(cwd, process.env.UNWIND_STORE)) : null;
  const found = discoverRepo(cwd);
  if (found === null) {
    const root = privateRootOf(cwd, ".unwind");
    return { root, store: envStore ?? join(root, ".unwind"), mode: "private", objectFormat: "sha1" };
  }
  if (found !== "unusual") return { root: found.root, store: envStore ?? join(found.commonDir, "unwind"), mode: "git", objectFormat: found.objectFormat };
  const { resolveContext } = await import("../store/context.js");
  const ctx = await resolveContext(undefined, cwd);
  return { root: ctx.root, store: ctx.store, mode: ctx.mode, objectFormat: ctx.objectFormat };
}
