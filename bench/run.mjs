// The benchmark suite: runs each benchmark under bench/ in order and prints
// its report. Every figure is judged as a ratio against a baseline measured
// in the same run (these machines are noisy), every time is the median of
// interleaved repetitions after one warm-up round, and the targets are
// informational: the script exits 0 unless something fails.
//
//   snapshot  unwind snapshot on a 100,000-file repository      (snapshot.mjs)
//   hook      unwind hook claude start-up, Edit and Read        (hook.mjs)
//   bash      unwind hook claude Bash pre-capture, 100k files   (bash.mjs)
//   watch     snapshots told by the watcher, 100k files         (watch.mjs)
//   wide      unwind snapshot, 1 change in a 20,000-entry dir   (wide.mjs)
//   store     store bytes for 1,000 captured source files       (store.mjs)
//   task      a 5,000-path task: change set and undo plan       (task.mjs)
//   mcp       unwind mcp start-up: initialize, tools/list       (mcp.mjs)
//   ui        unwind ui start-up: the URL, the first timeline   (ui.mjs)
//   cache     the reuse cache through a full budget vs a Map   (cache.mjs)
//   apply     undo and redo of 10,000 paths vs git checkout,    (apply.mjs)
//             their plan vs git diff --raw, and peak memory (also of 1,000 files of 5 MiB)
//   share     unwind push / fetch of a 1,000-call session vs   (share.mjs)
//             git push / fetch of its branch
//   mono      one Bash call that sed -i's every file: its hook  (mono.mjs)
//             capture vs git add, undo and redo vs git checkout,
//             peak memory at 10k, 30k and 100k paths
//   huge      1,000,000 files: the watcher's start and memory,   (huge.mjs)
//             a watched Bash call vs two git status, an
//             unwatched snapshot vs git status
//   record    sessions, log -n 50, changes of a 10,000-call,    (record.mjs)
//             100,000-path record vs node -e 0; the UI on it in Chromium
//
//   npm run bench                      everything (100,000 files)
//   BENCH_ONLY=hook,task npm run bench a subset (run in the order above)
//   BENCH_FILES=5000 npm run bench     a smaller shared repository, quick check
//   BENCH_REPS=11                      more repetitions (hook: BENCH_HOOK_REPS, default max(REPS, 21))
//   BENCH_STORE_FILES=200              fewer files for the store benchmark
//   BENCH_WIDE_FILES=2000              a narrower directory for the wide benchmark
//   BENCH_UI_REPS=31                   repetitions of the UI start-up (default max(REPS, 15))
//   BENCH_MCP_REPS=31                  repetitions of the MCP start-up (default max(REPS, 21))
//   BENCH_APPLY_FILES=2000             fewer paths for the apply benchmark (default 10,000)
//   BENCH_APPLY_REPS=5                 rounds of the apply benchmark (default 3)
//   BENCH_APPLY_BIG_FILES=200          files of the apply benchmark's memory case (default 1,000; 0 skips it)
//   BENCH_APPLY_BIG_MIB=1              their size in MiB (default 5)
//   BENCH_APPLY_SYNC=0                 no sync before each apply-bench step (files still in the page cache)
//   BENCH_SHARE_CALLS=200              fewer calls in the shared session (default 1,000)
//   BENCH_SHARE_REPS=5                 rounds of the share benchmark (default BENCH_REPS)
//   BENCH_MONO_FILES=10000             the mono benchmark's sizes, a comma list (default 10000,30000,100000)
//   BENCH_MONO_REPS=3                  rounds of its undo, redo and checkouts per size (default 1)
//   BENCH_MONO_CACHE=DIR               where its generated repositories are kept between runs (default the temp dir)
//   BENCH_HUGE_FILES=200000            the huge benchmark's tree (default 1,000,000 files, 1,000 a directory)
//   BENCH_HUGE_CACHE=DIR               where that tree is kept between runs (default the temp dir; made once, minutes)
//   BENCH_RECORD_SESSIONS=20           fewer sessions of 100 calls in the record benchmark (default 100)
//   BENCH_RECORD_UI=0                  no browser rows in the record benchmark
//   BENCH_KEEP=1                       keep the temp directory (path is printed)
//
// The 100,000-file repository is generated once and shared by snapshot,
// bash, watch and task; task runs last because it commits to it.

import { cleanup, machineFacts } from "./lib.mjs";

const SUITE = ["snapshot", "hook", "bash", "watch", "wide", "store", "task", "mcp", "ui", "cache", "apply", "share", "mono", "huge", "record"];

const only = (process.env.BENCH_ONLY ?? "")
  .split(",")
  .map((s) => s.trim())
  .filter(Boolean);
const unknown = only.filter((n) => !SUITE.includes(n));
if (unknown.length) {
  console.error(`BENCH_ONLY: unknown benchmark ${unknown.join(", ")} (known: ${SUITE.join(", ")})`);
  process.exit(2);
}
const selected = only.length ? SUITE.filter((n) => only.includes(n)) : SUITE;

for (const [sig, code] of [
  ["SIGINT", 130],
  ["SIGTERM", 143],
]) {
  process.on(sig, () => {
    cleanup();
    process.exit(code);
  });
}

try {
  console.log("unwind benchmarks");
  console.log(`  machine   ${machineFacts()}`);
  console.log(`  running   ${selected.join(", ")}`);
  for (const name of selected) {
    console.log(`\n${"=".repeat(78)}`);
    const t0 = performance.now();
    const { bench } = await import(`./${name}.mjs`);
    await bench();
    console.log(`\n  (${name}: ${((performance.now() - t0) / 1000).toFixed(0)} s)`);
  }
} finally {
  cleanup();
}
