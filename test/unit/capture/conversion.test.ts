import { describe, expect, it } from "vitest";
import { harmlessConfig } from "../../../src/capture/conversion.js";

describe("pure: which config text can change how git hashes a file", () => {
  const cases: [string, boolean][] = [
    ["[user]\n\tname = x\n", true],
    ["[core]\n\tautocrlf = false\n", true],
    ['[core]\n\tAutoCRLF = "no" ; explicit\r\n', true],
    ["[core]\n\tautocrlf = 0\n", true],
    ["[core]\n\tautocrlf = true\n", false],
    ["[core]\n\tautocrlf = input\n", false],
    ["[core]\n\tautocrlf\n", false], // a bare name is true
    ["[core] autocrlf = false\n", false], // a header on the same line: not read that closely, so refused
    ["[core]\n\tautocrlf = fal\\\nse\n", false],
    ["[core]\n\tattributesFile = ~/a\n", false],
    ["[include]\n\tpath = other\n", false],
    ['[includeIf "gitdir:~/w/"]\n\tpath = other\n', false],
    ["[attr]\n\ttree = HEAD\n", false], // git 2.42+: attributes read from a tree, not the work tree
  ];
  for (const [text, harmless] of cases) {
    it(`${JSON.stringify(text)} → ${harmless ? "harmless" : "may convert"}`, () => expect(harmlessConfig(text)).toBe(harmless));
  }
});
