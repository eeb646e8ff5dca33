// Benchmark: how fast is `unwind snapshot` on a large repository?
//
// These machines are noisy, so every figure is judged as a ratio against a
// baseline measured in the same run, and every time is the median of REPS
// repetitions after one warm-up round:
//
//   unwind snapshot / git status --porcelain          target <= 1.5x
//   fresh-index method / unwind snapshot              target >= 4x
//   store bytes one no-change snapshot adds           target <= 2 KB
//
// The targets are informational: the script exits 0 unless something fails.
//
//   npm run bench                  100,000 files (default)
//   BENCH_FILES=5000 npm run bench quick check
//   BENCH_REPS=11                  more repetitions
//   BENCH_KEEP=1                   keep the temp repository (path is printed)

import { spawnSync } from "node:child_process";
import { mkdirSync, mkdtempSync, readdirSync, rmSync, lstatSync, writeFileSync } from "node:fs";
import os from "node:os";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";

const HERE = dirname(fileURLToPath(import.meta.url));
const UNWIND = resolve(HERE, "..", "bin", "unwind");

const FILES = intEnv("BENCH_FILES", 100_000);
const REPS = intEnv("BENCH_REPS", 7);
const CHANGED = Math.min(10, FILES); // files changed before every timed command
const PER_DIR = 100;

const TARGET_SNAPSHOT_VS_STATUS = 1.5; // unwind snapshot may cost at most 1.5x git status
const TARGET_FRESH_VS_SNAPSHOT = 4; // unwind must be at least 4x faster than a fresh index
const TARGET_NOCHANGE_BYTES = 2048;

// Children get the caller's environment minus GIT_* (npm, a hook or the CI
// may export some), so every git sees the same repository and index.
const BASE_ENV = Object.fromEntries(Object.entries(process.env).filter(([k]) => !k.startsWith("GIT_")));
// No autocrlf conversion anywhere: content must be byte-for-byte what we wrote.
const GIT = ["-c", "core.autocrlf=false"];
// What unwind passes for its private index (src/capture/snapshot.ts), for byHand().
const INDEX_CONFIG = ["-c", "core.splitIndex=false", "-c", "core.fsmonitor=false"];

function intEnv(name, dflt) {
  const raw = process.env[name];
  if (raw === undefined || raw === "") return dflt;
  const n = Number(raw);
  if (!Number.isInteger(n) || n < 1) throw new Error(`${name}=${raw}: expected a positive whole number`);
  return n;
}

/** Runs a process to completion; returns its wall time in ms and stdout. Throws on failure. */
function run(cmd, args, { cwd, env = {}, input } = {}) {
  const t0 = process.hrtime.bigint();
  const r = spawnSync(cmd, args, { cwd, env: { ...BASE_ENV, ...env }, input, encoding: "utf8", maxBuffer: 1 << 30 });
  const ms = Number(process.hrtime.bigint() - t0) / 1e6;
  if (r.error) throw r.error;
  if (r.status !== 0) throw new Error(`${cmd} ${args.join(" ")} exited ${r.status}: ${r.stderr.trim()}`);
  return { ms, stdout: r.stdout };
}

const median = (xs) => {
  const s = [...xs].sort((a, b) => a - b);
  const m = s.length >> 1;
  return s.length % 2 ? s[m] : (s[m - 1] + s[m]) / 2;
};
const fmtMs = (ms) => `${ms.toFixed(1)} ms`;
const verdict = (ok) => (ok ? "PASS" : "MISS");

// ---------------------------------------------------------------------------
// 1. The repository: FILES small text files, 100 per leaf directory, leaves
//    nested three deep (a*/b*/c*), committed once.

function relPath(i) {
  const leaf = Math.floor(i / PER_DIR);
  return `a${leaf % 10}/b${Math.floor(leaf / 10) % 10}/c${leaf}/f${i % PER_DIR}.txt`;
}
const baseContent = (i) => `// ${relPath(i)}\nexport const value${i} = ${i};\nexport const label${i} = "file number ${i}";\n`;

