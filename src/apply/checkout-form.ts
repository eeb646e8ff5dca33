import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { storedAsIs } from "../capture/conversion.js";
import { batchEnd } from "../domain/batch.js";
import { encodePath, fsPath } from "../domain/path-bytes.js";
import { GitError } from "../git/git.js";
import type { Context } from "../repo/context.js";
import type { ContentReader } from "../store/content.js";
import type { RepoPath, State } from "../domain/types.js";

/** Paths checked out at once, at most, and the clean bytes they may add up to (a larger one goes alone): what the scratch directory holds. */
const CHUNK_COUNT = 1000;
const CHUNK_BYTES = 64 * 1024 * 1024;

/**
 * What `git checkout` would write for each restored state an older
 * snapshot recorded in git's clean form (`State.clean`: taken before
 * snapshots held bytes as on disk, src/capture/disk-form.ts): the blob with
 * its path's smudge applied (`eol=crlf`, `core.autocrlf`, a filter's
 * smudge, `ident`, `working-tree-encoding`). Writing the clean form back
 * would turn a `.bat` file's CRLF lines into LF and an LFS file into its
 * pointer. Where the file held bytes git's own checkout would not give back
 * (CRLF lines under `text` with no `eol`), that record never had them; the
 * records made since have.
 *
 * git checks the blobs out itself, into a scratch directory through a
 * scratch index (`checkout-index`): `cat-file --batch --filters` would do
 * it in one stream, but git 2.39 heads each filtered object with its
 * unfiltered size, so the stream cannot be split.
 *
 * Returns, by path, the state to write for each (its bytes kept in the CAS,
 * unsynced: the apply makes them durable before its intent, so a killed
 * apply can finish and a redo can read them), or the error that stops it
 * from being written. Every other state holds the file's own bytes: none
 * returned, no git process.
 */
export async function checkoutForms(ctx: Context, reader: ContentReader, items: readonly { path: RepoPath; pre: State }[]): Promise<Map<RepoPath, State | Error>> {
  const out = new Map<RepoPath, State | Error>();
  // Only an older snapshot's state is git's clean form; every other one holds the file's own bytes.
  const wanted = items.filter((i) => i.pre.kind === "file" && i.pre.oid && i.pre.clean);
  if (
    wanted.length === 0 ||
    storedAsIs(
      ctx,
      wanted.map((i) => i.path),
    )
  )
    return out;
  // Sizes as the apply's prefetch learnt them: chunks are cut by them, with no question to git of their own.
  for await (const [i, data] of checkedOut(ctx, wanted, (oid) => reader.sizeOf(oid) ?? 0)) {
    if (data instanceof Error) out.set(i.path, data);
    else out.set(i.path, { kind: "file", mode: i.pre.mode, size: data.length, sha256: reader.cas.put(data, { verify: true, sync: false }), oid: reader.oidOf(data) });
  }
  return out;
}

/**
 * The bytes of a state as `git checkout` would write them at `path`, where
 * it is an older snapshot's clean blob on a path git converts; null where the state's
 * own bytes are the file's (the caller reads them as ever). For a
 * three-way merge, whose sides must be in the file's form, not git's.
 */
export async function checkoutBytes(ctx: Context, path: RepoPath, state: State): Promise<Buffer | null> {
  if (state.kind !== "file" || !state.oid || !state.clean || storedAsIs(ctx, [path])) return null;
  for await (const [, data] of checkedOut(ctx, [{ path, pre: state }], () => 0)) {
    if (data instanceof Error) throw data;
    return data;
  }
  throw new Error(`${path}: not checked out`);
}

/**
 * Checks each item's blob out as git would at its path, into a scratch
 * directory through a scratch index, in chunks (`sizeOf` gives each blob's
 * size as git stores it), and yields each one's bytes, or the error that
 * stopped it, before the next chunk is read. A blob git cannot find is not
 * yielded: the caller's own read reports it.
 */
async function* checkedOut<T extends { path: RepoPath; pre: State }>(ctx: Context, items: readonly T[], sizeOf: (oid: string) => number): AsyncGenerator<[T, Buffer | Error]> {
  for (let start = 0; start < items.length; ) {
    const end = batchEnd(items.length, start, (i) => sizeOf(items[i]!.pre.oid!), { count: CHUNK_COUNT, bytes: CHUNK_BYTES });
    const chunk = items.slice(start, end);
    start = end;
    const dir = mkdtempSync(join(tmpdir(), "unwind-checkout-"));
    try {
      const env = { GIT_INDEX_FILE: join(dir, "index") };
      const info = Buffer.concat(chunk.flatMap((i) => [Buffer.from(`${i.pre.mode ?? "100644"} ${i.pre.oid}\t`), encodePath(i.path), Buffer.from([0])]));
      try {
        await ctx.git(["update-index", "--add", "-z", "--index-info"], { env, input: info });
        await ctx.git(["checkout-index", "--all", "--force", `--prefix=${dir}/w/`], { env });
      } catch (e) {
        if (!(e instanceof GitError)) throw e;
        // Paths that cannot share one index (a file and a path below it, states of different times) go one by
        // one; one git cannot check out alone (its filter failed) is that path's conflict: its clean form is
        // not what the file held.
        if (chunk.length === 1) yield [chunk[0]!, new Error(`git could not check it out: ${e.message.split("\n")[0]}`)];
        else for (const i of chunk) yield* checkedOut(ctx, [i], sizeOf);
        continue;
      }
      for (const i of chunk) {
        let data: Buffer;
        try {
          data = readFileSync(fsPath(join(dir, "w", i.path)));
        } catch {
          continue; // not checked out (a blob git could not find): the caller's own read reports it
        }
        yield [i, data];
      }
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  }
}
