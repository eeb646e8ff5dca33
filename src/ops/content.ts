import { lstatSync } from "node:fs";
import { join } from "node:path";
import { keptKey, observeOne } from "../capture/observe.js";
import { ByteCache } from "../domain/byte-cache.js";
import { blobOid } from "../git/objects.js";
import { fsPath, inStore, rootPaths } from "../domain/paths.js";
import { UnwindError, usage } from "../domain/errors.js";
import type { GitOid, Sha256, State } from "../domain/types.js";
import type { Context } from "../repo/context.js";
import { BlobError, Cas } from "../store/cas.js";
import { ContentReader } from "../store/content.js";
import { recordStamp } from "../store/stamp.js";

/** Which recorded bytes to read: a state's `sha256` and/or `oid`, as the change sets and plans give them. */
export interface ContentRef {
  sha256?: string | null | undefined;
  oid?: string | null | undefined;
}

export interface ContentReport {
  size: number;
  sha256: string | null;
  oid: string | null;
  bytes: Buffer;
}

/**
 * The bytes of a recorded state (a pre or post of a change set, a plan's
 * item), for a client that shows them, e.g. as a diff. They come from the
 * store's CAS by SHA-256 or from git by oid, and are verified against every
 * hash given, exactly as undo reads them before writing: nothing is read
 * from the work tree or by path, so no path can reach outside the root.
 */
export async function content(ctx: Context, ref: ContentRef): Promise<ContentReport> {
  const [one] = await contents(ctx, [ref]);
  if (one instanceof UnwindError) throw one;
  return one!;
}

/**
 * The bytes of several recorded states, each as `content` reads it, or the
 * error `content` would throw for it: a page of diffs asks for dozens at
 * once, and the blobs git holds come in one batch rather than a process
 * each. A ref that is not hashes at all refuses the whole ask.
 */
export async function contents(ctx: Context, refs: readonly ContentRef[]): Promise<(ContentReport | UnwindError)[]> {
  const states = refs.map((ref) => stateOf(ctx, ref));
  const reader = new ContentReader(ctx, Cas.in(ctx.store));
  await reader.prefetch(states);
  const out: (ContentReport | UnwindError)[] = [];
  for (const s of states) {
    const sha = s.sha256 ?? null;
    const oid = s.oid ?? null;
    try {
      const bytes = await reader.read(s);
      out.push({ size: bytes.length, sha256: sha, oid, bytes });
    } catch (e) {
      if (!(e instanceof BlobError)) throw e;
      if (e.kind === "mismatch") out.push(new UnwindError("E_STORE_DAMAGED", `stored content ${sha ?? oid} fails its hash check`, { hint: "run unwind verify" }));
      else out.push(new UnwindError("E_SCOPE_UNKNOWN", `no stored content ${sha ?? oid}`, { hint: "only states a change set or plan names can be read" }));
    }
  }
  return out;
}

function stateOf(ctx: Context, ref: ContentRef): State {
  const sha = ref.sha256 ?? null;
  const oid = ref.oid ?? null;
  if (sha === null && oid === null) throw usage("content needs a sha256 or an oid", "take them from a change set's pre or post");
  if (sha !== null && !/^[0-9a-f]{64}$/.test(sha)) throw usage(`sha256 ${JSON.stringify(sha)}: expected 64 lowercase hex digits`);
  const oidLength = ctx.objectFormat === "sha256" ? 64 : 40;
  if (oid !== null && !new RegExp(`^[0-9a-f]{${oidLength}}$`).test(oid)) throw usage(`oid ${JSON.stringify(oid)}: expected ${oidLength} lowercase hex digits`);
  return { kind: "file", ...(sha ? { sha256: sha as Sha256 } : {}), ...(oid ? { oid: oid as GitOid } : {}) };
}

/** A fingerprint of the record that changes with every capture, snapshot, receipt or capture error (src/store/stamp.ts). */
export function stamp(ctx: Context): { stamp: string } {
  return { stamp: recordStamp(ctx) };
}

/** What a work tree path holds now, for a client that shows it beside a record (a conflict's "what changed since"). */
export interface CurrentReport {
  path: string;
  kind: "absent" | "file" | "symlink" | "dir" | "other" | "blocked" | "toolarge";
  size: number | null;
  sha256: string | null;
  /** The git blob id of those bytes as they are (no clean filter applied). */
  oid: string | null;
  /** A file's bytes, or a symlink's target; null for anything else, or a file over the size cap. */
  bytes: Buffer | null;
}

/** Files larger than this are described, not read: what is shown beside a record is at most a capture's size. */
const CURRENT_LIMIT = 8 * 1024 * 1024;

/**
 * The bytes a work tree path holds now, read as undo's planner reads it:
 * root-relative, never into .git or the store, and without following a
 * symlink anywhere (a symlinked parent is `blocked`, a link gives its target,
 * not what it points to). Reads only; nothing is recorded.
 */
export function current(ctx: Context, path: string): CurrentReport {
  const [rel, ...more] = rootPaths([path]);
  if (rel === undefined || more.length > 0) throw usage(`path '${path}' names the root, not a file`);
  if (inStore(ctx.root, ctx.store, rel)) throw usage(`path '${path}' is inside unwind's store`, "unwind never reads or writes its own store as work");
  let size: number | null = null;
  try {
    const st = lstatSync(fsPath(join(ctx.root, rel)));
    size = st.size;
    if (st.isFile() && st.size > CURRENT_LIMIT) return { path: rel, kind: "toolarge", size, sha256: null, oid: null, bytes: null };
  } catch {
    /* absent, or a parent is not a directory: observeOne says which */
  }
  const keep = new ByteCache(CURRENT_LIMIT + 1);
  const o = observeOne(ctx.root, rel, ctx.objectFormat, undefined, { keep });
  if (o.kind === "file") {
    const bytes = keep.get(keptKey(rel, o.sha256)) ?? null;
    return { path: rel, kind: "file", size: o.size, sha256: o.sha256, oid: bytes ? blobOid(bytes, ctx.objectFormat) : null, bytes };
  }
  if (o.kind === "symlink") return { path: rel, kind: "symlink", size: o.target.length, sha256: o.sha256, oid: o.oid ?? null, bytes: o.target };
  return { path: rel, kind: o.kind, size: o.kind === "dir" || o.kind === "other" ? size : null, sha256: null, oid: null, bytes: null };
}
