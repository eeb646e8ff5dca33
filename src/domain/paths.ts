import { isAbsolute, posix, relative, sep } from "node:path";
import { usage } from "./errors.js";
import { encodePath, hasRawBytes, RAW_BYTE } from "./path-bytes.js";
import type { RepoPath } from "./types.js";

export { decodePath, encodePath, fsPath, hasRawBytes } from "./path-bytes.js";

export type PathProblem = "absolute" | "dotdot" | "empty" | "git-dir" | "nul" | "store";

/**
 * The one path validator. Every path that can reach code that writes files
 * comes through here first: from a record, a payload, a receipt or argv.
 */
export function checkRepoPath(p: string): PathProblem | null {
  if (p === "" || p === ".") return "empty";
  if (p.includes("\0")) return "nul";
  if (p.startsWith("/") || /^[A-Za-z]:[\\/]/.test(p) || p.startsWith("\\")) return "absolute";
  const parts = p.split("/");
  for (const part of parts) {
    if (part === "..") return "dotdot";
  }
  if (parts.some((x) => x === "" || x === ".")) return "empty";
  // Like git's own verify_path: `.git` is refused as any segment, so nothing
  // is ever written into a nested repository's git dir either.
  if (parts.some((x) => x.toLowerCase() === ".git")) return "git-dir";
  // An unwind store at any depth (a folder without git keeps one in `.unwind/`): never
  // captured, restored or deleted, whichever root is looking (SPEC section 2).
  if (parts.includes(".unwind")) return "store";
  return null;
}

/** A root-relative path from outside (argv, a tool call), checked once: a usage error names it as `typed`. */
export function checkedRepoPath(rel: string, typed: string): RepoPath {
  const problem = checkRepoPath(rel);
  if (problem === "git-dir") throw usage(`path '${typed}' is inside .git`, "unwind never writes there");
  if (problem) throw usage(`path '${typed}' is not a usable path (${problem})`);
  return rel as RepoPath;
}

/**
 * Paths given relative to the root (an MCP tool call's), normalized as a
 * shell would (`./a`, `a/`, `a//b`) and checked. One naming the root itself
 * means the whole tree: the result is then empty (no limit), as on the
 * command line.
 */
export function rootPaths(raw: readonly string[]): RepoPath[] {
  const out: RepoPath[] = [];
  for (const p of raw) {
    if (p.includes("\0")) throw usage(`path '${p}' holds a NUL byte`);
    if (p.startsWith("/")) throw usage(`path '${p}' is absolute`, "give paths relative to the work tree's root");
    const rel = posix.normalize(p).replace(/\/+$/, "");
    if (rel === "." || rel === "") return [];
    if (rel === ".." || rel.startsWith("../")) throw usage(`path '${p}' leaves the work tree`, "give paths relative to the work tree's root");
    out.push(checkedRepoPath(rel, p));
  }
  return out;
}

/** A path for JSON: `path` with invalid bytes as U+FFFD, plus `pathBytes` (base64) when there are any. */
export function jsonPath(p: string): { path: string; pathBytes?: string } {
  if (!hasRawBytes(p)) return { path: p };
  return { path: p.replace(new RegExp(RAW_BYTE.source, "g"), "\uFFFD"), pathBytes: encodePath(p).toString("base64") };
}

/** A .gitignore file, at the root or below: a change to one changes how other paths are read. */
export function isGitignore(p: string): boolean {
  return p === ".gitignore" || p.endsWith("/.gitignore");
}

/** Git's path order: bytewise, which is what `git ls-files` prints. */
export function comparePaths(a: string, b: string): number {
  const n = Math.min(a.length, b.length);
  let i = 0;
  while (i < n && a.charCodeAt(i) === b.charCodeAt(i)) i++;
  // Where they first differ, a code unit below 0x80 is one byte of its own (-1: the path ended there), and the
  // same text before it is the same bytes: that decides it, with no bytes made (sorting a 100,000-path receipt
  // made 3.4 million Buffers). Anything else (a character of more bytes, a raw byte, a surrogate) goes by bytes.
  const x = i < a.length ? a.charCodeAt(i) : -1;
  const y = i < b.length ? b.charCodeAt(i) : -1;
  if (x < 0x80 && y < 0x80) return x - y;
  return Buffer.compare(encodePath(a), encodePath(b));
}

export function sortByPath<T extends { path: string }>(xs: T[]): T[] {
  return xs.sort((a, b) => comparePaths(a.path, b.path));
}

/** Repo-relative (`/`-separated) form of an absolute path, or null when it is outside `root`. */
export function insideRoot(root: string, abs: string): string | null {
  const rel = relative(root, abs);
  if (rel === "") return "";
  if (rel === ".." || rel.startsWith(`..${sep}`) || isAbsolute(rel)) return null;
  return rel.split(sep).join("/");
}

/**
 * Whether a repo-relative path lies in the store (when the store lives
 * inside the root: a folder without git, or UNWIND_STORE). The store is
 * never captured, never restored.
 */
export function inStore(root: string, store: string, rel: string): boolean {
  const s = insideRoot(root, store);
  return s !== null && s !== "" && (rel === s || rel.startsWith(s + "/"));
}

/**
 * Why a task, run or baseline name is not one (SPEC section 4: 1-128
 * characters that git accepts in a ref name, as one component of
 * refs/unwind/...), or null. git's own rules (check-ref-format), checked
 * here so a bad name is refused before anything is created.
 */
export function checkName(name: string): string | null {
  if (name.length === 0) return "is empty";
  if (name.length > 128) return `is ${name.length} characters long (at most 128)`;
  // eslint-disable-next-line no-control-regex
  if (/[\x00-\x20\x7f~^:?*[\\]/.test(name)) return "holds a space, a control character or one of ~ ^ : ? * [ \\";
  if (name.includes("..")) return "holds ..";
  if (name.includes("@{")) return "holds @{";
  for (const part of name.split("/")) {
    if (part === "") return "has an empty part (// or a leading or trailing /)";
    if (part.startsWith(".")) return "has a part that starts with .";
    if (part.endsWith(".lock")) return "has a part that ends with .lock";
  }
  if (name.endsWith(".")) return "ends with .";
  return null;
}
