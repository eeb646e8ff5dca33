// Shared helpers for the benchmarks under bench/ (plain ESM, no dependencies).
//
// Every figure is judged as a ratio against a baseline measured in the same
// run (these machines are noisy: 2 cores, often loaded), and every time is
// the median of interleaved repetitions after one warm-up round.

import { spawn, spawnSync } from "node:child_process";
import { lstatSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync, existsSync } from "node:fs";
import os from "node:os";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";

const HERE = dirname(fileURLToPath(import.meta.url));
export const ROOT = resolve(HERE, "..");
export const UNWIND = join(ROOT, "bin", "unwind");

export function intEnv(name, dflt) {
  const raw = process.env[name];
  if (raw === undefined || raw === "") return dflt;
  const n = Number(raw);
  if (!Number.isInteger(n) || n < 1) throw new Error(`${name}=${raw}: expected a positive whole number`);
  return n;
}

export const REPS = intEnv("BENCH_REPS", 7);

// Children get the caller's environment minus GIT_* (npm, a hook or the CI
// may export some), so every git sees the same repository and index.
export const BASE_ENV = Object.fromEntries(Object.entries(process.env).filter(([k]) => !k.startsWith("GIT_")));
// No autocrlf conversion anywhere: content must be byte-for-byte what we wrote.
export const GIT = ["-c", "core.autocrlf=false"];

/** Runs a process to completion; returns its wall time in ms and stdout. Throws on failure. */
export function run(cmd, args, { cwd, env = {}, input } = {}) {
  const t0 = process.hrtime.bigint();
  const r = spawnSync(cmd, args, { cwd, env: { ...BASE_ENV, ...env }, input, encoding: "utf8", maxBuffer: 1 << 30 });
  const ms = Number(process.hrtime.bigint() - t0) / 1e6;
  if (r.error) throw r.error;
  if (r.status !== 0) throw new Error(`${cmd} ${args.join(" ")} exited ${r.status}: ${r.stderr.trim()}`);
  return { ms, stdout: r.stdout };
}

export const median = (xs) => {
  const s = [...xs].sort((a, b) => a - b);
  const m = s.length >> 1;
  return s.length % 2 ? s[m] : (s[m - 1] + s[m]) / 2;
};

/** The median wall time of `reps` calls of `fn`, in ms. */
export function medianTime(fn, reps) {
  const t = [];
  for (let i = 0; i < reps; i++) {
    const t0 = performance.now();
    fn();
    t.push(performance.now() - t0);
  }
  return median(t);
}

/** A module of src/, bundled in memory and imported: what the library does not export, timed on its own. */
export async function importSource(rel) {
  const { build } = await import("esbuild");
  const out = await build({ entryPoints: [join(ROOT, rel)], bundle: true, write: false, format: "esm", platform: "node", logLevel: "warning" });
  return import(`data:text/javascript;base64,${Buffer.from(out.outputFiles[0].text).toString("base64")}`);
}
export const fmtMs = (ms) => `${ms.toFixed(1)} ms`;
export const verdict = (ok) => (ok ? "PASS" : "MISS");
export const fmtBytes = (n) => (n >= 1 << 20 ? `${(n / (1 << 20)).toFixed(2)} MiB` : n >= 1024 ? `${(n / 1024).toFixed(1)} KiB` : `${n} B`);

export function sleep(ms) {
  Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, ms);
}

/** A seeded PRNG (mulberry32): the same seed gives the same numbers on every machine. */
export function prng(seed) {
  let a = seed >>> 0;
  const next = () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
  next.int = (lo, hi) => lo + Math.floor(next() * (hi - lo + 1)); // inclusive
  next.pick = (xs) => xs[Math.floor(next() * xs.length)];
  return next;
}

export function machineFacts() {
  const cpus = os.cpus();
  const gitVersion = run("git", ["--version"])
    .stdout.trim()
    .replace(/^git version /, "");
  const load = os
    .loadavg()
    .map((x) => x.toFixed(2))
    .join(" ");
  return `node ${process.version}, git ${gitVersion}, ${cpus.length} CPUs (${cpus[0]?.model.trim() ?? "?"}), ${os.platform()} ${os.arch()}, load average ${load}`;
}

