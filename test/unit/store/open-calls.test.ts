import { writeFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { readOpenCalls, writeOpenCalls } from "../../../src/store/open-calls.js";
import { sessionFile } from "../../../src/store/journal.js";
import { tempDir } from "../../helpers.js";

describe("open calls", () => {
  const session = "claude:3f6c1d2e-8a4b-4c7e-9b1f-5d2a7e9c0b14";

  it("keep the subagent that made each call, for the record that closes it", () => {
    const store = tempDir();
    const calls = [
      { call: "toolu_a", tool: "Bash", kind: "tree" as const, agent: "a950bcfbb96dbf2ad", agentType: "general-purpose" },
      { call: "toolu_b", tool: "Write", kind: "files" as const, paths: ["b.txt"] },
    ];
    writeOpenCalls(store, session, calls);
    expect(readOpenCalls(store, session)).toEqual(calls);
  });

  it("drop an entry whose subagent fields are not strings, keeping the rest", () => {
    const store = tempDir();
    writeOpenCalls(store, session, [{ call: "toolu_a", tool: "Bash", kind: "tree" }]);
    const bad = [
      { call: "toolu_a", tool: "Bash", kind: "tree", agent: 7 },
      { call: "toolu_b", tool: "Bash", kind: "tree", agentType: { level: 1 } },
      { call: "toolu_c", tool: "Bash", kind: "tree", agent: "a1" },
    ];
    writeFileSync(sessionFile(store, session).replace(/\.jsonl$/, ".open"), JSON.stringify(bad));
    expect(readOpenCalls(store, session).map((c) => c.call)).toEqual(["toolu_c"]);
  });
});
