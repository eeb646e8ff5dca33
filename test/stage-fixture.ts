import { unlinkSync } from "node:fs";
import { join } from "node:path";
import { claudeCallEnv } from "./journal-helpers.js";
import { makeRepo, write } from "./helpers.js";

/**
 * A stage in the style of an orchestrator's own tests (SPEC section 10): a
 * real repository with a real small test suite, run by `node test.js`
 * (every `tests/*.test.js`, exit 1 if any fails), a tester that writes
 * tests and an implementer that edits, each through the real Claude hook,
 * the implementer's captures labelled with the stage's task.
 */

export const CALC_V1 = "exports.total = (xs) => xs.reduce((a, b) => a + b, 0);\n";
/** The story's change: totals are rounded to cents. */
export const CALC_V2 = "exports.total = (xs) => Math.round(xs.reduce((a, b) => a + b, 0) * 100) / 100;\n";

export const RUNNER = `const { readdirSync } = require("node:fs");
const { spawnSync } = require("node:child_process");
let failed = 0;
for (const f of readdirSync("tests").filter((f) => f.endsWith(".test.js")).sort()) {
  const r = spawnSync(process.execPath, ["tests/" + f], { encoding: "utf8" });
  process.stdout.write(r.stdout + r.stderr);
  if (r.status !== 0) { failed++; console.log("FAIL " + f); } else console.log("ok   " + f);
}
console.log(failed ? failed + " failed" : "all passed");
process.exit(failed ? 1 : 0);
`;

/** A test file: `body` holds `check(name, condition)` calls. */
export const testFile = (body: string) => `const { total } = require("../src/calc.js");
const check = (name, ok) => { if (!ok) { console.log("not ok: " + name); process.exitCode = 1; } };
${body}
`;

/** Passes before and after the story. */
export const SUM_TEST = testFile('check("sums", total([1, 2, 3]) === 6);');
/** Encodes the old behaviour: fails once totals are rounded, so the implementer is forced to repair it. */
export const FLOAT_TEST = testFile('check("raw float", total([0.1, 0.2]) === 0.30000000000000004);');
export const FLOAT_TEST_REPAIRED = testFile('check("rounded", total([0.1, 0.2]) === 0.3);');

/** The repository at the start of the story: calc v1 and its two tests, committed. */
export function stageRepo(extra: Record<string, string> = {}): string {
  return makeRepo({ "src/calc.js": CALC_V1, "test.js": RUNNER, "tests/sum.test.js": SUM_TEST, "tests/float.test.js": FLOAT_TEST, ...extra });
}

let seq = 0;

/** An agent of the stage: its writes go through the real hook, labelled with `task` when given (UNWIND_TASK). */
export function agent(root: string, task: string | null, name = `agent-${++seq}`) {
  const env: Record<string, string> = task ? { UNWIND_TASK: task } : {};
  const session = `${name}-${process.pid}-${seq}`;
  return {
    write(rel: string, content: string): void {
      claudeCallEnv(root, session, "Write", { file_path: join(root, rel), content }, () => write(root, rel, content), env);
    },
    remove(rel: string): void {
      claudeCallEnv(root, session, "Bash", { command: `rm ${rel}` }, () => unlinkSync(join(root, rel)), env);
    },
  };
}
