// Benchmark: a task with 5,000 changed paths. Resolve its change set and plan
// its undo; report the time next to `git diff --raw` for the same range, in
// the same run. No target.
//
// The shared 100,000-file repository (lib.mjs bigRepo): `unwind task start T
// --branch task-5k`, then five commits on task-5k (3,000 files modified,
// 1,000 added, 1,000 deleted; disjoint), then task-5k merged into main with
// a merge commit. The main worktree therefore holds every path at its post
// state, and the dry-run plan has 5,000 real actions: 4,000 restores and
// 1,000 deletes.

import { FILES, GIT, REPS, UNWIND, baseContent, bigRepo, fmtMs, measure, medians, pairedRatio, printTable, printTimeline, prng, relPath, run, standalone, traceRun } from "./lib.mjs";
import { makeSource } from "./source-gen.mjs";

const TASK = "bench-5k";
const BRANCH = "task-5k";
const COMMITS = 5;
// 5,000 paths: 60% modified, 20% added, 20% deleted. A smaller shared repository (BENCH_FILES, for
// a quick check) gets a proportionally smaller task: at most half its files are touched.
const PATHS = Math.min(5000, Math.floor(FILES / 2));
const MODIFIED = Math.round(PATHS * 0.6);
const DELETED = Math.round(PATHS * 0.2);
const ADDED = PATHS - MODIFIED - DELETED;

/** Builds the task's commits with git fast-import (the work tree is not touched). */
function commitTask(repo, fork, files) {
  const r = prng(5000);
  const picked = new Set();
  while (picked.size < MODIFIED + DELETED) picked.add(r.int(0, files - 1));
  const existing = [...picked];
  const changes = [];
  for (const i of existing.slice(0, MODIFIED)) changes.push({ op: "M", path: relPath(i), data: `${baseContent(i)}// changed by task ${TASK}\n` });
  for (const i of existing.slice(MODIFIED)) changes.push({ op: "D", path: relPath(i) });
  for (let k = 0; k < ADDED; k++) {
    // New modules next to existing ones (and a few new directories), with content unlike any
    // deleted file, so git's rename detection has no pairs to find.
    const leaf = r.int(0, Math.ceil(files / 100) - 1);
    const dir =
      k % 10 === 0
        ? `${relPath(leaf * 100)
            .split("/")
            .slice(0, 3)
            .join("/")}/new${k % 7}`
        : relPath(leaf * 100)
            .split("/")
            .slice(0, 3)
            .join("/");
    changes.push({ op: "M", path: `${dir}/task-${k}.ts`, data: makeSource(70_000 + k, r.int(300, 2000)) });
  }
  // Shuffle, then split into commits.
  for (let i = changes.length - 1; i > 0; i--) {
    const j = Math.floor(r() * (i + 1));
    [changes[i], changes[j]] = [changes[j], changes[i]];
  }
  const per = Math.ceil(changes.length / COMMITS);
  const out = [];
  const data = (s) => `data ${Buffer.byteLength(s)}\n${s}\n`;
  for (let c = 0; c < COMMITS; c++) {
    out.push(`commit refs/heads/${BRANCH}\ncommitter unwind bench <bench@localhost> ${1_700_000_000 + c * 60} +0000\n${data(`task ${TASK}: part ${c + 1}`)}`);
    if (c === 0) out.push(`from ${fork}\n`);
    for (const ch of changes.slice(c * per, (c + 1) * per)) {
      out.push(ch.op === "D" ? `D ${ch.path}\n` : `M 100644 inline ${ch.path}\n${data(ch.data)}`);
    }
    out.push("\n");
  }
  run("git", ["fast-import", "--quiet"], { cwd: repo, input: out.join("") });
  return changes.length;
}