// ---------------------------------------------------------------------------
// Temp space: one directory per run, removed at the end (BENCH_KEEP=1 keeps it).

let tmpRoot = null;
export function tempDir(name) {
  tmpRoot ??= mkdtempSync(join(os.tmpdir(), "unwind-bench-"));
  const d = join(tmpRoot, name);
  mkdirSync(d, { recursive: true });
  return d;
}
export function cleanup() {
  if (!tmpRoot) return;
  if (process.env.BENCH_KEEP) console.log(`kept ${tmpRoot}`);
  else rmSync(tmpRoot, { recursive: true, force: true });
  tmpRoot = null;
}

/** Runs one benchmark file on its own (`node bench/hook.mjs`), with the machine line and cleanup. */
export async function standalone(metaUrl, fn) {
  if (process.argv[1] !== fileURLToPath(metaUrl)) return;
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
    console.log(`  machine   ${machineFacts()}\n`);
    await fn();
  } finally {
    cleanup();
  }
}

// ---------------------------------------------------------------------------
// Timing: interleaved rounds.

/**
 * One warm-up round, then `reps` rounds. Every command's prepare() (untimed)
 * runs right before its time(), and the order rotates each round so no
 * command always runs first or last. Returns the samples per command name.
 */
export function measure(commands, reps = REPS) {
  const names = Object.keys(commands);
  const samples = Object.fromEntries(names.map((n) => [n, []]));
  for (let round = 0; round <= reps; round++) {
    const shift = round % names.length;
    const order = [...names.slice(shift), ...names.slice(0, shift)];
    for (const name of order) {
      const c = commands[name];
      c.prepare?.();
      const ms = c.time();
      if (round > 0) samples[name].push(ms); // round 0 is the warm-up
    }
  }
  return samples;
}

export const medians = (samples) => Object.fromEntries(Object.entries(samples).map(([n, xs]) => [n, median(xs)]));

/** Median of per-round ratios a/b: shrugs off load that drifts during the run. */
export const pairedRatio = (samples, a, b) => median(samples[a].map((x, k) => x / samples[b][k]));

export function printTable(commands, samples, indent = "  ") {
  const w = Math.max(...Object.values(commands).map((c) => c.label.length));
  console.log(`${indent}${"command".padEnd(w)}     median        min        max`);
  for (const [name, c] of Object.entries(commands)) {
    const xs = samples[name];
    const cols = [median(xs), Math.min(...xs), Math.max(...xs)].map((v) => fmtMs(v).padStart(10));
    console.log(`${indent}${c.label.padEnd(w)} ${cols.join(" ")}`);
  }
}

/** Sum of file sizes (apparent bytes) and allocated bytes under a path; 0 if absent. */
export function dirBytes(p) {
  let bytes = 0;
  let allocated = 0;
  let files = 0;
  const walk = (q) => {
    let st;
    try {
      st = lstatSync(q);
    } catch {
      return;
    }
    if (st.isDirectory()) for (const e of readdirSync(q)) walk(join(q, e));
    else {
      bytes += st.size;
      allocated += st.blocks * 512;
      files++;
    }
  };
  walk(p);
  return { bytes, allocated, files };
}

// ---------------------------------------------------------------------------
// Where a process's time goes: git's own trace2 timings of the git commands
// it spawns. unwind clears every inherited GIT_* variable before it runs git,
// so GIT_TRACE2_EVENT cannot reach its children; trace2 settings are also
// read from the global config, so the traced run gets a HOME whose
// .gitconfig is the real one plus trace2.eventTarget (a directory: one file
// per git process). Nothing in the command lines is duplicated here.

const eventTime = (iso) => {
  // "2026-01-02T03:04:05.123456Z": Date.parse keeps only milliseconds.
  const m = /\.(\d+)Z$/.exec(iso);
  return Date.parse(iso.replace(/\.\d+Z$/, "Z")) + (m ? Number(`0.${m[1]}`) * 1000 : 0);
};

