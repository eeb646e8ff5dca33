import { lstatSync, readFileSync, realpathSync, statSync } from "node:fs";
import { delimiter, dirname, join } from "node:path";
import type { Context } from "../repo/context.js";

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
 * never from the index, when it hashes), any config file that could say
 * otherwise (`harmlessConfig`), and the answer is no. A wrong "no" costs a
 * git process; a wrong "yes" would store raw bytes where git stores
 * converted ones.
 *
 * git's own GIT_* variables do not count: every git of ours runs without
 * them (src/git/git.ts), and this must answer for that git.
 */
export function storedAsIs(ctx: Context, paths: readonly string[]): boolean {
  const { configs, attributes } = sources(ctx);
  for (const f of configs) {
    const there = presence(f);
    if (there === "absent") continue;
    if (there === "unknown") return false; // git may read it; we cannot tell what it says
    try {
      if (!harmlessConfig(readFileSync(f, "latin1"))) return false;
    } catch {
      return false;
    }
  }
  const files = new Set(attributes);
  // Each directory on the paths' way once ("" the root), its ancestors not walked again: 10,000 paths in
  // 100 directories are 101 directories, not 30,000 steps up.
  const dirs = new Set<string>();
  for (const p of paths) {
    for (let d = parentOf(p); !dirs.has(d); d = parentOf(d)) {
      dirs.add(d);
      if (d === "") break;
    }
  }
  for (const d of dirs) files.add(join(ctx.root, d, ".gitattributes"));
  for (const f of files) if (presence(f) !== "absent") return false;
  return true;
}

/** The directory a repository path is in: "" for the root. */
const parentOf = (p: string) => p.slice(0, Math.max(0, p.lastIndexOf("/")));

/**
 * The state of every file outside the work tree that could change how git
 * hashes a file (config, and attributes in info/, the global and the system
 * places), as a string that changes whenever any of them does. A pending
 * record keeps it: entries hashed under other settings are not reused.
 */
export function conversionInputs(ctx: Context): string {
  const { configs, attributes } = sources(ctx);
  return [...configs, ...attributes]
    .map((f) => {
      try {
        const st = lstatSync(f, { throwIfNoEntry: false });
        return st ? `${st.ino}:${st.size}:${st.mtimeMs}:${st.ctimeMs}` : "-";
      } catch {
        return "?";
      }
    })
    .join(" ");
}

/** The config files git reads, in the order it reads them (a later one wins). */
export function configFiles(ctx: Context): string[] {
  return sources(ctx).configs;
}

/** The config files git reads and the attribute files outside the work tree, for the git on PATH. */
function sources(ctx: Context): { configs: string[]; attributes: string[] } {
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
  const attributes = [...sys.map((d) => join(d, "gitattributes")), join(ctx.commonDir, "info", "attributes"), ...(xdg ? [join(xdg, "git", "attributes")] : [])];
  return { configs, attributes };
}

/**
 * Whether a file is there, without throwing: "absent" only when the path
 * cannot exist (ENOENT, or a file where a directory would be); anything
 * else unreadable (EACCES on a directory on the way) is "unknown", which the
 * caller counts as present: git may well read it.
 */
function presence(f: string): "present" | "absent" | "unknown" {
  try {
    return lstatSync(f, { throwIfNoEntry: false }) ? "present" : "absent";
  } catch (e) {
    return (e as NodeJS.ErrnoException).code === "ENOTDIR" ? "absent" : "unknown";
  }
}

/**
 * Whether a config file's text can change how a file is hashed: it cannot
 * unless it sets core.autocrlf to anything but false, names another
 * attributes file (core.attributesFile), has an [attr] section or includes
 * other files. Read as raw text, case-insensitively (config names cannot be
 * escaped or split across lines), so a mention in any section counts.
 */
export function harmlessConfig(text: string): boolean {
  // [attr] (git 2.42's attr.tree) reads attributes from a tree rather than the work tree.
  if (/attributesfile|include/i.test(text) || /^\s*\[\s*attr\b/im.test(text)) return false;
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
  systemDirsOnce ??= findSystemDirs(); // PATH does not change within a process
  return systemDirsOnce;
}

let systemDirsOnce: string[] | undefined;

function findSystemDirs(): string[] {
  const dirs = new Set(["/etc"]);
  for (const dir of (process.env.PATH ?? "").split(delimiter)) {
    if (!dir) continue;
    const bin = join(dir, "git");
    let st;
    try {
      st = statSync(bin, { throwIfNoEntry: false });
    } catch {
      continue; // a PATH entry that is a file, or one we may not search: not where git runs from
    }
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
