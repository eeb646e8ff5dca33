// A second hook command beside unwind's, for the real-client suite: keeps
// each hook payload exactly as the client sent it (stdin), with the hook's
// working directory and the project variables the client set, one file per
// call in the directory named by argv[2], with the event named by argv[3]
// where the hook command names it (Copilot CLI's payload does not). unwind's own hook is left as
// `unwind init` wrote it; this only watches. Always exits 0, prints nothing.
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";

const dir = process.argv[2];
let payload = "";
try {
  payload = readFileSync(0, "utf8");
} catch {
  /* no stdin: recorded as empty */
}
const env = {};
for (const [k, v] of Object.entries(process.env))
  if (/^(CLAUDE_PROJECT_DIR|GEMINI_PROJECT_DIR|GEMINI_CWD|CODEX_HOME|QWEN_PROJECT_DIR|QWEN_CODE_PROJECT_DIR|COPILOT_PROJECT_DIR|COPILOT_HOOK_DIR|.*SESSION_ID)$/.test(k)) env[k] = v;
const name = `${process.hrtime.bigint()}-${process.pid}.json`;
try {
  writeFileSync(join(dir, name), JSON.stringify({ cwd: process.cwd(), env, payload, ...(process.argv[3] ? { event: process.argv[3] } : {}) }));
} catch {
  /* a recorder that cannot write must not break the client */
}