/** "git <subcommand> <its first two options>": stable across runs (no ref names or oids). */
function gitLabel(argv) {
  const a = argv.slice(1);
  let i = 0;
  while (i < a.length && a[i].startsWith("-")) i += a[i] === "-c" || a[i] === "-C" ? 2 : 1;
  const sub = a[i] ?? "?";
  const opts = a
    .slice(i + 1)
    .filter((x) => x.startsWith("-"))
    .slice(0, 2);
  return ["git", sub, ...opts].join(" ");
}

/**
 * Runs cmd once with git tracing on; returns its wall time and its timeline:
 * [{label, ms, regions?}] in order, where gaps between git processes are
 * labelled "between" (the parent's JS plus process spawning), the part before
 * the first git "before", after the last "after".
 */
export function traceRun(cmd, args, { cwd, env = {}, input } = {}) {
  const dir = tempDir(`trace-${process.hrtime.bigint()}`);
  const home = join(dir, "home");
  const events = join(dir, "events");
  mkdirSync(home);
  mkdirSync(events);
  const realGlobal = join(os.homedir(), ".gitconfig");
  // A copy, not an [include]: unwind hashes in-process only where no config
  // includes another (src/capture/conversion.ts), and tracing must not change the path taken.
  const real = existsSync(realGlobal) ? readFileSync(realGlobal, "utf8") : "";
  writeFileSync(join(home, ".gitconfig"), `${real}\n[trace2]\n\teventTarget = ${events}\n\teventNesting = 2\n`);
  const start = performance.timeOrigin + performance.now();
  const r = run(cmd, args, { cwd, env: { ...env, HOME: home, XDG_CONFIG_HOME: join(home, ".config") }, input });
  const end = performance.timeOrigin + performance.now();
  const procs = [];
  for (const f of readdirSync(events)) {
    let argv = null;
    let t0 = null;
    let t1 = null;
    const regions = [];
    for (const line of readFileSync(join(events, f), "utf8").split("\n")) {
      if (!line) continue;
      const e = JSON.parse(line);
      if (e.event === "start") {
        argv = e.argv;
        t0 = eventTime(e.time) - e.t_abs * 1000; // the process began t_abs before this event
      } else if (e.event === "atexit") t1 = eventTime(e.time);
      else if (e.event === "region_leave" && e.nesting === 1 && e.t_rel !== undefined) regions.push({ label: `${e.category}:${e.label}`, ms: e.t_rel * 1000 });
    }
    if (argv && t0 !== null && t1 !== null) procs.push({ label: gitLabel(argv), t0, t1, regions });
  }
  rmSync(dir, { recursive: true, force: true });
  procs.sort((a, b) => a.t0 - b.t0);
  const timeline = [];
  let at = start;
  for (const p of procs) {
    if (p.t0 < at) {
      // Overlapping git processes (spawned in parallel): count from where the last one ended.
      timeline.push({ label: p.label, ms: p.t1 - Math.max(at, p.t0), regions: p.regions });
    } else {
      timeline.push({ label: timeline.length === 0 ? "before" : "between", ms: p.t0 - at });
      timeline.push({ label: p.label, ms: p.t1 - p.t0, regions: p.regions });
    }
    at = Math.max(at, p.t1);
  }
  timeline.push({ label: procs.length ? "after" : "whole run (no git)", ms: end - at });
  return { ms: r.ms, stdout: r.stdout, timeline };
}

/**
 * Runs `runs` traced runs (prepare() before each) and prints the median
 * timeline in order: each git command (with its slowest trace2 regions), the
 * JS-and-spawning gap before it when that is worth a line, the gaps summed,
 * and Node's bare start-up for comparison.
 */
