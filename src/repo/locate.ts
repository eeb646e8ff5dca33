import type { Context } from "./context.js";
import { findPlace } from "./discover.js";

export interface Located {
  /** "private": a folder without git, its store in `<root>/.unwind`. */
  mode: "git" | "private";
  root: string;
  store: string;
  /** The repository's hash: states carry git oids so every report names content the same way. */
  objectFormat: "sha1" | "sha256";
  /** The full context, where finding the root already built one: a tree capture reuses it. */
  ctx?: Context;
}

/**
 * Root and store for a hook, found exactly as `resolveContext` finds them
 * (the same discovery), but without loading the git wrapper: a file edit's
 * hook never spawns git. Only a layout that needs git's own judgement pays
 * for `git rev-parse`.
 */
export async function locate(cwd: string): Promise<Located> {
  const place = findPlace(cwd, cwd);
  if (place !== "unusual") return { mode: place.mode, root: place.root, store: place.store, objectFormat: place.objectFormat };
  const { resolveContext } = await import("./context.js");
  const ctx = await resolveContext(undefined, cwd);
  return { mode: ctx.mode, root: ctx.root, store: ctx.store, objectFormat: ctx.objectFormat, ctx };
}
