/**
 * The one path validator (SPEC 3: unsafe-path) and git's path order.
 * Each bad path has a near-identical good path as its negative control.
 */
import { describe, expect, it } from "vitest";
import { checkRepoPath, comparePaths, sortByPath } from "../../../src/domain/paths.js";
import { encodePath } from "../../../src/domain/path-bytes.js";

describe("checkRepoPath: refused paths", () => {
  it.each([
    // absolute
    ["/etc/passwd", "absolute"],
    ["/", "absolute"],
    ["\\\\server\\share\\x", "absolute"],
    ["\\x", "absolute"],
    // Windows drives, either slash, either case
    ["C:\\Windows\\system32", "absolute"],
    ["c:/Users/x", "absolute"],
    ["Z:\\", "absolute"],
    // .. anywhere
    ["..", "dotdot"],
    ["../x", "dotdot"],
    ["a/../b", "dotdot"],
    ["a/b/..", "dotdot"],
    ["a/../../../etc/passwd", "dotdot"],
    // empty segments, and "."
    ["", "empty"],
    [".", "empty"],
    ["a//b", "empty"],
    ["a/", "empty"],
    ["./a", "empty"],
    ["a/./b", "empty"],
    // into .git, any case
    [".git", "git-dir"],
    [".git/config", "git-dir"],
    [".git/hooks/pre-commit", "git-dir"],
    [".GIT/config", "git-dir"],
    [".Git/HEAD", "git-dir"],
    [".gIt/objects/ab/cdef", "git-dir"],
    // a nested repository's git dir, like git's own verify_path
    ["sub/.git/hooks/pre-commit", "git-dir"],
    ["vendor/lib/.GIT", "git-dir"],
    // NUL
    ["a\0b", "nul"],
    ["\0", "nul"],
    ["src/a.ts\0.png", "nul"],
  ])("%j → %s", (p, problem) => {
    expect(checkRepoPath(p)).toBe(problem);
  });
});

describe("checkRepoPath: accepted paths (negative controls)", () => {
  it.each([
    ["a"],
    ["src/a.ts"],
    ["with space/file name.txt"],
    [" leading and trailing "],
    ["日本語/ファイル.md"],
    ["é/ü/ñ.txt"],
    ["emoji 😀.txt"],
    ["line\nbreak"],
    ["tab\there"],
    ["..."],
    ["..a"],
    ["a.."],
    ["a/..b/c"],
    [".hidden"],
    [".gitignore"],
    [".gitattributes"],
    [".github/workflows/ci.yml"],
    ["git/config"],
    ["x.git/config"],
    ["-rf"],
    ["ab:/c"],
    ["name:with:colons"],
  ])("%j → null", (p) => {
    expect(checkRepoPath(p)).toBeNull();
  });
});

describe("comparePaths / sortByPath: git's order, bytewise on UTF-8", () => {
  it.each([
    ["B", "a"], // uppercase before lowercase
    ["a", "a-b"], // a prefix first
    ["a-b", "a.b"], // 0x2d < 0x2e
    ["a.b", "a/b"], // 0x2e < 0x2f
    ["a/b", "a0"], // 0x2f < 0x30
    ["z", "é"], // ASCII before multi-byte
    ["\uFF61", "😀"], // EF.. < F0..: UTF-16 code units would say the opposite
  ])("%j < %j", (a, b) => {
    expect(comparePaths(a, b)).toBeLessThan(0);
    expect(comparePaths(b, a)).toBeGreaterThan(0);
  });

  it("equal paths compare 0", () => {
    expect(comparePaths("a/b", "a/b")).toBe(0);
    expect(comparePaths("a/b", "a/c")).not.toBe(0);
  });

  it("agrees with a comparison of the paths' bytes, raw bytes and surrogates included", () => {
    // ASCII, two- to four-byte characters, a lone high surrogate, raw bytes (decodePath's U+DC80..U+DCFF), the pair they can form.
    const alphabet = ["a", "b", "/", ".", "-", "\x7f", "é", "\uFF61", "😀", "\uD800", "\uDC80", "\uDCFF", "\uD83D", "\uDE00"];
    let seed = 7;
    const next = () => {
      seed = (seed * 1103515245 + 12345) % 2147483648;
      return seed;
    };
    const word = () => Array.from({ length: next() % 6 }, () => alphabet[next() % alphabet.length]).join("");
    const sign = (n: number) => Math.sign(n);
    let decidedByAscii = 0;
    for (let k = 0; k < 20_000; k++) {
      const base = word();
      const a = base + word();
      const b = base + word();
      expect(sign(comparePaths(a, b)), `${JSON.stringify(a)} vs ${JSON.stringify(b)}`).toBe(sign(Buffer.compare(encodePath(a), encodePath(b))));
      if (a !== b && /^[\x00-\x7f]*$/.test(a + b)) decidedByAscii++;
    }
    expect(decidedByAscii).toBeGreaterThan(100); // the pairs are not all multi-byte
  });

  it("sortByPath orders records by path", () => {
    const xs = ["😀", "a/b", "B", "a-b", "\uFF61", "a"].map((path, n) => ({ path, n }));
    expect(sortByPath(xs).map((x) => x.path)).toEqual(["B", "a", "a-b", "a/b", "\uFF61", "😀"]);
  });
});