export function printTimeline(title, runs, prepare, traced, { nodeMs, indent = "  " } = {}) {
  const all = [];
  for (let k = 0; k < runs; k++) {
    prepare?.();
    all.push(traced());
  }
  // Key each step by label and occurrence ("git rev-parse (#2)"); a gap is keyed by the git it precedes.
  const keyed = all.map((t) => {
    const seen = new Map();
    const steps = new Map();
    let gaps = 0;
    let gap = null;
    for (const s of t.timeline) {
      if (s.label === "between") {
        gaps += s.ms;
        gap = s;
        continue;
      }
      const n = (seen.get(s.label) ?? 0) + 1;
      seen.set(s.label, n);
      const key = n > 1 ? `${s.label} (#${n})` : s.label;
      if (gap) steps.set(`gap:${key}`, gap);
      gap = null;
      steps.set(key, s);
    }
    steps.set("gaps", { ms: gaps });
    return { steps, total: t.ms };
  });
  const order = [];
  for (const k of keyed) for (const key of k.steps.keys()) if (!order.includes(key)) order.push(key);
  const names = {
    before: "Node start-up, module load, JS before the first git",
    gaps: "JS and process spawning between git commands, in all",
    after: "JS after the last git, exit",
  };
  console.log(`\n${indent}${title}`);
  console.log(`${indent}(git's own trace2 timings of ${runs} traced runs, medians; medians do not add up exactly)`);
  const line = (label, ms, extra = "") => console.log(`${indent}${label.padEnd(60)} ${fmtMs(ms).padStart(10)}${extra}`);
  for (const key of [...order.filter((k) => k !== "gaps" && k !== "after"), "gaps", "after"]) {
    const xs = keyed.map((k) => k.steps.get(key)).filter(Boolean);
    if (xs.length === 0) continue;
    const ms = median(xs.map((s) => s.ms));
    const note = xs.length < keyed.length ? `   (in ${xs.length} of ${keyed.length} runs)` : "";
    if (key.startsWith("gap:")) {
      if (ms >= 5) line("  JS and spawning before the next git", ms, note);
      continue;
    }
    line(names[key] ?? key, ms, note);
    // The git command's own top-level regions (reading the index, scanning the work tree, ...).
    const regionMs = new Map();
    for (const s of xs) for (const r of s.regions ?? []) regionMs.set(r.label, [...(regionMs.get(r.label) ?? []), r.ms]);
    const top = [...regionMs]
      .map(([l, v]) => [l, median(v)])
      .filter(([, v]) => v >= 1)
      .sort((a, b) => b[1] - a[1])
      .slice(0, 4);
    for (const [l, v] of top) line(`      ${l}`, v);
  }
  if (nodeMs !== undefined) line("(node -e 0, measured above)", nodeMs);
  line("whole traced run", median(keyed.map((k) => k.total)));
}

// ---------------------------------------------------------------------------
// The big repository, generated once and shared by every benchmark that
// needs it: FILES small text files, 100 per leaf directory, leaves nested
// three deep (a*/b*/c*), committed once.

export const FILES = intEnv("BENCH_FILES", 100_000);
const PER_DIR = 100;
export const CHANGED = Math.min(10, FILES); // files changed before every timed command

export function relPath(i) {
  const leaf = Math.floor(i / PER_DIR);
  return `a${leaf % 10}/b${Math.floor(leaf / 10) % 10}/c${leaf}/f${i % PER_DIR}.txt`;
}
export const baseContent = (i) => `// ${relPath(i)}\nexport const value${i} = ${i};\nexport const label${i} = "file number ${i}";\n`;

export function gitConfig(repo) {
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
}

let big = null;

