import { parseBatch } from "../git/git.js";
import type { Context } from "../repo/context.js";
import { BlobError, type Cas } from "./cas.js";
import { sha256 } from "../domain/hash.js";
import { blobOid } from "../git/objects.js";
import type { BlobStatus, GitOid, State } from "../domain/types.js";

/**
 * Reads back the bytes of recorded states: from the CAS by SHA-256 where the
 * record has it, else from git by oid. Every read is verified against the
 * recorded hash, so a tampered blob is a `hash-mismatch`, never written out.
 */
export class ContentReader {
  private gitCache = new Map<string, Buffer | BlobError>();

  constructor(
    private readonly ctx: Context,
    readonly cas: Cas,
  ) {}

  /** Loads git blobs in one `cat-file --batch` so a large restore is not one process per file. */
  async prefetch(states: readonly (State | null)[]): Promise<void> {
    const oids = new Set<string>();
    for (const s of states) {
      if (!s || (s.kind !== "file" && s.kind !== "symlink") || !s.oid) continue;
      if (s.sha256 && this.cas.has(s.sha256)) continue;
      if (!this.gitCache.has(s.oid)) oids.add(s.oid);
    }
    if (oids.size === 0) return;
    const list = [...oids];
    const r = await this.ctx.git(["cat-file", "--batch"], { input: list.join("\n") + "\n" });
    parseBatch(r.stdout, list.length).forEach((o, k) => {
      const oid = list[k]!;
      if (o?.type !== "blob") this.gitCache.set(oid, new BlobError("missing", oid));
      else this.gitCache.set(oid, blobOid(o.body, this.ctx.objectFormat) === oid ? Buffer.from(o.body) : new BlobError("mismatch", oid));
    });
  }

  async status(state: State): Promise<BlobStatus> {
    try {
      await this.read(state);
      return "ok";
    } catch (e) {
      if (e instanceof BlobError) return e.kind;
      throw e;
    }
  }

  /**
   * The bytes of a recorded state, verified: from the CAS when the record has
   * a SHA-256 and the blob is intact, else from git by oid, checked against
   * both the oid and (where recorded) the SHA-256.
   */
  async read(state: State): Promise<Buffer> {
    let casError: BlobError | null = null;
    if (state.sha256) {
      try {
        return this.cas.get(state.sha256);
      } catch (e) {
        if (!(e instanceof BlobError)) throw e;
        casError = e;
      }
    }
    if (state.oid) {
      await this.prefetch([{ ...state, sha256: undefined }]);
      const got = this.gitCache.get(state.oid);
      if (got instanceof Buffer) {
        if (state.sha256 && sha256(got) !== state.sha256) throw new BlobError("mismatch", state.sha256);
        return got;
      }
      // A damaged CAS blob is the stronger news: say mismatch, not missing.
      throw casError?.kind === "mismatch" ? casError : (got ?? new BlobError("missing", state.oid));
    }
    throw casError ?? new BlobError("missing", "(no hash recorded)");
  }

  oidOf(data: Buffer): GitOid {
    return blobOid(data, this.ctx.objectFormat);
  }
}