/** Writes and commits the files; returns the leaf directory count and how long each phase took. */
function generate(repo) {
  const phases = {};
  let t = performance.now();
  const lap = (name) => {
    const now = performance.now();
    phases[name] = now - t;
    t = now;
  };
  const made = new Set();
  for (let i = 0; i < FILES; i++) {
    const rel = relPath(i);
    const dir = join(repo, dirname(rel));
    if (!made.has(dir)) {
      mkdirSync(dir, { recursive: true });
      made.add(dir);
    }
    writeFileSync(join(repo, rel), baseContent(i));
  }
  lap("write");
  run("git", ["init", "-q", "-b", "main"], { cwd: repo });
  for (const [k, v] of [
    ["user.name", "unwind bench"],
    ["user.email", "bench@localhost"],
    ["core.autocrlf", "false"],
    // No background auto-gc repacking while we measure (the timed commands
    // keep adding loose objects).
    ["gc.auto", "0"],
    ["maintenance.auto", "false"],
  ]) {
    run("git", ["config", k, v], { cwd: repo });
  }
  // bigFileThreshold=1 makes `git add` stream every blob into one pack
  // (bulk check-in) instead of 100k loose objects: packed like a real
  // repository, and ~400 MB less disk. Same objects, same tree.
  run("git", [...GIT, "-c", "core.bigFileThreshold=1", "add", "-A"], { cwd: repo });
  lap("add");
  run("git", [...GIT, "commit", "-q", "-m", "bench: initial"], { cwd: repo });
  lap("commit");
  // Files written in the same second as the index are "racily clean": git
  // smudges them and re-hashes them on every status until the index is
  // rewritten later. Wait a second and refresh once, so the baseline is a
  // settled index like a user's.
  sleep(1100);
  run("git", [...GIT, "update-index", "-q", "--refresh"], { cwd: repo });
  lap("settle");
  return { dirs: made.size, phases };
}

function sleep(ms) {
  Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, ms);
}

// The same CHANGED files get new content (never seen before, so no blob
// exists yet) before every timed command. Each command therefore finds
// exactly CHANGED files changed: against HEAD and the real index for git
// status and the fresh index, against the last snapshot for unwind. They are
// picked by a fixed-seed generator so they land in different directories at
// every level (an evenly strided pick would all sit under a0/b0/).
const victims = (() => {
  const picked = new Set();
  let seed = 12345;
  while (picked.size < CHANGED) {
    seed = (Math.imul(seed, 1103515245) + 12345) & 0x7fffffff;
    picked.add(seed % FILES);
  }
  return [...picked];
})();
let edits = 0;
function modify(repo) {
  edits++;
  for (const i of victims) writeFileSync(join(repo, relPath(i)), `${baseContent(i)}// edit ${edits}\n`);
}

// ---------------------------------------------------------------------------
// 2./3. The timed commands. Each is a whole process (or, for the fresh
//       index, three), timed from spawn to exit.

function makeCommands(repo, scratch) {
  const freshIndex = join(scratch, "fresh.index");
  return {
    status: {
      label: "git status --porcelain (baseline)",
      changes: true,
      time() {
        const r = run("git", [...GIT, "status", "--porcelain"], { cwd: repo });
        const n = r.stdout.split("\n").filter(Boolean).length;
        if (n !== CHANGED) throw new Error(`git status saw ${n} changed paths, expected ${CHANGED}`);
        return r.ms;
      },
    },
    unwind: {
      label: "unwind snapshot",
      changes: true,
      time: () => run("node", [UNWIND, "snapshot"], { cwd: repo }).ms,
    },
    fresh: {
      label: "fresh index (read-tree, add -A, write-tree)",
      changes: true,
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
      changes: false,
      time: () => run("node", ["-e", "0"], { cwd: repo }).ms,
    },
    byHand: byHand(repo),
  };
}

/**
 * The git commands `unwind snapshot` runs, by hand, on its private index, so
 * readers can see what the ratio is made of. Mirrors src/capture/snapshot.ts
 * (same arguments, same index); it updates the private index just as unwind
 * would, so the next unwind run still finds exactly CHANGED changes. Each
 * step's time is kept in `steps`; time() returns their sum.
 */
