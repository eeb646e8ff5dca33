import { join } from "node:path";
import { UnwindError, usage } from "../domain/errors.js";
import type { GitOid, Sha256 } from "../domain/types.js";
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
  const sha = ref.sha256 ?? null;
  const oid = ref.oid ?? null;
  if (sha === null && oid === null) throw usage("content needs a sha256 or an oid", "take them from a change set's pre or post");
  if (sha !== null && !/^[0-9a-f]{64}$/.test(sha)) throw usage(`sha256 ${JSON.stringify(sha)}: expected 64 lowercase hex digits`);
  const oidLength = ctx.objectFormat === "sha256" ? 64 : 40;
  if (oid !== null && !new RegExp(`^[0-9a-f]{${oidLength}}$`).test(oid)) throw usage(`oid ${JSON.stringify(oid)}: expected ${oidLength} lowercase hex digits`);
  const reader = new ContentReader(ctx, new Cas(join(ctx.store, "cas")));
  try {
    const bytes = await reader.read({ kind: "file", ...(sha ? { sha256: sha as Sha256 } : {}), ...(oid ? { oid: oid as GitOid } : {}) });
    return { size: bytes.length, sha256: sha, oid, bytes };
  } catch (e) {
    if (!(e instanceof BlobError)) throw e;
    if (e.kind === "mismatch") throw new UnwindError("E_STORE_DAMAGED", `stored content ${sha ?? oid} fails its hash check`, { hint: "run unwind verify" });
    throw new UnwindError("E_SCOPE_UNKNOWN", `no stored content ${sha ?? oid}`, { hint: "only states a change set or plan names can be read" });
  }
}

/** A fingerprint of the record that changes with every capture, snapshot, receipt or capture error (src/store/stamp.ts). */
export function stamp(ctx: Context): { stamp: string } {
  return { stamp: recordStamp(ctx) };
}
