import { findPlace } from "../store/discover.js";

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
  const place = findPlace(cwd, cwd);
  if (place !== "unusual") return { root: place.root, store: place.store, mode: place.mode, objectFormat: place.objectFormat };
  const { resolveContext } = await import("../store/context.js");
  const ctx = await resolveContext(undefined, cwd);
  return { root: ctx.root, store: ctx.store, mode: ctx.mode, objectFormat: ctx.objectFormat };
}
