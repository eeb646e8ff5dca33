import { describe, expect, it } from "vitest";
import { pathMatcher } from "../../../src/domain/glob.js";

describe("--path GLOB", () => {
  const cases: [string, string, boolean][] = [
    ["src/a.ts", "src/a.ts", true],
    ["src/*.ts", "src/a.ts", true],
    ["src/*.ts", "src/deep/a.ts", false], // * stays inside one segment
    ["src/**/*.ts", "src/deep/er/a.ts", true],
    ["src/**/*.ts", "src/a.ts", true], // **/ may match no directory
    ["src/**", "src/x/y", true],
    ["src", "src/x/y.ts", true], // a directory takes everything below it
    ["src", "srcfoo/x.ts", false],
    ["*.md", "docs/readme.md", true], // no slash: a file name anywhere
    ["*.md", "docs/readme.mdx", false],
    ["docs/*.md", "other/docs/a.md", false], // with a slash: the whole path
    ["a?.txt", "ab.txt", true],
    ["a?.txt", "a/.txt", false],
    ["[x].txt", "[x].txt", true], // brackets are literal
    ["file.(1).txt", "file.(1).txt", true],
    ["file.(1).txt", "fileX(1)Xtxt", false],
  ];
  it.each(cases)("%s ~ %s → %s", (glob, path, want) => {
    expect(pathMatcher([glob])!(path)).toBe(want);
  });

  it("several patterns: any may match; none given means no filter", () => {
    const m = pathMatcher(["*.md", "src/**"])!;
    expect([m("a.md"), m("src/x.ts"), m("lib/x.ts")]).toEqual([true, true, false]);
    expect(pathMatcher([])).toBeUndefined();
  });
});