/** The shared repository, generated on first use: { repo, files, dirs, phases, modify() }. */
export function bigRepo() {
  if (big) return big;
  const repo = tempDir("big");
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
  gitConfig(repo);
  // bigFileThreshold=1 makes `git add` stream every blob into one pack
  // (bulk check-in) instead of 100k loose objects: packed like a real
  // repository, and ~400 MB less disk. Same objects, same tree.
  run("git", [...GIT, "-c", "core.bigFileThreshold=1", "add", "-A"], { cwd: repo });
  lap("add");
  run("git", [...GIT, "commit", "-q", "-m", "bench: initial"], { cwd: repo });
  lap("commit");
  settle(repo);
  lap("settle");

  // The same CHANGED files get new content (never seen before, so no blob
  // exists yet) before every timed command that needs changes. They are
  // picked by a fixed-seed generator so they land in different directories
  // at every level (an evenly strided pick would all sit under a0/b0/).
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
  const modify = () => {
    edits++;
    for (const i of victims) writeFileSync(join(repo, relPath(i)), `${baseContent(i)}// edit ${edits}\n`);
  };
  const total = Object.values(phases).reduce((a, b) => a + b, 0);
  const parts = Object.entries(phases)
    .map(([k, ms]) => `${k} ${(ms / 1000).toFixed(1)}`)
    .join(", ");
  big = { repo, files: FILES, dirs: made.size, modify, summary: `${FILES} files in ${made.size} directories, generated in ${(total / 1000).toFixed(1)} s (${parts})` };
  return big;
}

/**
 * Files written in the same second as the index are "racily clean": git
 * smudges them and re-hashes them on every status until the index is
 * rewritten later. Wait a second and refresh once, so the baseline is a
 * settled index like a user's.
 */
export function settle(repo) {
  sleep(1100);
  run("git", [...GIT, "update-index", "-q", "--refresh"], { cwd: repo });
}

/** How the store's last snapshot of its work tree was scanned (`watched`, `pathspec`, `full`): the watcher's state file beside the private index. */
export function watchScan(store) {
  const f = readdirSync(join(store, "index")).find((n) => n.endsWith(".index.watch"));
  return JSON.parse(readFileSync(join(store, "index", f), "utf8")).scan;
}

/** The baseline every tree benchmark is judged against: `git status --porcelain`, checked to see the CHANGED files. */
export function statusBaseline(repo, modify) {
  return {
    label: "git status --porcelain (baseline)",
    prepare: modify,
    time() {
      const r = run("git", [...GIT, "status", "--porcelain"], { cwd: repo });
      const n = r.stdout.split("\n").filter(Boolean).length;
      if (n !== CHANGED) throw new Error(`git status saw ${n} changed paths, expected ${CHANGED}`);
      return r.ms;
    },
  };
}

/** Spawns `cmd args` and resolves with its wall time to exit (ms); a non-zero exit rejects. */
export function timeExit(cmd, args, cwd, env = BASE_ENV) {
  return new Promise((resolve, reject) => {
    const t0 = process.hrtime.bigint();
    const child = spawn(cmd, args, { cwd, env, stdio: "ignore" });
    child.on("error", reject);
    child.on("exit", (code) => (code === 0 ? resolve(Number(process.hrtime.bigint() - t0) / 1e6) : reject(new Error(`${cmd} ${args.join(" ")} exited ${code}`))));
  });
}

/**
 * Async `measure`: one warm-up round, then `reps` rounds, the order rotating
 * each round. Each command resolves to named samples ({ url: ms, ... }).
 */
export async function measureAsync(commands, reps) {
  const names = Object.keys(commands);
  const samples = {};
  for (let round = 0; round <= reps; round++) {
    const shift = round % names.length;
    for (const name of [...names.slice(shift), ...names.slice(0, shift)]) {
      const r = await commands[name]();
      if (round > 0) for (const [k, v] of Object.entries(r)) (samples[k] ??= []).push(v);
    }
  }
  return samples;
}

/** A small real git repository (20 source files, committed) with a store holding one snapshot. */
export function smallRepo(name) {
  const repo = tempDir(name);
  mkdirSync(join(repo, "src"), { recursive: true });
  for (let i = 0; i < 20; i++) writeFileSync(join(repo, "src", `m${i}.ts`), `export const v${i} = ${i};\n`);
  run("git", ["init", "-q", "-b", "main"], { cwd: repo });
  gitConfig(repo);
  run("git", [...GIT, "add", "-A"], { cwd: repo });
  run("git", [...GIT, "commit", "-q", "-m", "initial"], { cwd: repo });
  run("node", [UNWIND, "init"], { cwd: repo });
  run("node", [UNWIND, "snapshot", "--label", "bench"], { cwd: repo });
  return repo;
}
