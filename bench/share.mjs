// Benchmark: `unwind push` and `unwind fetch` of a 1,000-call session (SPEC
// section 14), each as a ratio against git pushing and fetching the branch
// that holds the same work, in the same run. No target: the ratio says what
// sharing the record costs next to sharing the branch.
//
// A repository of 2,000 small source files; one session of 1,000 calls made
// through the library (`record`, as `unwind record` does): 900 file calls,
// each editing one file (pre capture, write, post capture), and 100 shell
// calls (tree snapshots around a write). The work is committed on branch
// `agent`. Every round (prepare, untimed) starts from a fresh bare remote
// and a fresh empty clone, and drops the local record refs, so each push and
// fetch is a first one; "again" rows push and fetch once more with nothing new.
//
//   BENCH_SHARE_CALLS=200   fewer calls (default 1,000)
//   BENCH_SHARE_REPS=5      rounds (default: BENCH_REPS, 7)

import { existsSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { GIT, ROOT, UNWIND, fmtBytes, gitConfig, intEnv, measure, medians, pairedRatio, printTable, REPS, run, standalone, tempDir } from "./lib.mjs";

const CALLS = intEnv("BENCH_SHARE_CALLS", 1000);
const SHARE_REPS = intEnv("BENCH_SHARE_REPS", REPS);
const FILES = 2000;
const SESSION = "claude:bench-share-0000-1111";

const source = (i, v) => `// module ${i}, version ${v}\nexport function f${i}(x: number): number {\n  return x * ${i} + ${v};\n}\n${"// padding line\n".repeat(20)}`;

async function buildRepo() {
  const base = tempDir("share");
  const a = join(base, "a");
  run("git", ["init", "-q", "-b", "main", a]);
  gitConfig(a);
  for (let i = 0; i < FILES; i++) {
    const dir = join(a, "src", `d${i % 40}`);
    if (i < 40) run("mkdir", ["-p", dir]);
    writeFileSync(join(dir, `m${i}.ts`), source(i, 0));
  }
  run("git", [...GIT, "add", "-A"], { cwd: a });
  run("git", [...GIT, "commit", "-q", "-m", "initial"], { cwd: a });
  run("git", ["checkout", "-q", "-b", "agent"], { cwd: a });
  const { open } = await import(pathToFileURL(join(ROOT, "dist", "lib", "index.js")).href);
  const u = await open({ root: a });
  const t0 = performance.now();
  for (let k = 0; k < CALLS; k++) {
    const i = (k * 7919) % FILES;
    const rel = `src/d${i % 40}/m${i}.ts`;
    const shell = k % 10 === 9;
    const call = `toolu_bench_${k}`;
    const paths = shell ? [] : [rel];
    const tool = shell ? "Bash" : "Edit";
    await u.record(paths, { session: SESSION, phase: "pre", tool, call, cwd: a });
    writeFileSync(join(a, rel), source(i, k + 1));
    await u.record(paths, { session: SESSION, phase: "post", tool, call, cwd: a });
  }
  const recordMs = performance.now() - t0;
  run("git", [...GIT, "add", "-A"], { cwd: a });
  run("git", [...GIT, "commit", "-q", "-m", "agent work"], { cwd: a });
  return { base, a, recordMs };
}

export async function bench() {
  console.log(`share: unwind push / fetch of a ${CALLS.toLocaleString("en-US")}-call session vs git push / fetch of its branch`);
  if (!existsSync(join(ROOT, "dist", "lib", "index.js"))) throw new Error("run npm run build first");
  const { base, a, recordMs } = await buildRepo();
  console.log(`  session   ${CALLS} calls recorded through the library in ${(recordMs / 1000).toFixed(1)} s; ${FILES} files, branch 'agent'`);
  const remote = join(base, "remote.git");
  const b = join(base, "b");
  const fresh = () => {
    rmSync(remote, { recursive: true, force: true });
    run("git", ["init", "-q", "--bare", "-b", "main", remote]);
  };
  const freshClone = () => {
    rmSync(b, { recursive: true, force: true });
    run("git", ["init", "-q", "-b", "main", b]);
    gitConfig(b);
    run("git", ["remote", "add", "origin", remote], { cwd: b });
  };
  const dropLocalRecordRefs = () => {
    const refs = run("git", ["for-each-ref", "--format=%(refname)", "refs/unwind/shared/"], { cwd: a }).stdout.split("\n").filter(Boolean);
    for (const r of refs) run("git", ["update-ref", "-d", r], { cwd: a });
  };
  if (!run("git", ["remote"], { cwd: a }).stdout.includes("origin")) run("git", ["remote", "add", "origin", remote], { cwd: a });
  // Both on one remote, so a fetch finds both; each push row starts from a remote that lacks what it sends.
  const pushBoth = () => {
    fresh();
    dropLocalRecordRefs();
    run("git", ["push", "-q", "origin", "agent"], { cwd: a });
    run("node", [UNWIND, "push", "--session", SESSION], { cwd: a });
  };
  // One untimed push, for the sizes.
  pushBoth();
  const report = JSON.parse(run("node", [UNWIND, "push", "--session", SESSION, "--dry-run", "--json"], { cwd: a }).stdout);
  const s = report.sessions[0];
  const packed = (dir) => run("git", ["count-objects", "-v"], { cwd: dir }).stdout;
  console.log(
    `  record    ${s.entries} paths, ${s.blobs} content blobs, ${fmtBytes(s.bytes)} in its blobs; remote after both pushes: ${packed(remote).match(/size-pack: (\d+)/)?.[1] ?? "?"} KiB packed`,
  );

  const commands = {
    gitPush: { label: "git push origin agent (fresh remote)", prepare: fresh, time: () => run("git", ["push", "-q", "origin", "agent"], { cwd: a }).ms },
    unwindPush: {
      label: "unwind push --session S (fresh remote, first push)",
      prepare: () => {
        fresh();
        dropLocalRecordRefs();
      },
      time: () => run("node", [UNWIND, "push", "--session", SESSION], { cwd: a }).ms,
    },
    gitPushAgain: { label: "git push origin agent (nothing new)", prepare: () => {}, time: () => run("git", ["push", "-q", "origin", "agent"], { cwd: a }).ms },
    unwindPushAgain: { label: "unwind push --session S (nothing new)", prepare: () => {}, time: () => run("node", [UNWIND, "push", "--session", SESSION], { cwd: a }).ms },
    gitFetch: {
      label: "git fetch origin agent (fresh clone)",
      prepare: () => {
        pushBoth();
        freshClone();
      },
      time: () => run("git", ["fetch", "-q", "origin", "agent"], { cwd: b }).ms,
    },
    unwindFetch: {
      label: "unwind fetch (fresh clone)",
      prepare: () => {
        pushBoth();
        freshClone();
      },
      time: () => run("node", [UNWIND, "fetch"], { cwd: b }).ms,
    },
    gitFetchAgain: { label: "git fetch origin agent (nothing new)", prepare: () => {}, time: () => run("git", ["fetch", "-q", "origin", "agent"], { cwd: b }).ms },
    unwindFetchAgain: { label: "unwind fetch (nothing new)", prepare: () => {}, time: () => run("node", [UNWIND, "fetch"], { cwd: b }).ms },
  };
  // "again" rows need what the first rows left: each pair is measured on its own, in this order.
  const firstPush = measure({ gitPush: commands.gitPush, unwindPush: commands.unwindPush }, SHARE_REPS);
  pushBoth();
  const againPush = measure({ gitPushAgain: commands.gitPushAgain, unwindPushAgain: commands.unwindPushAgain }, SHARE_REPS);
  const firstFetch = measure({ gitFetch: commands.gitFetch, unwindFetch: commands.unwindFetch }, SHARE_REPS);
  pushBoth();
  freshClone();
  run("git", ["fetch", "-q", "origin", "agent"], { cwd: b });
  run("node", [UNWIND, "fetch"], { cwd: b });
  const againFetch = measure({ gitFetchAgain: commands.gitFetchAgain, unwindFetchAgain: commands.unwindFetchAgain }, SHARE_REPS);
  const samples = { ...firstPush, ...againPush, ...firstFetch, ...againFetch };
  console.log();
  printTable(commands, samples);
  const m = medians(samples);
  console.log();
  console.log(`  push, first:      unwind ${m.unwindPush.toFixed(0)} ms / git ${m.gitPush.toFixed(0)} ms = ${pairedRatio(samples, "unwindPush", "gitPush").toFixed(2)}x`);
  console.log(`  push, nothing new: unwind ${m.unwindPushAgain.toFixed(0)} ms / git ${m.gitPushAgain.toFixed(0)} ms = ${pairedRatio(samples, "unwindPushAgain", "gitPushAgain").toFixed(2)}x`);
  console.log(`  fetch, first:     unwind ${m.unwindFetch.toFixed(0)} ms / git ${m.gitFetch.toFixed(0)} ms = ${pairedRatio(samples, "unwindFetch", "gitFetch").toFixed(2)}x`);
  console.log(`  fetch, nothing new: unwind ${m.unwindFetchAgain.toFixed(0)} ms / git ${m.gitFetchAgain.toFixed(0)} ms = ${pairedRatio(samples, "unwindFetchAgain", "gitFetchAgain").toFixed(2)}x`);
  console.log("  (unwind push resolves the session's change set and reads its content before git runs; unwind fetch reads the fetched records back to count them)");
}

await standalone(import.meta.url, bench);
