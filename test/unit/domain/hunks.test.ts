import { describe, expect, it } from "vitest";
import { gitPatch, hunksOf, isText, revertHunks } from "../../../src/domain/hunks.js";

const pre = "1\n2\n3\n4\n5\n6\n7\n8\n9\n10\n11\n12\n";
const post = "1\nTWO\n3\n4\n5\n6\n7\n8\n9\n10\nELEVEN\n12";

describe("hunks", () => {
  it("numbers a change's hunks in file order", () => {
    expect(hunksOf(pre, post).map((h) => [h.n, h.oldStart, h.newStart])).toEqual([
      [1, 1, 1],
      [2, 8, 8],
    ]);
  });

  it("takes back the named hunks and keeps the others; all of them give back pre; none is post", () => {
    expect(revertHunks(pre, post, [2])).toBe("1\nTWO\n3\n4\n5\n6\n7\n8\n9\n10\n11\n12\n");
    expect(revertHunks(pre, post, [1])).toBe("1\n2\n3\n4\n5\n6\n7\n8\n9\n10\nELEVEN\n12");
    expect(revertHunks(pre, post, [1, 2])).toBe(pre);
    expect(revertHunks(pre, post, [3])).toBeNull();
    expect(revertHunks(pre, post, [0])).toBeNull();
  });

  it("writes git's patch: a new file, a deleted one, a mode change", () => {
    expect(gitPatch("a.txt", null, { text: "x\n", mode: "100644" })).toBe("diff --git a/a.txt b/a.txt\nnew file mode 100644\n--- /dev/null\n+++ b/a.txt\n@@ -0,0 +1,1 @@\n+x\n");
    expect(gitPatch("a.txt", { text: "x\n", mode: "100755" }, null)).toMatch(/^deleted file mode 100755$/m);
    expect(gitPatch("a.sh", { text: "x\n", mode: "100644" }, { text: "x\n", mode: "100755" })).toBe("diff --git a/a.sh b/a.sh\nold mode 100644\nnew mode 100755\n");
  });

  it("text is UTF-8 without NUL", () => {
    expect(isText(Buffer.from("héllo\n"))).toBe(true);
    expect(isText(Buffer.from([0x61, 0, 0x62]))).toBe(false);
    expect(isText(Buffer.from([0xff, 0xfe, 0x41]))).toBe(false);
  });
});
