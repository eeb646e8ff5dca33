import { applyPatch, formatPatch, OMIT_HEADERS, reversePatch, structuredPatch, type StructuredPatchHunk } from "diff";

/**
 * A change to a text file as hunks (SPEC section 4, "Patches and hunks"):
 * the unified diff with three lines of context, numbered from 1 in file
 * order, as `unwind changes --patch` prints them and `undo --hunk N` names
 * them. Pure: the caller reads the bytes.
 */
export interface Hunk {
  /** 1-based, in file order. */
  n: number;
  oldStart: number;
  oldLines: number;
  newStart: number;
  newLines: number;
  /** The hunk's lines as a unified diff writes them (` `, `-`, `+`, and `\ No newline at end of file`). */
  lines: string[];
}

/** Bytes that are text to a diff: no NUL in the first 8,000 (git's own test) and valid UTF-8. */
export function isText(data: Buffer): boolean {
  if (data.subarray(0, 8000).includes(0)) return false;
  try {
    new TextDecoder("utf-8", { fatal: true }).decode(data);
    return true;
  } catch {
    return false;
  }
}

function patchOf(pre: string, post: string) {
  return structuredPatch("a", "b", pre, post, "", "", { context: 3 });
}

/** The hunks that turn `pre` into `post` (either "" for an absent file). */
export function hunksOf(pre: string, post: string): Hunk[] {
  return patchOf(pre, post).hunks.map((h: StructuredPatchHunk, i: number) => ({ n: i + 1, ...h }));
}

/**
 * `post` with the hunks `which` (1-based) taken back and every other hunk
 * kept: what `undo --hunk` makes of the scope's change. Null when a number
 * names no hunk.
 */
export function revertHunks(pre: string, post: string, which: readonly number[]): string | null {
  const patch = patchOf(pre, post);
  if (which.some((n) => !Number.isInteger(n) || n < 1 || n > patch.hunks.length)) return null;
  const picked = { ...patch, hunks: patch.hunks.filter((_, i) => which.includes(i + 1)) };
  // Each picked hunk reversed, at its place in `post`: hunks never overlap, so the others' lines stay where they are.
  const out = applyPatch(post, reversePatch(picked));
  if (out === false) throw new Error("a hunk of the change did not apply to the change's own result");
  return out;
}

/**
 * One path's change in git's patch format, so `git apply -R` takes it back:
 * `pre`/`post` null for a file the change created or deleted, modes where
 * they are known (git's `100644`, `100755`).
 */
export function gitPatch(path: string, pre: { text: string; mode: string } | null, post: { text: string; mode: string } | null): string {
  const head = [`diff --git a/${path} b/${path}`];
  if (pre === null && post !== null) head.push(`new file mode ${post.mode}`);
  else if (post === null && pre !== null) head.push(`deleted file mode ${pre.mode}`);
  else if (pre && post && pre.mode !== post.mode) head.push(`old mode ${pre.mode}`, `new mode ${post.mode}`);
  const body = formatPatch(patchOf(pre?.text ?? "", post?.text ?? ""), OMIT_HEADERS);
  if (body.trim() === "") return `${head.join("\n")}\n`;
  head.push(pre === null ? "--- /dev/null" : `--- a/${path}`, post === null ? "+++ /dev/null" : `+++ b/${path}`);
  return `${head.join("\n")}\n${body.endsWith("\n") ? body : `${body}\n`}`;
}
