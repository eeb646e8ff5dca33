import { mkdirSync, renameSync, unlinkSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { makeRepo, write } from "./helpers.js";
import { claudeCall } from "./journal-helpers.js";

/** The session both session test files record (test/ops/session.test.ts, test/e2e/session.test.ts). */
export const A = "sess-aaaa-1111";

/** Session A edits a.ts with Edit and runs a Bash that creates, removes and moves files. */
export function sessionA(root: string) {
  claudeCall(root, A, "Edit", { file_path: join(root, "src/a.ts"), old_string: "1", new_string: "2" }, () => write(root, "src/a.ts", "export const a = 2;\n"));
  claudeCall(root, A, "Bash", { command: "mkdir -p gen/deep && echo x > gen/deep/x.ts && rm old.ts && mv keep.md moved.md", description: "shell" }, () => {
    mkdirSync(join(root, "gen/deep"), { recursive: true });
    writeFileSync(join(root, "gen/deep/x.ts"), "x\n");
    unlinkSync(join(root, "old.ts"));
    renameSync(join(root, "keep.md"), join(root, "moved.md"));
    writeFileSync(join(root, "build/out.js"), "built by the agent\n"); // ignored: never captured, never undone
  });
}

/** The repository session A works in. */
export function repo() {
  return makeRepo({
    ".gitignore": "build/\n",
    "src/a.ts": "export const a = 1;\n",
    "src/b.ts": "export const b = 1;\n",
    "old.ts": "old\n",
    "keep.md": "# keep\n",
    "build/out.js": "built before\n",
  });
}

export const A_TS = "export const a = 1;\n";
export const A_TS2 = "export const a = 2;\n";
export const B_TS = "export const b = 1;\n";
export const B_TS2 = "export const b = 2;\n";

/**
 * A repo where session `a` edits src/a.ts (Edit) and runs a Bash call that
 * writes gen/out.txt (a shell side effect, caught by tree snapshots), and
 * session `b` writes src/b.ts. Different files: no conflict between them.
 */
export function twoSessions(a: string, b: string): string {
  const root = makeRepo({ "src/a.ts": A_TS, "src/b.ts": B_TS, "README.md": "# r\n" });
  claudeCall(root, a, "Edit", { file_path: join(root, "src/a.ts"), old_string: "1", new_string: "2" }, () => write(root, "src/a.ts", A_TS2));
  claudeCall(root, a, "Bash", { command: "mkdir -p gen && echo generated > gen/out.txt", description: "generate" }, () => write(root, "gen/out.txt", "generated\n"));
  claudeCall(root, b, "Write", { file_path: join(root, "src/b.ts"), content: B_TS2 }, () => write(root, "src/b.ts", B_TS2));
  return root;
}
