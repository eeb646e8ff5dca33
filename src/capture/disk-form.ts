import { existsSync, mkdirSync, readFileSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { commitBody, writeLooseObject } from "../git/objects.js";
import { mkdirPrivate } from "../sys/files.js";
import type { Context } from "../repo/context.js";

/**
 * Snapshots hold each file's bytes as they are on disk, not git's clean form
 * of them. Where git converts on the way in (`text`/`eol`, `core.autocrlf`,
 * a clean filter, `ident`, `working-tree-encoding`), its form hides changes:
 * a file turned from LF to CRLF, or changed only where a filter normalises,
 * has the same clean blob before and after, so a record kept in that form
 * could neither see the change nor give the bytes back.
 *
 * git has no switch that turns conversion off for one command (git 2.39:
 * no GIT_ATTR_SOURCE), but it reads `$GIT_DIR/info/attributes` before every
 * `.gitattributes`, and a `-c` setting before every config file. So every
 * git call on a private index runs with a git dir of our own (the "disk
 * git dir", beside the index) whose info/attributes unsets every
 * converting attribute, whose config includes the repository's own (its
 * settings still count: file modes, ignore files, case) and which shares the
 * repository's objects. Its info/exclude is a link to the repository's, so
 * ignored files stay ignored, live. Its HEAD names the index tree's commit,
 * so `git status` has nothing to compare on its index-to-HEAD side.
 *
 * A folder without git already runs every git call under its private git
 * dir: that one gets the same info/attributes.
 */

/** Unsets every attribute through which git changes a file's bytes on the way in (or out). */
export const NO_CONVERSION = "* -text -eol -crlf -filter -ident -working-tree-encoding\n";

/** Settings that convert whatever the attributes say, overridden on every call on a private index. */
export const NO_CONVERSION_CONFIG = ["-c", "core.autocrlf=false", "-c", "core.safecrlf=false"];

/** The disk git dir of a private index (git mode), named after the index it serves. */
export function diskGitDir(ctx: Context, indexFile = ctx.indexFile): string {
  return ctx.mode === "private" ? ctx.gitDir : `${indexFile}.git`;
}

/** Whether the private index was made for disk-form snapshots: its disk git dir is complete (HEAD is written last). */
export function diskFormReady(ctx: Context): boolean {
  if (ctx.mode === "private") return existsSync(join(ctx.gitDir, "info", "attributes"));
  return existsSync(join(diskGitDir(ctx), "HEAD"));
}

/**
 * The environment of every git call on a private index (`indexFile`, the
 * store's by default), its disk git dir made first where it is missing.
 * `head`: the commit its HEAD starts at.
 */
export function indexEnv(ctx: Context, indexFile = ctx.indexFile, opts: { dir?: string; head?: string | null } = {}): Record<string, string> {
  if (ctx.mode === "private") {
    const attrs = join(ctx.gitDir, "info", "attributes");
    if (!existsSync(attrs)) {
      mkdirPrivate(join(ctx.gitDir, "info"));
      writeFileSync(attrs, NO_CONVERSION);
    }
    return { GIT_INDEX_FILE: indexFile };
  }
  const dir = opts.dir ?? diskGitDir(ctx, indexFile);
  if (!existsSync(join(dir, "HEAD"))) makeDiskGitDir(ctx, dir, opts.head ?? null);
  return { GIT_INDEX_FILE: indexFile, GIT_DIR: dir, GIT_WORK_TREE: ctx.root, GIT_OBJECT_DIRECTORY: join(ctx.commonDir, "objects") };
}

const quoted = (p: string) => `"${p.replace(/\\/g, "\\\\").replace(/"/g, '\\"')}"`;

function makeDiskGitDir(ctx: Context, dir: string, head: string | null): void {
  rmSync(dir, { recursive: true, force: true }); // a half-made one from a killed process
  mkdirPrivate(join(dir, "info"));
  mkdirSync(join(dir, "refs"), { mode: 0o700 });
  mkdirSync(join(dir, "objects"), { mode: 0o700 }); // never written (GIT_OBJECT_DIRECTORY): git only checks it is there
  // The repository's config first, ours after it: a later value wins (and `-c` over both: NO_CONVERSION_CONFIG).
  const config = [
    "[include]",
    `\tpath = ${quoted(join(ctx.commonDir, "config"))}`,
    `\tpath = ${quoted(join(ctx.gitDir, "config.worktree"))}`,
    "[core]",
    `\trepositoryformatversion = ${ctx.objectFormat === "sha256" ? 1 : 0}`,
    "\tbare = false",
    "\tautocrlf = false",
    ...(ctx.objectFormat === "sha256" ? ["[extensions]", "\tobjectformat = sha256"] : []),
  ];
  writeFileSync(join(dir, "config"), config.join("\n") + "\n");
  writeFileSync(join(dir, "info", "attributes"), NO_CONVERSION);
  symlinkSync(join(ctx.commonDir, "info", "exclude"), join(dir, "info", "exclude"));
  writeFileSync(join(dir, "HEAD"), `${head ?? emptyCommit(ctx)}\n`);
}

/** A commit of the empty tree: HEAD for an index with no tree recorded yet. */
function emptyCommit(ctx: Context): string {
  const empty = writeLooseObject(join(ctx.commonDir, "objects"), "tree", Buffer.alloc(0), ctx.objectFormat);
  return writeLooseObject(join(ctx.commonDir, "objects"), "commit", commitBody(empty, "unwind <unwind@localhost>", 0, "unwind: empty\n"), ctx.objectFormat);
}

/** Points the disk git dir's HEAD at `commit` (the index tree's), so status compares the index with its own tree. */
export function setDiskHead(ctx: Context, commit: string, indexFile = ctx.indexFile): void {
  if (ctx.mode === "private") return;
  const dir = diskGitDir(ctx, indexFile);
  if (existsSync(join(dir, "HEAD"))) writeFileSync(join(dir, "HEAD"), `${commit}\n`);
}

/** The commit the disk git dir's HEAD names, or null. */
export function diskHead(ctx: Context, indexFile = ctx.indexFile): string | null {
  if (ctx.mode === "private") return null;
  try {
    return readFileSync(join(diskGitDir(ctx, indexFile), "HEAD"), "utf8").trim() || null;
  } catch {
    return null;
  }
}