function byHand(repo) {
  // The store layout (.git/unwind/index/<key>.index) is unwind's; read here only to find the file.
  const indexDir = join(repo, ".git", "unwind", "index");
  const indexes = readdirSync(indexDir).filter((f) => f.endsWith(".index"));
  if (indexes.length !== 1) throw new Error(`expected one private index in ${indexDir}, found ${indexes.length}`);
  const env = { GIT_INDEX_FILE: join(indexDir, indexes[0]), GIT_TERMINAL_PROMPT: "0" };
  const who = { GIT_AUTHOR_NAME: "unwind", GIT_AUTHOR_EMAIL: "unwind@localhost", GIT_COMMITTER_NAME: "unwind", GIT_COMMITTER_EMAIL: "unwind@localhost" };
  const steps = {
    "rev-parse (find the repository)": [],
    "status on the private index": [],
    "update-index of the changed paths": [],
    "write-tree": [],
    "commit-tree": [],
    "update-ref": [],
  };
  let probes = 0;
  return {
    label: "unwind's git commands by hand (sum)",
    changes: true,
    steps,
    time() {
      const t = [];
      t.push(run("git", ["rev-parse", "--path-format=absolute", "--show-toplevel", "--git-dir", "--git-common-dir", "--show-object-format"], { cwd: repo }));
      const st = run("git", [...INDEX_CONFIG, "status", "--porcelain=v1", "-z", "--untracked-files=all", "--no-renames", "--ignore-submodules=all"], { cwd: repo, env });
      t.push(st);
      const paths = st.stdout.split("\0").filter(Boolean).map((rec) => rec.slice(3));
      if (paths.length !== CHANGED) throw new Error(`status on the private index saw ${paths.length} changed paths, expected ${CHANGED}`);
      t.push(run("git", [...INDEX_CONFIG, "update-index", "--add", "--remove", "--replace", "-z", "--stdin"], { cwd: repo, env, input: paths.join("\0") + "\0" }));
      const wt = run("git", [...INDEX_CONFIG, "write-tree"], { cwd: repo, env });
      t.push(wt);
      const ct = run("git", ["commit-tree", wt.stdout.trim(), "-F", "-"], { cwd: repo, env: who, input: `{"bench":${probes}}\n` });
      t.push(ct);
      // Create-only, like unwind's; a ref name of our own so unwind's list is untouched.
      t.push(run("git", ["update-ref", "--no-deref", `refs/bench/probe-${probes++}`, ct.stdout.trim(), ""], { cwd: repo }));
      Object.values(steps).forEach((xs, k) => xs.push(t[k].ms));
      return t.reduce((a, r) => a + r.ms, 0);
    },
  };
}

/**
 * One warm-up round, then REPS rounds. Every command that needs changes gets
 * fresh ones right before it runs (so neither unwind nor the fresh index finds
 * blobs the other already wrote), and the order rotates each round so no
 * command always runs first or last.
 */
function measure(repo, commands) {
  const names = Object.keys(commands);
  const samples = Object.fromEntries(names.map((n) => [n, []]));
  for (let round = 0; round <= REPS; round++) {
    const shift = round % names.length;
    const order = [...names.slice(shift), ...names.slice(0, shift)];
    for (const name of order) {
      const c = commands[name];
      if (c.changes) modify(repo);
      const ms = c.time();
      if (round > 0) samples[name].push(ms); // round 0 is the warm-up
    }
  }
  for (const c of Object.values(commands)) for (const xs of Object.values(c.steps ?? {})) xs.shift(); // drop warm-up steps
  return samples;
}

/** unwind and the fresh-index method must produce the same tree, or we compare different work. */
function checkSameTree(repo, scratch) {
  modify(repo);
  const snap = JSON.parse(run("node", [UNWIND, "--json", "snapshot"], { cwd: repo }).stdout);
  const env = { GIT_INDEX_FILE: join(scratch, "check.index") };
  run("git", [...GIT, "read-tree", "HEAD"], { cwd: repo, env });
  run("git", [...GIT, "add", "-A"], { cwd: repo, env });
  const tree = run("git", [...GIT, "write-tree"], { cwd: repo, env }).stdout.trim();
  if (snap.tree !== tree) throw new Error(`unwind snapshot tree ${snap.tree} != fresh-index tree ${tree}`);
  return tree;
}

// ---------------------------------------------------------------------------
// 4. Store bytes: sum of file sizes in what a snapshot can write to.

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

// ---------------------------------------------------------------------------

