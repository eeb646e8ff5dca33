// Benchmark: a snapshot when one file changes in a very wide directory.
//
// A snapshot edits the trees on the changed paths' way down. A 20,000-entry
// directory is one ~900 KB tree object: the edit finds the changed name by
// binary search and copies the other entries through in runs, where parsing
// and re-serializing the whole tree would cost every snapshot ~100 ms. No
// target; reported next to `git status --porcelain` on the same repository.

import { writeFileSync, mkdirSync } from "node:fs";
import { join } from "node:path";
import { GIT, REPS, UNWIND, fmtMs, gitConfig, intEnv, measure, medians, pairedRatio, printTable, run, standalone, tempDir } from "./lib.mjs";

const WIDE = intEnv("BENCH_WIDE_FILES", 20_000);

function wideRepo() {
  const repo = tempDir("wide");
  const t0 = performance.now();
  mkdirSync(join(repo, "wide"));
  for (let i = 0; i < WIDE; i++) writeFileSync(join(repo, "wide", `module-${i}.ts`), `export const value${i} = ${i};\n`);
  writeFileSync(join(repo, "README.md"), "a wide directory\n");
  run("git", ["init", "-q", "-b", "main"], { cwd: repo });
  gitConfig(repo);
  run("git", [...GIT, "-c", "core.bigFileThreshold=1", "add", "-A"], { cwd: repo });
  run("git", [...GIT, "commit", "-q", "-m", "bench: wide"], { cwd: repo });
  const treeBytes = Number(run("git", ["cat-file", "-s", "HEAD:wide"], { cwd: repo }).stdout.trim());
  let edits = 0;
  const modify = () => {
    edits++;
    writeFileSync(join(repo, "wide", "module-12345.ts"), `export const value12345 = ${12345 + edits};\n`);
  };
  return { repo, treeBytes, modify, seconds: (performance.now() - t0) / 1000 };
}

export async function bench() {
  console.log("unwind snapshot in a wide directory");
  const { repo, treeBytes, modify, seconds } = wideRepo();
  console.log(`  repo      ${WIDE} files in one directory (its tree object: ${(treeBytes / 1024).toFixed(0)} KiB), generated in ${seconds.toFixed(1)} s`);
  run("node", [UNWIND, "snapshot"], { cwd: repo }); // seeds the private index
  console.log(`  1 file in that directory gets new content before each timed command; median of ${REPS} runs after 1 warm-up\n`);

  const commands = {
    status: {
      label: "git status --porcelain (baseline)",
      prepare: modify,
      time: () => run("git", [...GIT, "status", "--porcelain"], { cwd: repo }).ms,
    },
    unwind: { label: "unwind snapshot", prepare: modify, time: () => run("node", [UNWIND, "snapshot"], { cwd: repo }).ms },
    node: { label: "node -e 0 (Node start-up alone)", time: () => run("node", ["-e", "0"], { cwd: repo }).ms },
  };
  const samples = measure(commands);
  const med = medians(samples);
  printTable(commands, samples);

  // The snapshot must have taken the edit: its tree differs from HEAD's only at that file.
  const snap = JSON.parse(run("node", [UNWIND, "--json", "snapshot"], { cwd: repo }).stdout);
  const diff = run("git", ["diff-tree", "-r", "--name-only", "HEAD", snap.tree], { cwd: repo }).stdout.trim();
  if (diff !== "wide/module-12345.ts") throw new Error(`snapshot tree differs from HEAD at: ${diff}`);

  console.log("\n  ratio (no target; ratio of medians, median of per-round ratios in brackets)");
  console.log(`  unwind snapshot / git status       ${(med.unwind / med.status).toFixed(2).padStart(6)}x   [${pairedRatio(samples, "unwind", "status").toFixed(2)}x]`);
  console.log(`  (without Node start-up, (unwind snapshot - node -e 0) = ${fmtMs(med.unwind - med.node)})`);
  console.log("  (check: the snapshot's tree differs from HEAD at the edited file only)");
}

await standalone(import.meta.url, bench);
