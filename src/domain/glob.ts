/**
 * `--path GLOB`: `*` and `?` stay inside one path segment, `**` crosses
 * segments. A pattern matches the whole repository-relative path, or names
 * a directory (everything below it), or, when it has no `/`, a file name
 * anywhere (like .gitignore).
 */
export function globToRegExp(glob: string): RegExp {
  let re = "";
  for (let i = 0; i < glob.length; i++) {
    const c = glob[i]!;
    if (c === "*") {
      if (glob[i + 1] === "*") {
        const slash = glob[i + 2] === "/";
        re += slash ? "(?:.*/)?" : ".*";
        i += slash ? 2 : 1;
      } else re += "[^/]*";
    } else if (c === "?") re += "[^/]";
    else re += c.replace(/[.+^${}()|[\]\\]/g, "\\$&");
  }
  return new RegExp(`^${re}$`, "s");
}

export function pathMatcher(globs: readonly string[]): ((p: string) => boolean) | undefined {
  if (globs.length === 0) return undefined;
  const tests = globs.map((g) => {
    const clean = g.replace(/\/+$/, "");
    const re = globToRegExp(clean);
    const bare = !clean.includes("/");
    const below = globToRegExp(clean + "/**"); // a directory takes everything below it
    return (p: string) => re.test(p) || below.test(p) || (bare && re.test(p.slice(p.lastIndexOf("/") + 1)));
  });
  return (p) => tests.some((t) => t(p));
}

/**
 * A glob as typed in a subdirectory (`base`, repository-relative), in the
 * root-relative form `pathMatcher` reads: relative to the current directory
 * as git's pathspecs are. A bare name (no `/`) matches anywhere below the
 * current directory, as it matches anywhere from the root. Null when it
 * leaves the root.
 */
export function rootGlob(glob: string, base: string): string | null {
  if (base === "") return glob.startsWith("../") || glob === ".." ? null : glob.replace(/^(\.\/)+/, "");
  if (!glob.includes("/")) return `${base}/**/${glob}`;
  const parts = base.split("/");
  for (const seg of glob.split("/")) {
    if (seg === "..") {
      if (parts.length === 0) return null;
      parts.pop();
    } else if (seg !== ".") parts.push(seg);
  }
  const out = parts.join("/");
  return out === "" ? "**" : out;
}
