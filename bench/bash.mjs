// Benchmark: a shell tool's pre-capture on the big repository. For a Bash
// PreToolUse, `unwind hook claude` takes a tree snapshot of the whole work
// tree (within the hook's time budget). No target: the figure is reported
// next to `git status --porcelain` in the same run.
//
// The shared 100,000-file repository (lib.mjs bigRepo); the same CHANGED
// files get new content before every timed command, as in the snapshot
// benchmark, so every hook run snapshots exactly that many changes.

import { existsSync, readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { CHANGED, REPS, ROOT, UNWIND, bigRepo, measure, medians, pairedRatio, printTable, printTimeline, run, standalone, tempDir, traceRun, statusBaseline } from "./lib.mjs";

export async function bench() {
  console.log("unwind hook Bash pre-capture benchmark (tree snapshot)");
  const { repo, summary, modify } = bigRepo();
  console.log(`  repo      ${summary}`);
  const fixture = JSON.parse(readFileSync(join(ROOT, "test", "fixtures", "hooks", "claude", "bash.pre.json"), "utf8"));
  const session = "bench-bash-0000-0000-000000000000";
  const transcript = join(tempDir("bash-home"), `${session}.jsonl`);
  let call = 0;
  const payload = () => JSON.stringify({ ...fixture, session_id: session, transcript_path: transcript, cwd: repo, tool_use_id: `toolu_01bench${String(call++).padStart(12, "0")}` });
  const store = join(repo, ".git", "unwind");
  const treeRecords = () => {
    const dir = join(store, "journal");
    if (!existsSync(dir)) return [];
    return (
      readdirSync(dir)
        .flatMap((f) => readFileSync(join(dir, f), "utf8").split("\n").filter(Boolean))
        .map((l) => JSON.parse(l))
        // Each pre also closes the previous call (no post is sent here): with the same snapshot, so only the pres count.
        .filter((x) => x.kind === "tree" && x.session === `claude:${session}` && x.phase === "pre")
    );
  };
  const errorsBefore = existsSync(join(store, "errors.jsonl")) ? readFileSync(join(store, "errors.jsonl"), "utf8") : "";
  const recordsBefore = treeRecords().length;

  let input = "";
  const commands = {
    status: statusBaseline(repo, modify),
    hook: {
      label: "unwind hook claude, Bash PreToolUse",
      prepare() {
        modify();
        input = payload();
      },
      time: () => run("node", [UNWIND, "hook", "claude"], { cwd: repo, input }).ms,
    },
    node: { label: "node -e 0 (Node start-up alone)", time: () => run("node", ["-e", "0"], { cwd: repo }).ms },
  };
  console.log(`  ${CHANGED} files get new content before each timed command; median of ${REPS} runs after 1 warm-up\n`);
  const samples = measure(commands);
  const med = medians(samples);
  printTable(commands, samples);

  // The hook always exits 0: a capture that failed or ran out of budget only shows in the store.
  const errors = existsSync(join(store, "errors.jsonl")) ? readFileSync(join(store, "errors.jsonl"), "utf8") : "";
  if (errors !== errorsBefore) throw new Error(`the hook logged capture errors:\n${errors.slice(errorsBefore.length)}`);
  const recs = treeRecords().slice(recordsBefore);
  if (recs.length !== REPS + 1) throw new Error(`expected ${REPS + 1} tree captures in the journal, found ${recs.length}`);
  if (new Set(recs.map((x) => x.tree)).size !== recs.length) throw new Error("two hook runs wrote the same tree: a capture missed its changes");

  console.log("\n  ratio (no target; ratio of medians, median of per-round ratios in brackets)");
  console.log(`  hook Bash / git status             ${(med.hook / med.status).toFixed(2).padStart(6)}x   [${pairedRatio(samples, "hook", "status").toFixed(2)}x]`);
  console.log(`  (without Node start-up, (hook Bash - node -e 0) / git status = ${((med.hook - med.node) / med.status).toFixed(2)}x)`);
  console.log(`  (check: ${recs.length} tree captures in the journal, each a different tree; no capture errors)`);

  printTimeline(
    "where the Bash hook's time goes",
    Math.min(REPS, 5),
    () => {
      modify();
      input = payload();
    },
    () => traceRun("node", [UNWIND, "hook", "claude"], { cwd: repo, input }),
    { nodeMs: med.node },
  );
}

await standalone(import.meta.url, bench);
