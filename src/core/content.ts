import type { Context } from "../store/context.js";
import { BlobError, Cas } from "../store/cas.js";
import { blobOid } from "./observe.js";
import type { BlobStatus, GitOid, State } from "./types.js";

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
    const buf = r.stdout;
    let pos = 0;
    for (const oid of list) {
      const nl = buf.indexOf(10, pos);
      const header = buf.subarray(pos, nl).toString("utf8");
      pos = nl + 1;
      const m = /^(\S+) (\S+) (\d+)$/.exec(header);
      if (!m) {
        this.gitCache.set(oid, new BlobError("missing", oid)); // "<oid> missing": no content follows
        continue;
      }
      const size = Number(m[3]);
      const data = buf.subarray(pos, pos + size);
      pos += size + 1;
      if (m[2] !== "blob") {
        this.gitCache.set(oid, new BlobError("missing", oid));
        continue;
      }
      this.gitCache.set(oid, blobOid(data, this.ctx.objectFormat) === oid ? Buffer.from(data) : new BlobError("mismatch", oid));
    }
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

  async read(state: State): Promise<Buffer> {
    if (state.sha256 && (this.cas.has(state.sha256) || !state.oid)) return this.cas.get(state.sha256);
    if (state.oid) {
      await this.prefetch([state]);
      const got = this.gitCache.get(state.oid);
      if (got instanceof Buffer) return got;
      throw got ?? new BlobError("missing", state.oid);
    }
    throw new BlobError("missing", "(no hash recorded)");
  }

  oidOf(data: Buffer): GitOid {
    return blobOid(data, this.ctx.objectFormat);
  }
}