function main() {
  const tmp = mkdtempSync(join(os.tmpdir(), "unwind-bench-"));
  const repo = join(tmp, "repo");
  const scratch = join(tmp, "scratch");
  mkdirSync(repo);
  mkdirSync(scratch);
  const cleanup = () => {
    if (process.env.BENCH_KEEP) console.log(`kept ${tmp}`);
    else rmSync(tmp, { recursive: true, force: true });
  };
  process.on("SIGINT", () => {
    cleanup();
    process.exit(130);
  });
  try {
    const cpus = os.cpus();
    const gitVersion = run("git", ["--version"]).stdout.trim().replace(/^git version /, "");
    console.log("unwind snapshot benchmark");
    console.log(`  machine   node ${process.version}, git ${gitVersion}, ${cpus.length} CPUs (${cpus[0]?.model.trim() ?? "?"}), ${os.platform()} ${os.arch()}`);

    const { dirs, phases } = generate(repo);
    const total = Object.values(phases).reduce((a, b) => a + b, 0);
    const parts = Object.entries(phases).map(([k, ms]) => `${k} ${(ms / 1000).toFixed(1)}`).join(", ");
    console.log(`  repo      ${FILES} files in ${dirs} directories, generated in ${(total / 1000).toFixed(1)} s (${parts})`);

    // The first snapshot seeds unwind's private index from the real one.
    const first = run("node", [UNWIND, "snapshot"], { cwd: repo }).ms;
    console.log(`  first unwind snapshot (seeds the private index): ${fmtMs(first)}`);
    console.log(`  ${CHANGED} files get new content before each timed command; median of ${REPS} runs after 1 warm-up\n`);

    const commands = makeCommands(repo, scratch);
    const samples = measure(repo, commands);
    const med = Object.fromEntries(Object.entries(samples).map(([n, xs]) => [n, median(xs)]));

    const w = Math.max(...Object.values(commands).map((c) => c.label.length));
    console.log(`  ${"command".padEnd(w)}     median        min        max`);
    for (const [name, c] of Object.entries(commands)) {
      const xs = samples[name];
      const cols = [med[name], Math.min(...xs), Math.max(...xs)].map((v) => fmtMs(v).padStart(10));
      console.log(`  ${c.label.padEnd(w)} ${cols.join(" ")}`);
    }

    const tree = checkSameTree(repo, scratch);
    const bytes = noChangeBytes(repo);

    // Verdicts use the ratio of medians. The median of per-round ratios (each
    // pair ran seconds apart) is shown too: it shrugs off load that drifts
    // during the run, so a large gap between the two means a noisy machine.
    const paired = (a, b) => median(samples[a].map((x, k) => x / samples[b][k])).toFixed(2);
    const vsStatus = med.unwind / med.status;
    const vsFresh = med.fresh / med.unwind;
    console.log("\n  targets (ratio of medians; median of per-round ratios in brackets)");
    console.log(`  unwind snapshot / git status       ${vsStatus.toFixed(2).padStart(6)}x   target <= ${TARGET_SNAPSHOT_VS_STATUS}x   ${verdict(vsStatus <= TARGET_SNAPSHOT_VS_STATUS)}   [${paired("unwind", "status")}x]`);
    console.log(`  fresh index / unwind snapshot      ${vsFresh.toFixed(2).padStart(6)}x   target >= ${TARGET_FRESH_VS_SNAPSHOT}x     ${verdict(vsFresh >= TARGET_FRESH_VS_SNAPSHOT)}   [${paired("fresh", "unwind")}x]`);
    console.log(`  (without Node start-up, (unwind snapshot - node -e 0) / git status = ${((med.unwind - med.node) / med.status).toFixed(2)}x)`);
    console.log(`  store bytes, no-change snapshot    ${String(bytes.total).padStart(6)} B   target <= ${TARGET_NOCHANGE_BYTES} B ${verdict(bytes.total <= TARGET_NOCHANGE_BYTES)}`);
    for (const [p, d] of bytes.delta.slice(0, 8)) console.log(`      ${d > 0 ? "+" : ""}${d} B  ${p}`);
    if (bytes.delta.length > 8) console.log(`      ... ${bytes.delta.length - 8} more`);
    console.log(`  (check: unwind and the fresh index wrote the same tree ${tree.slice(0, 12)})`);

    console.log("\n  where unwind snapshot's time goes (medians; medians do not add up exactly)");
    for (const [name, xs] of Object.entries(commands.byHand.steps)) console.log(`  ${name.padEnd(36)} ${fmtMs(median(xs)).padStart(10)}`);
    console.log(`  ${"sum of its git commands".padEnd(36)} ${fmtMs(med.byHand).padStart(10)}`);
    console.log(`  ${"node -e 0".padEnd(36)} ${fmtMs(med.node).padStart(10)}`);
    console.log(`  ${"rest (module load, JS, spawning)".padEnd(36)} ${fmtMs(med.unwind - med.byHand - med.node).padStart(10)}   of ${fmtMs(med.unwind)} for unwind snapshot`);
  } finally {
    cleanup();
  }
}

main();