export async function bench() {
  console.log(`unwind task change set benchmark (${PATHS.toLocaleString("en-US")} changed paths)`);
  const { repo, summary, files } = bigRepo();
  console.log(`  repo      ${summary}`);
  // Earlier benchmarks leave edits in the shared work tree; the task starts from a clean main.
  run("git", [...GIT, "reset", "-q", "--hard", "HEAD"], { cwd: repo });

  let t = performance.now();
  const binding = JSON.parse(run("node", [UNWIND, "--json", "task", "start", TASK, "--branch", BRANCH], { cwd: repo }).stdout);
  const fork = binding.fork;
  const n = commitTask(repo, fork, files);
  const made = performance.now() - t;
  t = performance.now();
  run("git", [...GIT, "merge", "-q", "--no-ff", "--no-edit", BRANCH], { cwd: repo });
  const merged = performance.now() - t;
  console.log(
    `  task      ${TASK} on branch ${BRANCH}, forked at ${fork.slice(0, 12)}: ${COMMITS} commits, ${n} paths (${MODIFIED} modified, ${ADDED} added, ${DELETED} deleted) in ${(made / 1000).toFixed(1)} s`,
  );
  console.log(`            merged into main (--no-ff) in ${(merged / 1000).toFixed(1)} s; unwind runs from the main worktree, where every path is at its post state`);
  console.log(`  median of ${REPS} runs after 1 warm-up, interleaved\n`);

  const range = [fork, BRANCH];
  const commands = {
    diff: {
      label: "git diff --raw <fork> task-5k (baseline)",
      time() {
        const r = run("git", [...GIT, "diff", "--raw", ...range], { cwd: repo });
        const lines = r.stdout.split("\n").filter(Boolean).length;
        if (lines !== n) throw new Error(`git diff --raw listed ${lines} paths, expected ${n}`);
        return r.ms;
      },
    },
    diffNoRenames: {
      label: "git diff --raw --no-renames <fork> task-5k",
      time: () => run("git", [...GIT, "diff", "--raw", "--no-renames", ...range], { cwd: repo }).ms,
    },
    changes: {
      label: "unwind changes --task --json",
      time() {
        const r = run("node", [UNWIND, "changes", "--task", TASK, "--json"], { cwd: repo });
        const got = JSON.parse(r.stdout).entries.length;
        if (got !== n) throw new Error(`unwind changes listed ${got} paths, expected ${n}`);
        return r.ms;
      },
    },
    undo: {
      label: "unwind undo --task --dry-run --json",
      time() {
        const r = run("node", [UNWIND, "undo", "--task", TASK, "--dry-run", "--json"], { cwd: repo });
        const { counts, items } = JSON.parse(r.stdout);
        const want = { restore: MODIFIED + DELETED, delete: ADDED };
        if (items.length !== n || counts.restore !== want.restore || counts.delete !== want.delete) {
          throw new Error(`unwind undo --dry-run planned ${JSON.stringify(counts)} for ${items.length} paths, expected ${JSON.stringify(want)}`);
        }
        return r.ms;
      },
    },
    node: { label: "node -e 0 (Node start-up alone)", time: () => run("node", ["-e", "0"], { cwd: repo }).ms },
  };
  const samples = measure(commands);
  const med = medians(samples);
  printTable(commands, samples);

  const ratio = (a, b) => `${(med[a] / med[b]).toFixed(2).padStart(6)}x   [${pairedRatio(samples, a, b).toFixed(2)}x]`;
  console.log("\n  ratios (no target; ratio of medians, median of per-round ratios in brackets)");
  console.log(`  unwind undo --dry-run / git diff --raw     ${ratio("undo", "diff")}`);
  console.log(`  unwind changes / git diff --raw            ${ratio("changes", "diff")}`);
  console.log(`  unwind undo --dry-run / unwind changes     ${ratio("undo", "changes")}   (the plan's own share: observing and reading ${n} paths)`);
  console.log(`  (without Node start-up, (undo - node -e 0) / git diff --raw = ${((med.undo - med.node) / med.diff).toFixed(2)}x, per path ${fmtMs((med.undo - med.node) / n).trim()})`);
  console.log(`  (check: every run listed ${n} paths; the plan was ${MODIFIED + DELETED} restores and ${ADDED} deletes)`);

  const traced = (args) => () => traceRun("node", [UNWIND, ...args], { cwd: repo });
  printTimeline("where unwind undo --dry-run's time goes", Math.min(REPS, 5), null, traced(["undo", "--task", TASK, "--dry-run", "--json"]), { nodeMs: med.node });
  printTimeline("where unwind changes' time goes", Math.min(REPS, 5), null, traced(["changes", "--task", TASK, "--json"]), { nodeMs: med.node });
}

await standalone(import.meta.url, bench);
