import { join } from "node:path";
import { commitBody, writeLooseObject } from "../git/objects.js";
import { createRef } from "../git/refs.js";
import type { Context } from "../repo/context.js";

/**
 * `refs/unwind/kept/<receipt>`: a commit of one flat tree naming every blob
 * a receipt brings back from git rather than from the CAS (src/apply/apply.ts
 * `keepAll`). Those blobs were written by snapshots or by the tree an apply
 * writes first, and nothing else promises to keep them reachable for as long
 * as the receipt lives: this ref does, until gc drops the receipt.
 */
export const KEPT_REFS = "refs/unwind/kept/";

/** Writes the ref for `receipt` naming `oids` (written in-process: a tree, a commit, the ref file). */
export async function keepInGit(ctx: Context, receipt: string, oids: ReadonlySet<string>): Promise<void> {
  const objects = join(ctx.commonDir, "objects");
  const unique = [...oids];
  const width = String(unique.length).length;
  // Names of one width sort as git sorts a tree's entries; the names mean nothing, the oids are the point.
  // One buffer, filled in place: two small buffers an entry were 200,000 objects of garbage for a 100,000-path undo.
  const raw = (unique[0]?.length ?? 40) / 2;
  const step = 7 + width + 1 + raw;
  const entries = Buffer.alloc(unique.length * step);
  unique.forEach((oid, k) => {
    const at = k * step;
    entries.write(`100644 ${String(k).padStart(width, "0")}\0`, at, "latin1");
    entries.write(oid, at + step - raw, "hex");
  });
  const tree = writeLooseObject(objects, "tree", entries, ctx.objectFormat);
  const body = commitBody(tree, "unwind <unwind@localhost>", Math.floor(Date.now() / 1000), `${JSON.stringify({ v: 1, kept: receipt })}\n`);
  await createRef(ctx, `${KEPT_REFS}${receipt}`, writeLooseObject(objects, "commit", body, ctx.objectFormat));
}

/** The receipt ids that have a kept ref, with the commit each points at. */
export async function keptRefs(ctx: Context): Promise<Map<string, string>> {
  const r = await ctx.git(["for-each-ref", "--format=%(objectname) %(refname)", KEPT_REFS]);
  const out = new Map<string, string>();
  for (const line of r.stdout.toString("utf8").split("\n")) {
    const [oid, ref] = line.split(" ");
    if (oid && ref) out.set(ref.slice(KEPT_REFS.length), oid);
  }
  return out;
}

/** Deletes the kept refs of `ids` (compare-and-swap: a ref that moved is left alone). */
export async function dropKept(ctx: Context, refs: ReadonlyMap<string, string>, ids: Iterable<string>): Promise<number> {
  const lines = [...ids].filter((id) => refs.has(id)).map((id) => `delete ${KEPT_REFS}${id} ${refs.get(id)}\n`);
  if (lines.length > 0) await ctx.git(["update-ref", "--stdin"], { input: lines.join("") });
  return lines.length;
}
