import { lstatSync, readFileSync, realpathSync, statSync } from "node:fs";
import { delimiter, dirname, join } from "node:path";
import type { Context } from "../store/context.js";

/**
 * Whether `git hash-object` would store each of `paths` byte for byte, so
 * that their blobs can be hashed and written in-process: a snapshot then
 * starts no git process for them (~30 ms of 100k-file snapshot's ~430).
 *
 * git changes a file's bytes on the way in only through attributes (a clean
 * filter, text/eol, ident, working-tree-encoding) or `core.autocrlf`. So the
 * answer is yes only when no source git would read could say either, and the
 * check is by presence, not by content: any attributes file on a path's way
 * (tracked, untracked or ignored: git reads them all, from the work tree,
 * never from the index, when it hashes), any config file that sets
 * autocrlf other than false, names an attributes file or includes another,
 * and the answer is no. A wrong
 * "no" costs a git process; a wrong "yes" would store raw bytes where git
 * stores converted ones.
 *
 * git's own GIT_* variables do not count: every git of ours runs without
 * them (src/git/git.ts), and this must answer for that git.
 */
export function storedAsIs(ctx: Context, paths: readonly string[]): boolean {
  const sys = systemDirs();
  const home = process.env.HOME;
  const xdg = process.env.XDG_CONFIG_HOME || (home ? join(home, ".config") : undefined);
  const configs = [
    ...sys.map((d) => join(d, "gitconfig")),
    ...(home ? [join(home, ".gitconfig")] : []),
    ...(xdg ? [join(xdg, "git", "config")] : []),
    join(ctx.commonDir, "config"),
    join(ctx.gitDir, "config.worktree"),
  ];
  for (const f of configs) {
    if (!statSync(f, { throwIfNoEntry: false })) continue; // most are absent: no exception thrown for each
    try {
      if (!harmlessConfig(readFileSync(f, "latin1"))) return false;
    } catch {
      return false; // unreadable: git may read it, we cannot tell what it says
    }
  }
  const attributes = new Set([...sys.map((d) => join(d, "gitattributes")), join(ctx.commonDir, "info", "attributes")]);
  if (xdg) attributes.add(join(xdg, "git", "attributes"));
  for (const p of paths) {
    for (let d = dirname(p); ; d = dirname(d)) {
      attributes.add(join(ctx.root, d === "." ? "" : d, ".gitattributes"));
      if (d === "." || d === "/" || d === "") break;
    }
  }
  for (const f of attributes) if (lstatSync(f, { throwIfNoEntry: false })) return false;
  return true;
}

/**
 * Whether a config file's text can change how a file is hashed: it cannot
 * unless it sets core.autocrlf to anything but false, names another
 * attributes file (core.attributesFile) or includes other files. Read as raw
 * text, case-insensitively (config names cannot be escaped or split across
 * lines), so a mention in any section counts.
 */
export function harmlessConfig(text: string): boolean {
  if (/attributesfile|include/i.test(text)) return false;
  for (const line of text.split(/\r?\n/)) {
    if (/autocrlf/i.test(line) && !/^\s*autocrlf\s*=\s*("?)(false|no|off|0)\1\s*([#;].*)?$/i.test(line)) return false;
  }
  return true;
}

/**
 * Where the git on PATH may keep its system gitconfig and gitattributes
 * (`$(sysconfdir)`): /etc for a git installed under /usr, `<prefix>/etc`
 * otherwise, with the prefix taken both from the PATH entry and from the
 * binary it links to (a package manager's cellar). git 2.39 has no command
 * that names these files.
 */
function systemDirs(): string[] {
  const dirs = new Set(["/etc"]);
  for (const dir of (process.env.PATH ?? "").split(delimiter)) {
    if (!dir) continue;
    const bin = join(dir, "git");
    const st = statSync(bin, { throwIfNoEntry: false });
    if (!st?.isFile() || (st.mode & 0o111) === 0) continue;
    dirs.add(join(dirname(dir), "etc"));
    try {
      dirs.add(join(dirname(dirname(realpathSync(bin))), "etc"));
    } catch {
      /* a dangling link: the first of the two is all there is */
    }
    break; // the one spawn("git") runs
  }
  return [...dirs];
}
