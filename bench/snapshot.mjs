// Benchmark: how fast is `unwind snapshot` on a large repository?
//
//   unwind snapshot / git status --porcelain          target <= 1.5x
//   fresh-index method / unwind snapshot              target >= 4x
//   store bytes one no-change snapshot adds           target <= 2 KB
//
// Where unwind's time goes is read from git's own trace2 timings of unwind's
// run (lib.mjs traceRun), so no git command line of unwind's is copied here.

import { lstatSync, readdirSync, rmSync } from "node:fs";
import { join } from "node:path";
import { CHANGED, GIT, REPS, UNWIND, bigRepo, fmtMs, measure, medians, pairedRatio, printTable, printTimeline, run, standalone, tempDir, traceRun, verdict, statusBaseline } from "./lib.mjs";

const TARGET_SNAPSHOT_VS_STATUS = 1.5; // unwind snapshot may cost at most 1.5x git status
const TARGET_FRESH_VS_SNAPSHOT = 4; // unwind must be at least 4x faster than a fresh index
const TARGET_NOCHANGE_BYTES = 2048;

// Each timed command is a whole process (or, for the fresh index, three),
// timed from spawn to exit. Every command that needs changes gets fresh ones
// right before it runs (so neither unwind nor the fresh index finds blobs the
// other already wrote): against HEAD and the real index for git status and
// the fresh index, against the last snapshot for unwind.
function makeCommands(repo, scratch, modify) {
  const freshIndex = join(scratch, "fresh.index");
  return {
    status: statusBaseline(repo, modify),
    unwind: {
      label: "unwind snapshot",
      prepare: modify,
      time: () => run("node", [UNWIND, "snapshot"], { cwd: repo }).ms,
    },
    fresh: {
      label: "fresh index (read-tree, add -A, write-tree)",
      prepare: modify,
      time() {
        rmSync(freshIndex, { force: true }); // fresh means no stat data to reuse
        const env = { GIT_INDEX_FILE: freshIndex };
        let ms = 0;
        ms += run("git", [...GIT, "read-tree", "HEAD"], { cwd: repo, env }).ms;
        ms += run("git", [...GIT, "add", "-A"], { cwd: repo, env }).ms;
        ms += run("git", [...GIT, "write-tree"], { cwd: repo, env }).ms;
        return ms;
      },
    },
    node: {
      label: "node -e 0 (Node start-up alone)",
      time: () => run("node", ["-e", "0"], { cwd: repo }).ms,
    },
  };
}

/** unwind and the fresh-index method must produce the same tree, or we compare different work. */
function checkSameTree(repo, scratch, modify) {
  modify();
  const snap = JSON.parse(run("node", [UNWIND, "--json", "snapshot"], { cwd: repo }).stdout);
  const env = { GIT_INDEX_FILE: join(scratch, "check.index") };
  run("git", [...GIT, "read-tree", "HEAD"], { cwd: repo, env });
  run("git", [...GIT, "add", "-A"], { cwd: repo, env });
  const tree = run("git", [...GIT, "write-tree"], { cwd: repo, env }).stdout.trim();
  if (snap.tree !== tree) throw new Error(`unwind snapshot tree ${snap.tree} != fresh-index tree ${tree}`);
  return tree;
}

// Store bytes: sum of file sizes in what a snapshot can write to.
function sizes(repo) {
  const out = new Map();
  const walk = (p) => {
    let st;
    try {
      st = lstatSync(p);
    } catch {
      return; // absent (e.g. no packed-refs yet)
    }
    if (st.isDirectory()) for (const e of readdirSync(p)) walk(join(p, e));
    else out.set(p.slice(repo.length + 1), st.size);
  };
  for (const p of [".git/unwind", ".git/objects", ".git/refs/unwind", ".git/packed-refs"]) walk(join(repo, p));
  return out;
}

function noChangeBytes(repo) {
  run("node", [UNWIND, "snapshot"], { cwd: repo }); // capture whatever is pending
  const before = sizes(repo);
  run("node", [UNWIND, "snapshot"], { cwd: repo }); // nothing changed in between
  const after = sizes(repo);
  const delta = [];
  let total = 0;
  for (const p of new Set([...before.keys(), ...after.keys()])) {
    const d = (after.get(p) ?? 0) - (before.get(p) ?? 0);
    if (d !== 0) delta.push([p, d]);
    total += d;
  }
  return { total, delta: delta.sort((a, b) => b[1] - a[1]) };
}

export async function bench() {
  console.log("unwind snapshot benchmark");
  const { repo, summary, modify } = bigRepo();
  const scratch = tempDir("snapshot-scratch");
  console.log(`  repo      ${summary}`);

  // The first snapshot seeds unwind's private index from the real one.
  const first = run("node", [UNWIND, "snapshot"], { cwd: repo }).ms;
  console.log(`  first unwind snapshot (seeds the private index): ${fmtMs(first)}`);
  console.log(`  ${CHANGED} files get new content before each timed command; median of ${REPS} runs after 1 warm-up\n`);

  const commands = makeCommands(repo, scratch, modify);
  const samples = measure(commands);
  const med = medians(samples);
  printTable(commands, samples);

  const tree = checkSameTree(repo, scratch, modify);
  const bytes = noChangeBytes(repo);

  // Verdicts use the ratio of medians. The median of per-round ratios (each
  // pair ran seconds apart) is shown too: it shrugs off load that drifts
  // during the run, so a large gap between the two means a noisy machine.
  const paired = (a, b) => pairedRatio(samples, a, b).toFixed(2);
  const vsStatus = med.unwind / med.status;
  const vsFresh = med.fresh / med.unwind;
  console.log("\n  targets (ratio of medians; median of per-round ratios in brackets)");
  console.log(
    `  unwind snapshot / git status       ${vsStatus.toFixed(2).padStart(6)}x   target <= ${TARGET_SNAPSHOT_VS_STATUS}x   ${verdict(vsStatus <= TARGET_SNAPSHOT_VS_STATUS)}   [${paired("unwind", "status")}x]`,
  );
  console.log(
    `  fresh index / unwind snapshot      ${vsFresh.toFixed(2).padStart(6)}x   target >= ${TARGET_FRESH_VS_SNAPSHOT}x     ${verdict(vsFresh >= TARGET_FRESH_VS_SNAPSHOT)}   [${paired("fresh", "unwind")}x]`,
  );
  console.log(`  (without Node start-up, (unwind snapshot - node -e 0) / git status = ${((med.unwind - med.node) / med.status).toFixed(2)}x)`);
  console.log(`  store bytes, no-change snapshot    ${String(bytes.total).padStart(6)} B   target <= ${TARGET_NOCHANGE_BYTES} B ${verdict(bytes.total <= TARGET_NOCHANGE_BYTES)}`);
  for (const [p, d] of bytes.delta.slice(0, 8)) console.log(`      ${d > 0 ? "+" : ""}${d} B  ${p}`);
  if (bytes.delta.length > 8) console.log(`      ... ${bytes.delta.length - 8} more`);
  console.log(`  (check: unwind and the fresh index wrote the same tree ${tree.slice(0, 12)})`);

  printTimeline("where unwind snapshot's time goes", Math.min(REPS, 5), modify, () => traceRun("node", [UNWIND, "snapshot"], { cwd: repo }), {
    nodeMs: med.node,
  });
}

await standalone(import.meta.url, bench);
