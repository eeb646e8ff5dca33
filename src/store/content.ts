import { existsSync } from "node:fs";
import { join } from "node:path";
import { parseBatch } from "../git/git.js";
import type { Context } from "../repo/context.js";
import { BlobError, type Cas } from "./cas.js";
import { sha256 } from "../domain/hash.js";
import { blobOid, looseHeader, readLooseObject } from "../git/objects.js";
import { ByteCache, REUSE_BUDGET, REUSE_MAX_ITEM, REUSE_PER_ENTRY } from "../domain/byte-cache.js";
import type { BlobStatus, GitOid, State } from "../domain/types.js";

/** At most this many objects to one `cat-file --batch`, whatever their size. */
const BATCH_COUNT = 10_000;
/** Objects tried loose first; if none of these is loose, the rest go to git unasked (`looseFirst`). */
const LOOSE_PROBE = 32;

/**
 * Reads back the bytes of recorded states: from the CAS by SHA-256 where the
 * record has it, else from git by oid. Every read is verified against the
 * recorded hash, so a tampered blob is a `hash-mismatch`, never written out.
 *
 * Bytes read are kept in `cache` up to its budget, so a plan's check of a
 * blob and its apply's write read it once; git blobs come in batches of
 * about half the budget (one `cat-file --batch` each, for what is not a
 * loose object this process reads itself), so a large restore is neither
 * one process per file nor every blob in memory at once.
 */
export class ContentReader {
  /** Git oids wanted soon, in the order they will be read, with their sizes where recorded. */
  private queue: { oid: string; size: number }[] = [];
  /** The same entries by oid: what was queued, and the size learnt for it. */
  private queued = new Map<string, { oid: string; size: number }>();
  /** Git objects found missing or failing their oid: small, and kept whatever the budget. */
  private gitErrors = new Map<string, BlobError>();
  /** The bytes each fetch read (loose objects, and git's answer for the rest), in order: what the budget bounds. */
  readonly batches: number[] = [];

  constructor(
    private readonly ctx: Context,
    readonly cas: Cas,
    readonly cache = new ByteCache(REUSE_BUDGET, REUSE_MAX_ITEM, REUSE_PER_ENTRY),
  ) {}

  /**
   * Says which git blobs will be read, in order, so they are fetched in
   * batches rather than one process each. Sizes a state does not record (a
   * snapshot tree's entries have none) are asked of git without the bytes,
   * so no batch is larger than it was meant to be.
   */
  async prefetch(states: readonly (State | null)[]): Promise<void> {
    const unsized: { oid: string; size: number }[] = [];
    for (const s of states) {
      if (!s || (s.kind !== "file" && s.kind !== "symlink") || !s.oid) continue;
      // Asked before the CAS (a stat each): a second prefetch of the same states costs nothing.
      if (this.queued.has(s.oid) || this.cache.has(gitKey(s.oid))) continue;
      if (s.sha256 && this.cas.has(s.sha256)) continue;
      const q = { oid: s.oid, size: s.size ?? -1 };
      this.queued.set(s.oid, q);
      this.queue.push(q);
      if (q.size < 0) unsized.push(q);
    }
    if (unsized.length === 0) return;
    // "<oid> <type> <size>", or "<oid> missing": a missing one reads as an error when asked for, alone.
    await this.batchCheck(unsized, (q, line) => {
      q.size = Number(/^\S+ \S+ (\d+)$/.exec(line)?.[1] ?? 0);
    });
  }

  /**
   * `git cat-file --batch-check` of each item's oid: `each` gets the item
   * and its line. The oids go in, and the lines come out, one at a time: as
   * one text and its split, 100,000 of them were 20 MB held at once, at the
   * top of a 100,000-path undo's memory.
   */
  private async batchCheck<T extends { oid?: string | undefined }>(items: readonly T[], each: (item: T, line: string) => void): Promise<void> {
    const input = Buffer.allocUnsafe(items.reduce((n, i) => n + i.oid!.length + 1, 0));
    let at = 0;
    for (const i of items) {
      at += input.write(i.oid!, at, "latin1");
      input[at++] = 10;
    }
    const r = await this.ctx.git(["cat-file", "--batch-check", "--buffer"], { input: input.subarray(0, at) });
    let start = 0;
    for (const i of items) {
      const nl = r.stdout.indexOf(10, start);
      each(i, r.stdout.toString("latin1", start, nl < 0 ? r.stdout.length : nl));
      start = nl < 0 ? r.stdout.length : nl + 1;
    }
  }

  /**
   * The oids among `states` that this repository's own object store holds as
   * blobs of the recorded size (loose ones read here, the rest with one
   * `cat-file --batch-check`). None when the store borrows objects from
   * another (`objects/info/alternates`): those can be pruned by a repository
   * unwind does not look after.
   */
  async heldByGit(states: readonly State[]): Promise<Set<GitOid>> {
    const held = new Set<GitOid>();
    const wanted = states.filter((s) => s.oid && s.size !== undefined);
    if (wanted.length === 0 || existsSync(join(this.ctx.commonDir, "objects", "info", "alternates"))) return held;
    const objects = join(this.ctx.commonDir, "objects");
    const rest = looseFirst(wanted, (s) => {
      const h = looseHeader(objects, s.oid!);
      if (h?.type === "blob" && h.size === s.size) held.add(s.oid!);
      return h !== null;
    });
    if (rest.length === 0) return held;
    await this.batchCheck(rest, (s, line) => {
      if (line === `${s.oid} blob ${s.size}`) held.add(s.oid!);
    });
    return held;
  }

