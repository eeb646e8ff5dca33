// Benchmark: undo and redo at scale. A Claude Bash call rewrites N files
// (BENCH_APPLY_FILES, default 10,000); `unwind undo --session` takes them
// back and `unwind redo --last` brings them again. The baseline is `git
// checkout` writing the same bytes over the same number of files, in a
// clone of the same repository, in the same rounds. No target is asserted:
// the ratios are the figure (issue "Undo at the speed of git checkout").
//
// Before every timed step, on either side, `sync` writes out what is dirty
// and the bench waits a moment, so each command starts from files already
// on disk: the case of an undo a person runs after the agent's work, and the
// same for git. Without it the sides are not alike on ext4: git's files,
// written seconds before, are still in the page cache with no blocks
// allocated, so replacing them frees nothing, while an apply's rename over a
// file makes ext4 allocate the new file's blocks at once (auto_da_alloc), so
// the next round frees them (measured: unlink + create of 10,000 such files
// 0.26 s, of the same files once on disk 2.7-3.8 s). BENCH_APPLY_SYNC=0
// times the other case: each step right after the last.

import { mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { spawnSync } from "node:child_process";
import { BASE_ENV, GIT, ROOT, UNWIND, intEnv, median, run, sleep, standalone, tempDir } from "./lib.mjs";

const FILES = intEnv("BENCH_APPLY_FILES", 10_000);
const ROUNDS = intEnv("BENCH_APPLY_REPS", 3);
// The memory case of the issue: 1,000 files of 5 MiB each. Text that compresses (the store and git
// deflate it), so the case costs minutes and a few GiB of disk, not tens.
const BIG_FILES = process.env.BENCH_APPLY_BIG_FILES === "0" ? 0 : intEnv("BENCH_APPLY_BIG_FILES", 1000);
const BIG_MIB = intEnv("BENCH_APPLY_BIG_MIB", 5);
const SETTLE = process.env.BENCH_APPLY_SYNC !== "0";
// BENCH_APPLY_ATTRIBUTES="* text eol=lf" (any .gitattributes text): the same case in a tree whose files git converts.
const ATTRIBUTES = process.env.BENCH_APPLY_ATTRIBUTES ?? "";

/** Writes out every dirty page and lets the disk go quiet, so the next step starts from files on disk. */
function settle() {
  if (!SETTLE) return;
  spawnSync("sync", []);
  sleep(500);
}

export async function bench() {
  console.log("unwind undo / redo at scale");
  const repo = tempDir("apply-repo");
  const git = (cwd, ...args) => run("git", [...GIT, ...args], { cwd, env: { GIT_AUTHOR_NAME: "b", GIT_AUTHOR_EMAIL: "b@b", GIT_COMMITTER_NAME: "b", GIT_COMMITTER_EMAIL: "b@b" } }).stdout.trim();
  git(repo, "init", "-q", "-b", "main");
  const dirs = Math.ceil(FILES / 100);
  const path = (i) => join(`d${i % dirs}`, `f${i}.txt`);
  const original = (i) => `line ${i}\n`.repeat(20);
  for (let d = 0; d < dirs; d++) mkdirSync(join(repo, `d${d}`));
  for (let i = 0; i < FILES; i++) writeFileSync(join(repo, path(i)), original(i));
  // A real repository's attributes: git converts every file (babel's `* text eol=lf`).
  if (ATTRIBUTES) writeFileSync(join(repo, ".gitattributes"), ATTRIBUTES);
  git(repo, "add", "-A");
  git(repo, "commit", "-q", "-m", "original");
  const A = git(repo, "rev-parse", "HEAD");

  // One Bash call through the real hook: pre, the rewrite, post.
  const fixture = JSON.parse(readFileSync(join(ROOT, "test", "fixtures", "hooks", "claude", "bash.pre.json"), "utf8"));
  const session = "bench-apply-0000";
  const payload = (event) => JSON.stringify({ ...fixture, session_id: session, cwd: repo, hook_event_name: event, tool_use_id: "toolu_bench_apply" });
  run("node", [UNWIND, "hook", "claude"], { cwd: repo, input: payload("PreToolUse") });
  for (let i = 0; i < FILES; i++) writeFileSync(join(repo, path(i)), `${original(i)}rewritten\n`);
  run("node", [UNWIND, "hook", "claude"], { cwd: repo, input: payload("PostToolUse") });

  // The baseline's repository: the same files, with the rewritten state as a commit to check out.
  const base = tempDir("apply-git");
  git(base, "clone", "-q", repo, ".");
  for (let i = 0; i < FILES; i++) writeFileSync(join(base, path(i)), `${original(i)}rewritten\n`);
  git(base, "add", "-A");
  git(base, "commit", "-q", "-m", "rewritten");
  const B = git(base, "rev-parse", "HEAD");
  // A second baseline for the plan: the same change as a work tree holds it. The index of this clone is
  // A's, stat data and all, and the rewritten bytes are written over it afterwards. The rewrite grows
  // every file, so `git diff --raw` knows each changed from its lstat alone and opens none of them
  // (strace: 0 of 200 files opened, against all 200 when a rewrite keeps the sizes); the plan reads
  // every path in scope to know what it holds now. bench/mono.mjs times the same ratio on a sed that
  // keeps the sizes, where git reads every file too. (`git diff` writes no index: each round sees the
  // same stale one.)
  const worktree = tempDir("apply-wt");
  git(worktree, "clone", "-q", repo, ".");
  for (let i = 0; i < FILES; i++) writeFileSync(join(worktree, path(i)), `${original(i)}rewritten\n`);
  console.log(`  repo      ${FILES} files in ${dirs} directories; one Bash call rewrote all of them${ATTRIBUTES ? `; .gitattributes ${JSON.stringify(ATTRIBUTES)}` : ""}`);
  console.log(`  rounds    ${ROUNDS} after 1 warm-up; each: undo, redo, and git checkout of the same bytes both ways`);
  console.log(
    `  disk      ${SETTLE ? "sync and 0.5 s of quiet before each undo, redo and checkout: every step starts from files on disk" : "no sync between steps (BENCH_APPLY_SYNC=0): each step replaces files the last one left in the page cache"}\n`,
  );

  const samples = { undo: [], redo: [], back: [], forth: [], plan: [], diff: [], wtdiff: [] };
  const rss = { undo: [], redo: [] };
  // Peak resident memory of the process (bench/rss.cjs prints it at exit).
  const unwind = (args, key) => {
    settle();
    const t0 = process.hrtime.bigint();
    const r = spawnSync("node", ["-r", join(ROOT, "bench", "rss.cjs"), UNWIND, ...args], { cwd: repo, env: BASE_ENV, encoding: "utf8" });
    const ms = Number(process.hrtime.bigint() - t0) / 1e6;
    if (r.status !== 0) throw new Error(`unwind ${args.join(" ")} exited ${r.status}: ${r.stderr.trim()}`);
    const kb = Number(/unwind-bench-maxrss (\d+)/.exec(r.stderr)?.[1]);
    rss[key].push(kb / 1024);
    return ms;
  };
  const check = (expect) => {
    for (const i of [0, FILES >> 1, FILES - 1]) {
      const got = readFileSync(join(repo, path(i)), "utf8");
      if (got !== expect(i)) throw new Error(`${path(i)} holds the wrong bytes after the apply`);
    }
  };
  const gitSettled = (...args) => {
    settle();
    return run("git", [...GIT, ...args], { cwd: base }).ms;
  };
  let first = null;
  for (let round = 0; round <= ROUNDS; round++) {
    const t = {
      plan: run("node", [UNWIND, "undo", "--session", session, "--dry-run", "-q"], { cwd: repo }).ms,
      diff: run("git", [...GIT, "diff", "--raw", B, A], { cwd: base }).ms,
      wtdiff: run("git", [...GIT, "diff", "--raw"], { cwd: worktree }).ms,
      undo: unwind(["undo", "--session", session, "-q"], "undo"),
      back: gitSettled("checkout", "-q", A, "--", "."),
    };
    check(original);
    t.redo = unwind(["redo", "--last", "-q"], "redo");
    t.forth = gitSettled("checkout", "-q", B, "--", ".");
    check((i) => `${original(i)}rewritten\n`);
    if (round > 0) for (const k of Object.keys(samples)) samples[k].push(t[k]);
    else first = t;
  }
  const med = Object.fromEntries(Object.entries(samples).map(([k, xs]) => [k, median(xs)]));
  const row = (label, k) => console.log(`  ${label.padEnd(44)} ${(med[k] / 1000).toFixed(2).padStart(7)} s   (${samples[k].map((x) => (x / 1000).toFixed(2)).join(", ")})`);
  row(`unwind undo --session (${FILES} paths back)`, "undo");
  row(`unwind redo --last (${FILES} paths again)`, "redo");
  row("git checkout A -- . (the same bytes back)", "back");
  row("git checkout B -- . (the same bytes again)", "forth");
  row(`unwind undo --session --dry-run (plan ${FILES})`, "plan");
  row("git diff --raw B A (the same change)", "diff");
  row("git diff --raw (the change in a work tree)", "wtdiff");
  // The warm-up round's undo is the one a person meets: the first undo of the session, which also keeps
  // every path's current bytes in the store (for redo) before overwriting it; later rounds find them there.
  console.log(
    `  first undo of the session (the warm-up round)  ${(first.undo / 1000).toFixed(2).padStart(7)} s   git checkout then ${(first.back / 1000).toFixed(2)} s: ${(first.undo / first.back).toFixed(2)}x`,
  );
  // Every round's undo and redo leave a receipt over the same paths, which later plans read (the timeline
  // tells unwind's own writes from anyone else's): the warm-up round's dry run is the one with none yet.
  console.log(
    `  first dry run (no receipts yet)                ${(first.plan / 1000).toFixed(2).padStart(7)} s   git diff --raw then ${(first.diff / 1000).toFixed(2)} s, in the work tree ${(first.wtdiff / 1000).toFixed(2)} s`,
  );
  const paired = (a, b) => median(samples[a].map((x, i) => x / samples[b][i]));
  console.log("\n  ratios (no target asserted; the issue asks for <= 2x; median of per-round ratios in brackets)");
  console.log(`  undo / git checkout                ${(med.undo / med.back).toFixed(2).padStart(6)}x   [${paired("undo", "back").toFixed(2)}x]`);
  console.log(`  redo / git checkout                ${(med.redo / med.forth).toFixed(2).padStart(6)}x   [${paired("redo", "forth").toFixed(2)}x]`);
  console.log(`  plan / git diff --raw               ${(med.plan / med.diff).toFixed(2).padStart(6)}x   [${paired("plan", "diff").toFixed(2)}x]   (the issue asks for <= 3x)`);
  console.log(
    `  plan / git diff --raw, work tree    ${(med.plan / med.wtdiff).toFixed(2).padStart(6)}x   [${paired("plan", "wtdiff").toFixed(2)}x]   (the sizes changed: git reads no file, the plan every one)`,
  );
  console.log(`  peak memory: undo ${median(rss.undo).toFixed(0)} MiB, redo ${median(rss.redo).toFixed(0)} MiB   (no target asserted; the issue asks for < 128 MiB at 10,000 paths)`);
  console.log("  (check: after every undo and redo, sampled files hold exactly the expected bytes)");
  if (BIG_FILES > 0) await bigFiles(median(rss.undo));
}

/**
 * Peak memory of an undo and a redo of BIG_FILES files of BIG_MIB MiB each
 * (one Bash call rewrote them), against the 10,000-small-path undo's peak
 * measured above: memory must not grow with the bytes restored.
 */
async function bigFiles(smallUndoMiB) {
  const repo = tempDir("apply-big");
  const git = (...args) => run("git", [...GIT, ...args], { cwd: repo, env: { GIT_AUTHOR_NAME: "b", GIT_AUTHOR_EMAIL: "b@b", GIT_COMMITTER_NAME: "b", GIT_COMMITTER_EMAIL: "b@b" } });
  git("init", "-q", "-b", "main");
  const size = BIG_MIB << 20;
  const content = (i, tag) => {
    const line = `file ${i} ${tag} ${"x".repeat(60)}\n`;
    return Buffer.from(line.repeat(Math.ceil(size / line.length))).subarray(0, size);
  };
  mkdirSync(join(repo, "big"));
  for (let i = 0; i < BIG_FILES; i++) writeFileSync(join(repo, "big", `f${i}.txt`), content(i, "original"));
  git("add", "-A");
  git("commit", "-q", "-m", "original");
  const fixture = JSON.parse(readFileSync(join(ROOT, "test", "fixtures", "hooks", "claude", "bash.pre.json"), "utf8"));
  const session = "bench-apply-big";
  const payload = (event) => JSON.stringify({ ...fixture, session_id: session, cwd: repo, hook_event_name: event, tool_use_id: "toolu_bench_big" });
  // Hashing GiBs takes longer than a hook's default budget (10 s), after which it would give up the capture.
  const budget = { UNWIND_HOOK_BUDGET_MS: "3600000" };
  run("node", [UNWIND, "hook", "claude"], { cwd: repo, input: payload("PreToolUse"), env: budget });
  for (let i = 0; i < BIG_FILES; i++) writeFileSync(join(repo, "big", `f${i}.txt`), content(i, "rewritten"));
  run("node", [UNWIND, "hook", "claude"], { cwd: repo, input: payload("PostToolUse"), env: budget });
  const peak = (args) => {
    const t0 = process.hrtime.bigint();
    const r = spawnSync("node", ["-r", join(ROOT, "bench", "rss.cjs"), UNWIND, ...args], { cwd: repo, env: BASE_ENV, encoding: "utf8" });
    if (r.status !== 0) throw new Error(`unwind ${args.join(" ")} exited ${r.status}: ${r.stderr.trim()}`);
    return { mib: Number(/unwind-bench-maxrss (\d+)/.exec(r.stderr)?.[1]) / 1024, s: Number(process.hrtime.bigint() - t0) / 1e9 };
  };
  const undo = peak(["undo", "--session", session, "-q"]);
  if (!readFileSync(join(repo, "big", "f0.txt")).equals(content(0, "original"))) throw new Error("big/f0.txt holds the wrong bytes after the undo");
  const redo = peak(["redo", "--last", "-q"]);
  if (!readFileSync(join(repo, "big", `f${BIG_FILES - 1}.txt`)).equals(content(BIG_FILES - 1, "rewritten"))) throw new Error("the last big file holds the wrong bytes after the redo");
  const total = (BIG_FILES * BIG_MIB) / 1024;
  console.log(`\n  ${BIG_FILES} files of ${BIG_MIB} MiB (${total.toFixed(1)} GiB) rewritten by one Bash call`);
  console.log(`  peak memory: undo ${undo.mib.toFixed(0)} MiB in ${undo.s.toFixed(1)} s, redo ${redo.mib.toFixed(0)} MiB in ${redo.s.toFixed(1)} s   (the issue asks for < 256 MiB)`);
  console.log(`  big undo peak / ${FILES}-path undo peak    ${(undo.mib / smallUndoMiB).toFixed(2)}x   (memory independent of the bytes restored: about 1x)`);
}

await standalone(import.meta.url, bench);