  /** A git blob's size as far as this reader knows it (prefetched, or read), without asking git. */
  sizeOf(oid: string): number | undefined {
    const q = this.queued.get(oid)?.size;
    return q !== undefined && q >= 0 ? q : this.cache.get(gitKey(oid))?.length;
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
    // Bytes already fetched from git (checked against the oid) are not looked for in the CAS first: a restore's
    // states name both hashes once planned, and most such blobs live only in git.
    const fetched = state.oid ? this.cache.get(gitKey(state.oid)) : undefined;
    if (fetched && (!state.sha256 || sha256(fetched) === state.sha256)) return fetched;
    if (state.sha256) {
      const kept = this.cache.get(casKey(state.sha256));
      if (kept) return kept;
      try {
        const data = this.cas.get(state.sha256);
        this.cache.set(casKey(state.sha256), data);
        return data;
      } catch (e) {
        if (!(e instanceof BlobError)) throw e;
        casError = e;
      }
    }
    if (state.oid) {
      let got: Buffer | BlobError | undefined = this.cache.get(gitKey(state.oid)) ?? this.gitErrors.get(state.oid);
      if (got === undefined) got = await this.fetch(state.oid, state.size);
      if (got instanceof Buffer) return checkedSha(got, state);
      // A damaged CAS blob is the stronger news: say mismatch, not missing.
      throw casError?.kind === "mismatch" ? casError : got;
    }
    throw casError ?? new BlobError("missing", "(no hash recorded)");
  }

  /**
   * Fetches `oid`, and with it the queued blobs after it that the cache
   * would keep, up to half the budget; returns its bytes (kept or not). A
   * blob too large to keep comes alone: fetched with others, it would only
   * be dropped and fetched again.
   */
  private async fetch(oid: string, recorded: number | undefined): Promise<Buffer | BlobError> {
    const at = this.queue.findIndex((q) => q.oid === oid);
    const size = at >= 0 ? this.queue[at]!.size : (recorded ?? -1);
    const list = [oid];
    let bytes = Math.max(size, 0);
    const keeps = (n: number) => n >= 0 && n <= this.cache.maxItem;
    let next = keeps(size) ? at + 1 : 0;
    while (next > 0 && next < this.queue.length && list.length < BATCH_COUNT) {
      const q = this.queue[next++]!;
      if (!keeps(q.size) || bytes + q.size > this.cache.budget / 2) break;
      if (q.oid === oid || this.cache.has(gitKey(q.oid)) || this.gitErrors.has(q.oid)) continue;
      list.push(q.oid);
      bytes += q.size;
    }
    let wanted: Buffer | BlobError = new BlobError("missing", oid);
    const settle = (id: string, got: Buffer | BlobError) => {
      if (got instanceof BlobError) this.gitErrors.set(id, got);
      else this.cache.set(gitKey(id), got);
      if (id === oid) wanted = got;
    };
    // Loose objects are read here, verified against their oid; the rest (packed, in an alternate, a
    // loose one that fails its oid) are git's to find or to report.
    const objects = join(this.ctx.commonDir, "objects");
    let read = 0;
    const viaGit = looseFirst(list, (id) => {
      const body = readLooseObject(objects, id, "blob");
      if (!body || blobOid(body, this.ctx.objectFormat) !== id) return false;
      read += body.length;
      settle(id, kept(body, this.cache.maxItem));
      return true;
    });
    if (viaGit.length > 0) {
      const r = await this.ctx.git(["cat-file", "--batch", "--buffer"], { input: viaGit.join("\n") + "\n", spool: true });
      read += r.stdout.length;
      parseBatch(r.stdout, viaGit.length).forEach((o, k) => {
        const id = viaGit[k]!;
        if (o?.type !== "blob") settle(id, new BlobError("missing", id));
        else if (blobOid(o.body, this.ctx.objectFormat) !== id) settle(id, new BlobError("mismatch", id));
        else settle(id, kept(o.body, this.cache.maxItem));
      });
    }
    this.batches.push(read);
    return wanted;
  }

  oidOf(data: Buffer): GitOid {
    return blobOid(data, this.ctx.objectFormat);
  }
}

/**
 * Hands each of `items` to `loose`, which answers it from a loose object
 * in-process (true) or cannot (false); returns those it could not, for git.
 * Once the first LOOSE_PROBE are all packed, the rest most likely are too:
 * they go to git without a failed open each.
 */
function looseFirst<T>(items: readonly T[], loose: (item: T) => boolean): T[] {
  const rest: T[] = [];
  let found = 0;
  for (const [k, item] of items.entries()) {
    if ((found > 0 || k < LOOSE_PROBE) && loose(item)) found++;
    else rest.push(item);
  }
  return rest;
}

/** A blob kept gets its own bytes (a view would hold a whole batch, or zlib's output chunk); one too large to keep is used once. */
const kept = (body: Buffer, maxItem: number): Buffer => (body.length <= maxItem ? Buffer.from(body) : body);

/** Bytes from git, checked against the SHA-256 the state records (git checked the oid). */
function checkedSha(data: Buffer, state: State): Buffer {
  if (state.sha256 && sha256(data) !== state.sha256) throw new BlobError("mismatch", state.sha256);
  return data;
}

const casKey = (sha: string) => `cas\0${sha}`;
const gitKey = (oid: string) => `git\0${oid}`;
