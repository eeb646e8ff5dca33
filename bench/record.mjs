// Benchmark: the record itself at scale (issue 35, item 4). A store holding
// 10,000 calls in 100 sessions that changed 100,000 paths in all; how long
// a person waits for `unwind sessions`, `unwind log -n 50` and `unwind
// changes` of one session, and in the web UI (real headless Chromium) for
// the timeline's first paint, a path filter and a session's file list.
//
//   CLI rows, each a ratio against `node -e 0` (spawn -> exit) in the same
//   rounds, and beside `git log -n 50 --name-only` of a branch holding the
//   same history (one commit per tree snapshot: 2,000 commits, 100k paths).
//   Target: each under 0.3 s. Each `changes` row is timed twice: its first
//   look (the change sets earlier commands kept dropped first: a fold of the
//   record since the scope began) and a look again (the kept one read,
//   src/store/changeset-cache.ts). The typical session is the second oldest:
//   its fold reads nearly the whole record; the newest session's, its own.
//   UI rows: from page.goto to the first timeline row; typing a path filter
//   to the rows it leaves; a click on the 10,000-path session to its file
//   list. Each beside the same step on a small record (one session) in the
//   same rounds. Target: each under a second. The first open of a session is
//   the server's fold of it (the warm-up round's, one sample); later ones get
//   the change set the server kept while the record is unchanged.
//
// The record is generated, not captured: capturing 10,000 calls through the
// hooks would take most of an hour here. The generator writes what the
// capture writes (docs/format.md): per session a journal of checksummed
// records, content in the CAS, and for each shell call two tree snapshots
// (commits under refs/unwind/snapshots/, their trees built by git
// fast-import from a model of the work tree as the calls change it). Then a
// sample session is captured for real through the library (`record`), its
// records checked to have the generated ones' shape, and `unwind verify`
// must pass on the whole store, so the bench cannot time a broken store.
//
//   BENCH_RECORD_SESSIONS=20    fewer sessions (default 100, of 100 calls each)
//   BENCH_RECORD_FILES=5000     a smaller work tree (default 20,000; the big call changes half)
//   BENCH_RECORD_REPS=5         rounds (default: BENCH_REPS, 7)
//   BENCH_RECORD_UI=0           skip the browser rows

import { spawn } from "node:child_process";
import { createHash } from "node:crypto";
import { chmodSync, existsSync, mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { deflateSync } from "node:zlib";
import { BASE_ENV, GIT, ROOT, UNWIND, fmtMs, gitConfig, intEnv, measure, median, medians, pairedRatio, printTable, prng, REPS, run, standalone, tempDir, verdict } from "./lib.mjs";

const SESSIONS = intEnv("BENCH_RECORD_SESSIONS", 100);
const CALLS = 100; // per session; every 10th a shell call
const FILES = intEnv("BENCH_RECORD_FILES", 20_000);
const RECORD_REPS = intEnv("BENCH_RECORD_REPS", REPS);
const UI = process.env.BENCH_RECORD_UI !== "0";
const CHROMIUM = process.env.UNWIND_CHROMIUM ?? "/usr/bin/chromium";

const relPath = (i) => `pkg${Math.floor(i / 200)}/src/mod${i}.ts`;
const content = (i, v) => `// module ${i}\nexport const value${i} = ${v};\nexport function f${i}(x: number): number {\n  return x + ${v};\n}\n`;
const sha1 = (b) => createHash("sha1").update(b).digest("hex");
const sha256 = (b) => createHash("sha256").update(b).digest("hex");
const blobOid = (b) => sha1(Buffer.concat([Buffer.from(`blob ${b.length}\0`), b]));
const sum = (body) => sha256(body).slice(0, 16);
const line = (r) => {
  const body = JSON.stringify(r);
  return `${body.slice(0, -1)},"sum":"${sum(body)}"}\n`;
};
const journalName = (session) => `${session.split(":")[0]}-${sha256(session).slice(0, 16)}.jsonl`;
const stamp = (ms) => new Date(ms).toISOString().replace(/[-:.]/g, "").replace(/Z$/, "Z");

/** How many paths each shell call changes: one call of 10,000 (half the tree), one of 2,000 in every tenth session, 64 otherwise. */
function treePaths(s, k) {
  const big = Math.floor(SESSIONS / 2);
  if (s === big && k === 5) return Math.min(10_000, Math.floor(FILES / 2));
  if (s % 10 === 0 && k === 5) return Math.min(2_000, FILES);
  return 64;
}

/** The repository, its store, and a generated record. Returns what the rows need. */
async function build() {
  const repo = tempDir("record");
  const t0 = performance.now();
  run("git", ["init", "-q", "-b", "main", repo]);
  gitConfig(repo);
  const dirs = new Set();
  for (let i = 0; i < FILES; i++) {
    const d = join(repo, relPath(i), "..");
    if (!dirs.has(d)) {
      mkdirSync(d, { recursive: true });
      dirs.add(d);
    }
    writeFileSync(join(repo, relPath(i)), content(i, 0));
  }
  run("git", [...GIT, "add", "-A"], { cwd: repo });
  run("git", [...GIT, "commit", "-q", "-m", "initial"], { cwd: repo });
  run("node", [UNWIND, "init"], { cwd: repo });
  const gitDir = join(repo, ".git");
  const store = join(gitDir, "unwind");
  const head = run("git", ["rev-parse", "HEAD"], { cwd: repo }).stdout.trim();

  // The model: each file's version; the CAS; the journal; the snapshots to make.
  const version = new Int32Array(FILES);
  const rnd = prng(35);
  const casDir = join(store, "cas", "sha256");
  const inCas = new Set();
  const state = (i, v) => {
    const b = Buffer.from(content(i, v));
    const h = sha256(b);
    if (!inCas.has(h)) {
      inCas.add(h);
      const d = join(casDir, h.slice(0, 2));
      if (!existsSync(d)) mkdirSync(d, { recursive: true, mode: 0o700 });
      const f = join(d, h.slice(2));
      writeFileSync(f, deflateSync(b));
      chmodSync(f, 0o444);
    }
    return { kind: "file", mode: "100644", size: b.length, sha256: h, oid: blobOid(b) };
  };
  const exclude = readFileSync(join(gitDir, "info", "exclude"));
  const excludes = { info: sha256(exclude), global: null };
  {
    const d = join(casDir, excludes.info.slice(0, 2));
    mkdirSync(d, { recursive: true, mode: 0o700 });
    const f = join(d, excludes.info.slice(2));
    if (!existsSync(f)) writeFileSync(f, deflateSync(exclude), { mode: 0o444 });
  }
  const fastImport = [];
  const snapshots = []; // { id, at, session, call, label, mark }
  let dirty = new Set(); // files changed since the last snapshot
  let mark = 0;
  const snap = (ms, session, call, label) => {
    mark++;
    fastImport.push(`commit refs/heads/history\nmark :${mark}\ncommitter bench <bench@localhost> ${Math.floor(ms / 1000)} +0000\ndata ${label.length + session.length + 1}\n${label} ${session}\n`);
    if (mark === 1) fastImport.push(`from ${head}\n`);
    for (const i of dirty) {
      const b = content(i, version[i]);
      fastImport.push(`M 100644 inline ${relPath(i)}\ndata ${Buffer.byteLength(b)}\n${b}\n`);
    }
    dirty = new Set();
    const id = `s-${stamp(ms)}-${sha256(`${session} ${call} ${label}`).slice(0, 8)}`;
    snapshots.push({ id, at: new Date(ms).toISOString(), session, call, label, mark });
    return id;
  };
  const sessions = [];
  const base = Date.now() - 7 * 24 * 3600_000; // a week back: inside the 30-day TTL
  let paths = 0;
  const lines = new Map();
  const hex = (n) => Array.from({ length: n }, () => "0123456789abcdef"[Math.floor(rnd() * 16)]).join("");
  const treeRecords = []; // filled with tree oids once fast-import has run
  let typicalEdit = null; // the typical session's first call, an Edit, and its first shell call: `changes --call` rows
  let typicalShell = null;
  let oldestEdit = null; // the path of the first session's first file call: the filter's target, far down the timeline
  for (let s = 0; s < SESSIONS; s++) {
    const session = `claude:${hex(8)}-${hex(4)}-${hex(4)}-${hex(4)}-${hex(12)}`;
    sessions.push(session);
    const recs = [];
    lines.set(session, recs);
    let t = base + s * 3600_000;
    const common = { v: 1 };
    for (let k = 0; k < CALLS; k++) {
      const call = `toolu_01${hex(22)}`;
      if (s === 1 && k === 0) typicalEdit = call;
      if (s === 1 && k === 5) typicalShell = call;
      const at = (ms) => new Date(ms).toISOString();
      const head = (ms, tool, phase) => ({ ...common, at: at(ms), root: repo, session, harness: "claude", tool, call, phase });
      if (k % 10 === 5) {
        // A shell call: a snapshot before and after; it rewrites a run of files (a sed over a folder).
        const n = treePaths(s, k);
        const preId = snap(t, session, call, "Bash pre");
        const pre = { ...head(t, "Bash", "pre"), kind: "tree", snapshot: preId, tree: null };
        const from = Math.floor(rnd() * FILES);
        for (let j = 0; j < n; j++) {
          const i = (from + j) % FILES;
          version[i]++;
          dirty.add(i);
        }
        paths += n;
        const postId = snap(t + 5000, session, call, "Bash post");
        const post = { ...head(t + 5000, "Bash", "post"), kind: "tree", snapshot: postId, tree: null };
        recs.push(pre, post);
        treeRecords.push([pre, mark - 1], [post, mark]);
        t += 20_000;
      } else {
        // A file tool: the path's exact state before and after.
        const i = Math.floor(rnd() * FILES);
        const before = state(i, version[i]);
        version[i]++;
        dirty.add(i);
        const after = state(i, version[i]);
        paths++;
        oldestEdit ??= relPath(i);
        recs.push({ ...head(t, "Edit", "pre"), kind: "file", path: relPath(i), state: before }, { ...head(t + 2000, "Edit", "post"), kind: "file", path: relPath(i), state: after });
        t += 10_000;
      }
    }
  }

  // The snapshot trees: git fast-import builds the whole chain (kept as branch
  // `history`, the baseline's repository of the same size).
  const fi = run("git", ["fast-import", "--quiet", `--export-marks=${join(repo, "..", "marks")}`], { cwd: repo, input: fastImport.join("") });
  void fi;
  const commitOf = new Map(
    readFileSync(join(repo, "..", "marks"), "utf8")
      .split("\n")
      .filter(Boolean)
      .map((l) => [Number(l.slice(1, l.indexOf(" "))), l.slice(l.indexOf(" ") + 1)]),
  );
  const trees = run("git", ["cat-file", "--batch-check=%(objectname)"], { cwd: repo, input: [...commitOf.values()].map((c) => `${c}^{tree}\n`).join("") })
    .stdout.split("\n")
    .filter(Boolean);
  const treeOf = new Map([...commitOf.keys()].map((m, k) => [m, trees[k]]));
  // Snapshot commits: parentless, their message the metadata (docs/format.md, "Tree snapshots").
  const refs = [];
  let parent = null;
  for (const sn of snapshots) {
    const meta = { v: 1, id: sn.id, at: sn.at, root: repo, parent, session: sn.session, call: sn.call, label: sn.label, toolarge: [], toolargeFiles: {}, excludes, nested: [], bytes: "disk" };
    parent = sn.id;
    const epoch = Math.floor(Date.parse(sn.at) / 1000);
    const body = Buffer.from(`tree ${treeOf.get(sn.mark)}\nauthor unwind <unwind@localhost> ${epoch} +0000\ncommitter unwind <unwind@localhost> ${epoch} +0000\n\n${JSON.stringify(meta)}\n`);
    const obj = Buffer.concat([Buffer.from(`commit ${body.length}\0`), body]);
    const oid = sha1(obj);
    const d = join(gitDir, "objects", oid.slice(0, 2));
    mkdirSync(d, { recursive: true });
    writeFileSync(join(d, oid.slice(2)), deflateSync(obj));
    refs.push(`create refs/unwind/snapshots/${sn.id} ${oid}\n`);
  }
  run("git", ["update-ref", "--stdin"], { cwd: repo, input: refs.join("") });
  for (const [r, m] of treeRecords) r.tree = treeOf.get(m);
  const journal = join(store, "journal");
  mkdirSync(journal, { recursive: true, mode: 0o700 });
  for (const [session, recs] of lines) writeFileSync(join(journal, journalName(session)), recs.map(line).join(""));
  // The work tree as the record leaves it.
  for (let i = 0; i < FILES; i++) if (version[i] > 0) writeFileSync(join(repo, relPath(i)), content(i, version[i]));
  const genMs = performance.now() - t0;

  // A sample captured for real, after the generated record: 10 calls through the library.
  const { open } = await import(pathToFileURL(join(ROOT, "dist", "lib", "index.js")).href);
  const u = await open({ root: repo });
  const sample = "claude:bench-record-sample";
  for (let k = 0; k < 10; k++) {
    const shell = k % 5 === 4;
    const call = `toolu_sample_${k}`;
    const targets = shell ? Array.from({ length: 20 }, (_, j) => (k * 97 + j) % FILES) : [(k * 7919) % FILES];
    const p = shell ? [] : targets.map(relPath);
    const tool = shell ? "Bash" : "Edit";
    await u.record(p, { session: sample, phase: "pre", tool, call, cwd: repo });
    for (const i of targets) writeFileSync(join(repo, relPath(i)), content(i, ++version[i]));
    await u.record(p, { session: sample, phase: "post", tool, call, cwd: repo });
  }
  checkShapes(journal, sample, lines);
  const tv = performance.now();
  const verify = JSON.parse(run("node", [UNWIND, "verify", "--json"], { cwd: repo }).stdout);
  const verifyMs = performance.now() - tv;
  if (!verify.ok) throw new Error(`unwind verify failed on the generated store: ${JSON.stringify(verify).slice(0, 400)}`);
  const big = sessions[Math.floor(SESSIONS / 2)];
  return {
    repo,
    sessions,
    big,
    typical: sessions[1],
    typicalEdit,
    typicalShell,
    oldestEdit,
    paths: paths + 28,
    calls: SESSIONS * CALLS + 10,
    snapshots: snapshots.length + 4,
    genMs,
    verifyMs,
    verify,
  };
}

/** The generated records must look like those the library wrote: the same fields, in the same order, per kind and phase. */
function checkShapes(journal, sample, generated) {
  const real = readFileSync(join(journal, journalName(sample)), "utf8")
    .split("\n")
    .filter(Boolean)
    .map((l) => JSON.parse(l));
  const shape = (r) => `${r.kind}/${r.phase}: ${Object.keys(r).join(",")}${r.state ? ` state ${Object.keys(r.state).join(",")}` : ""}`;
  const want = new Set(real.map(shape));
  const [first] = generated.values();
  for (const r of first) {
    const s = shape({ ...r, sum: "" });
    if (!want.has(s)) throw new Error(`a generated record differs in shape from a captured one: ${s}\n captured: ${[...want].join("\n           ")}`);
  }
}

/** Runs the unwind CLI and checks what it printed with `check`. */
const cli = (repo, args, check) => () => {
  const r = run("node", [UNWIND, ...args], { cwd: repo, env: { NO_COLOR: "1" } });
  check?.(r.stdout);
  return r.ms;
};

/** The kept change sets (src/store/changeset-cache.ts), dropped: the next `changes` folds the record. */
const dropKept = (repo) => {
  const dir = join(repo, ".git", "unwind", "cache");
  for (const f of existsSync(dir) ? readdirSync(dir) : []) if (f.startsWith("changes-")) rmSync(join(dir, f));
};

/**
 * Another agent's shell call, through the real hooks (a Claude PreToolUse,
 * the command's effect, the PostToolUse; each takes its snapshot): it
 * writes a file of its own, so no scope the rows look at is touched by it.
 */
let others = 0;
const anotherCall = (repo) => {
  const id = `toolu_other_${++others}`;
  const rel = `other/made${others}.txt`;
  const input = { command: `mkdir -p other && echo ${others} > ${rel}`, description: "another agent" };
  for (const event of ["PreToolUse", "PostToolUse"]) {
    if (event === "PostToolUse") {
      mkdirSync(join(repo, "other"), { recursive: true });
      writeFileSync(join(repo, rel), `${others}\n`);
    }
    const payload = {
      session_id: "07e40000-0000-4000-8000-000000000000",
      transcript_path: "/tmp/other.jsonl",
      cwd: repo,
      hook_event_name: event,
      tool_name: "Bash",
      tool_input: input,
      tool_use_id: id,
    };
    run("node", [UNWIND, "hook", "claude"], { cwd: repo, input: JSON.stringify(payload) });
  }
};

/**
 * A `changes` row twice: the first look at the scope since the record last
 * changed (the kept change sets dropped before it: the fold of the record),
 * and a look again (the same command run once, untimed, before it: the
 * change set the first look kept).
 */
const looks = (key, label, repo, args, check) => {
  const time = cli(repo, args, check);
  return {
    [`${key}First`]: { label: `${label}, first look`, prepare: () => dropKept(repo), time },
    [`${key}Again`]: { label: `${label}, again`, prepare: time, time },
  };
};

/**
 * A row after another agent's shell call (run untimed before it, after the
 * same command, untimed, that kept what it worked out): a listing or a kept
 * change set carried forward past it (src/scope/carry.ts). Measured last, on its own: each call it adds
 * moves the record, which every listing above would then read anew.
 */
const carried = (key, label, repo, args) => {
  const time = cli(repo, args);
  const prepare = () => {
    time();
    anotherCall(repo);
  };
  return { [`${key}Carried`]: { label: `${label}, after another agent's call`, prepare, time } };
};

export async function bench() {
  console.log("record: sessions, log and changes of a 10,000-call record; the UI on it");
  if (!existsSync(join(ROOT, "dist", "lib", "index.js"))) throw new Error("run npm run build first");
  const b = await build();
  console.log(
    `  record    ${b.calls.toLocaleString("en-US")} calls in ${SESSIONS + 1} sessions, ${b.paths.toLocaleString("en-US")} changed paths, ${b.snapshots.toLocaleString("en-US")} snapshots; ${FILES.toLocaleString("en-US")} files`,
  );
  console.log(`            generated in ${(b.genMs / 1000).toFixed(1)} s; unwind verify passed in ${(b.verifyMs / 1000).toFixed(1)} s (${b.verify.blobs ?? "?"} blobs)`);
  const bigId = b.big.slice("claude:".length, "claude:".length + 8);
  const typId = b.typical.slice("claude:".length, "claude:".length + 8);
  const newestId = b.sessions[SESSIONS - 1].slice("claude:".length, "claude:".length + 8);
  const commands = {
    node: { label: "node -e 0 (baseline)", time: () => run("node", ["-e", "0"]).ms },
    git: { label: "git log -n 50 --name-only history", time: () => run("git", ["log", "-n", "50", "--name-only", "history"], { cwd: b.repo }).ms },
    sessions: {
      label: "unwind sessions",
      time: cli(b.repo, ["sessions"], (out) => {
        if (out.split("\n").length < Math.min(SESSIONS, 20)) throw new Error("unwind sessions listed too few sessions");
      }),
    },
    log: {
      label: "unwind log -n 50",
      time: cli(b.repo, ["log", "-n", "50"], (out) => {
        if (out.split("\n").length < 50) throw new Error("unwind log -n 50 printed fewer than 50 lines");
      }),
    },
    ...looks("changesBig", `unwind changes --session (${Math.min(10_000, FILES / 2).toLocaleString("en-US")} paths)`, b.repo, ["changes", "--session", bigId, "--json"], (out) => {
      const n = JSON.parse(out).entries.length;
      if (n < Math.min(10_000, FILES / 2)) throw new Error(`changes of the big session: ${n} entries`);
    }),
    // As a person reads it: the table, each writer named by its short id (every session's and call's id known first).
    ...looks("changesBigHuman", `unwind changes --session (${Math.min(10_000, FILES / 2).toLocaleString("en-US")} paths), its table`, b.repo, ["changes", "--session", bigId], (out) => {
      if (out.split("\n").length < Math.min(10_000, FILES / 2)) throw new Error("changes of the big session: too few lines");
    }),
    ...looks("changesTypical", "unwind changes --session (a typical one)", b.repo, ["changes", "--session", typId, "--json"]),
    // The session an agent just finished: the record since it began is its own (the typical one's is 99 sessions more).
    ...looks("changesNewest", "unwind changes --session (the newest)", b.repo, ["changes", "--session", newestId, "--json"]),
    ...looks("changesEdit", "unwind changes --call (its first Edit)", b.repo, ["changes", "--session", typId, "--call", b.typicalEdit, "--json"]),
    ...looks("changesShell", "unwind changes --call (its first Bash)", b.repo, ["changes", "--session", typId, "--call", b.typicalShell, "--json"]),
    // Every entry's hunks: each blob git holds was one git process before they were asked for in batches.
    ...looks("changesPatch", "unwind changes --session --patch (typical)", b.repo, ["changes", "--session", typId, "--patch"]),
  };
  console.log(`  median of ${RECORD_REPS} rounds after 1 warm-up, interleaved\n`);
  const samples = measure(commands, RECORD_REPS);
  printTable(commands, samples);
  const m = medians(samples);
  console.log();
  const w = Math.max(...Object.values(commands).map((c) => c.label.length));
  for (const k of ["sessions", "log", ...["changesBig", "changesBigHuman", "changesTypical", "changesNewest", "changesEdit", "changesShell"].flatMap((c) => [`${c}First`, `${c}Again`])]) {
    const ratio = pairedRatio(samples, k, "node");
    console.log(
      `  ${commands[k].label.padEnd(w)} ${fmtMs(m[k]).padStart(10)}  ${ratio.toFixed(2).padStart(5)}x node -e 0  ${(m[k] / m.git).toFixed(1).padStart(4)}x git log  ${verdict(m[k] < 300)} (< 300 ms)`,
    );
  }
  for (const k of ["changesPatchFirst", "changesPatchAgain"])
    console.log(`  ${commands[k].label.padEnd(w)} ${fmtMs(m[k]).padStart(10)}  ${pairedRatio(samples, k, "node").toFixed(2).padStart(5)}x node -e 0  (no target: every hunk of the session)`);
  if (UI) await uiRows(b);
  carriedRows(b, { bigId, typId, newestId });
}

/** The listings and `changes` rows after another agent's call, each beside its own row above. */
function carriedRows(b, { bigId, typId, newestId }) {
  const rows = {
    node: { label: "node -e 0 (baseline)", time: () => run("node", ["-e", "0"]).ms },
    ...carried("sessions", "unwind sessions", b.repo, ["sessions"]),
    ...carried("log", "unwind log -n 50", b.repo, ["log", "-n", "50"]),
    ...carried("changesBig", `unwind changes --session (${Math.min(10_000, FILES / 2).toLocaleString("en-US")} paths)`, b.repo, ["changes", "--session", bigId, "--json"]),
    ...carried("changesBigHuman", `unwind changes --session (${Math.min(10_000, FILES / 2).toLocaleString("en-US")} paths), its table`, b.repo, ["changes", "--session", bigId]),
    ...carried("changesTypical", "unwind changes --session (a typical one)", b.repo, ["changes", "--session", typId, "--json"]),
    ...carried("changesNewest", "unwind changes --session (the newest)", b.repo, ["changes", "--session", newestId, "--json"]),
    ...carried("changesEdit", "unwind changes --call (its first Edit)", b.repo, ["changes", "--session", typId, "--call", b.typicalEdit, "--json"]),
    ...carried("changesShell", "unwind changes --call (its first Bash)", b.repo, ["changes", "--session", typId, "--call", b.typicalShell, "--json"]),
  };
  console.log(`\n  after another agent's shell call (through the hooks, a file of its own): the listings and kept change sets carried forward; median of ${RECORD_REPS} rounds after 1 warm-up\n`);
  const samples = measure(rows, RECORD_REPS);
  printTable(rows, samples);
  const m = medians(samples);
  console.log();
  const w = Math.max(...Object.values(rows).map((c) => c.label.length));
  for (const k of Object.keys(rows).filter((k) => k !== "node"))
    console.log(`  ${rows[k].label.padEnd(w)} ${fmtMs(m[k]).padStart(10)}  ${pairedRatio(samples, k, "node").toFixed(2).padStart(5)}x node -e 0  ${verdict(m[k] < 300)} (< 300 ms)`);
}

// ---------------------------------------------------------------------------
// The web UI in headless Chromium.

function startUi(cwd) {
  return new Promise((resolve, reject) => {
    const child = spawn("node", [UNWIND, "ui", "--no-open"], { cwd, env: { ...BASE_ENV, NO_COLOR: "1" }, stdio: ["ignore", "pipe", "pipe"] });
    let out = "";
    let err = "";
    child.stderr.on("data", (d) => (err += d));
    child.stdout.on("data", (d) => {
      out += d;
      const m = /^(http:\/\/127\.0\.0\.1:\d+\/\?token=[0-9a-f]+)\n/.exec(out);
      if (!m) return;
      const stop = () =>
        new Promise((res) => {
          child.on("exit", res);
          child.kill("SIGINT");
        });
      resolve({ url: m[1], stop });
    });
    child.on("exit", (code) => reject(new Error(`unwind ui exited ${code}: ${err}`)));
  });
}

/** A small real record: one session of three calls, the same steps' baseline. */
async function smallRecord() {
  const repo = tempDir("record-small");
  run("git", ["init", "-q", "-b", "main", repo]);
  gitConfig(repo);
  mkdirSync(join(repo, "src"));
  for (let i = 0; i < 20; i++) writeFileSync(join(repo, "src", `m${i}.ts`), content(i, 0));
  run("git", [...GIT, "add", "-A"], { cwd: repo });
  run("git", [...GIT, "commit", "-q", "-m", "initial"], { cwd: repo });
  const { open } = await import(pathToFileURL(join(ROOT, "dist", "lib", "index.js")).href);
  const u = await open({ root: repo });
  const session = "claude:0badc0de-small";
  for (let k = 0; k < 3; k++) {
    const p = [`src/m${k}.ts`];
    await u.record(p, { session, phase: "pre", tool: "Edit", call: `toolu_small_${k}`, cwd: repo });
    writeFileSync(join(repo, p[0]), content(k, 1));
    await u.record(p, { session, phase: "post", tool: "Edit", call: `toolu_small_${k}`, cwd: repo });
  }
  return { repo, session, filter: "src/m1.ts" };
}

export async function uiRows(b) {
  if (!existsSync(CHROMIUM)) {
    console.log(`\n  UI rows skipped: no Chromium at ${CHROMIUM} (UNWIND_CHROMIUM names another)`);
    return;
  }
  const { chromium } = await import("playwright-core");
  const browser = await chromium.launch({
    executablePath: CHROMIUM,
    args: ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking", "--disable-component-update", "--disable-sync", "--no-first-run"],
  });
  const small = await smallRecord();
  // The first open is the server's own fold: not a change set the `changes` rows above kept.
  dropKept(b.repo);
  const uiBig = await startUi(b.repo);
  const uiSmall = await startUi(small.repo);
  // The filter: a path the oldest session edited (its row is far down the timeline). A step that never
  // gets there in 30 s counts as 30 s.
  const targets = {
    big: { ui: uiBig, repo: b.repo, session: b.big, filter: b.oldestEdit, minFiles: Math.min(10_000, FILES / 2) },
    small: { ui: uiSmall, repo: small.repo, session: small.session, filter: small.filter, minFiles: 3 },
  };
  const steps = async (t) => {
    const ctx = await browser.newContext({ viewport: { width: 1280, height: 900 }, colorScheme: "light" });
    const p = await ctx.newPage();
    const out = {};
    let t0 = performance.now();
    await p.goto(t.ui.url);
    await p.locator(".row.session").first().waitFor();
    out.paint = performance.now() - t0;
    t0 = performance.now();
    await p.locator("#f-path").fill(t.filter);
    await p
      .waitForFunction(
        (f) => {
          const rows = [...document.querySelectorAll("#timeline .row.call .sub")];
          return rows.length > 0 && rows.every((r) => r.textContent.includes(f));
        },
        t.filter,
        { timeout: 30_000 },
      )
      .catch(() => console.log(`  (the filter ${t.filter} did not reach its rows in 30 s)`));
    out.filter = performance.now() - t0;
    await p.locator("#f-path").fill("");
    await p.locator("#f-session").selectOption(t.session);
    await p.locator(".row.session").first().waitFor();
    t0 = performance.now();
    await p.locator(".row.session").first().click();
    await p
      .waitForFunction(
        (n) =>
          /(\d[\d,]*) changed path/.test(document.querySelector("#changes h3")?.textContent ?? "") &&
          document.querySelectorAll("#changes .entry").length > 0 &&
          Number(/(\d[\d,]*) changed path/.exec(document.querySelector("#changes h3").textContent)[1].replace(/,/g, "")) >= n,
        t.minFiles,
        { timeout: 120_000 },
      )
      .catch(() => console.log("  (the session's file list did not show in 120 s)"));
    out.open = performance.now() - t0;
    await ctx.close();
    return out;
  };
  const samples = { big: { paint: [], filter: [], open: [] }, small: { paint: [], filter: [], open: [] } };
  // The warm-up round's open is the server's first fold of that session; later rounds get the change set the server kept (src/scope/calls.ts).
  const firstOpen = {};
  for (let round = 0; round <= RECORD_REPS; round++) {
    for (const k of round % 2 ? ["small", "big"] : ["big", "small"]) {
      const r = await steps(targets[k]);
      if (round > 0) for (const [s, ms] of Object.entries(r)) samples[k][s].push(ms);
      else firstOpen[k] = r.open;
    }
  }
  // The same steps, each round after another agent's shell call through the hooks: the server's listing and the
  // session's change set are carried forward past it (src/scope/carry.ts), not worked out again.
  const after = { big: { paint: [], filter: [], open: [] }, small: { paint: [], filter: [], open: [] } };
  for (let round = 0; round < RECORD_REPS; round++) {
    for (const k of round % 2 ? ["small", "big"] : ["big", "small"]) {
      anotherCall(targets[k].repo);
      const r = await steps(targets[k]);
      for (const [s, ms] of Object.entries(r)) after[k][s].push(ms);
    }
  }
  await uiBig.stop();
  await uiSmall.stop();
  await browser.close();
  console.log(`\n  the web UI in headless Chromium, median of ${RECORD_REPS} rounds after 1 warm-up`);
  console.log(`  ${"step".padEnd(44)} ${"record".padStart(10)} ${"small".padStart(10)}   ratio`);
  const labels = { paint: "first paint of the timeline", filter: "a path filter typed -> its rows", open: "a session opened again -> its file list" };
  const row = (label, big, sm) => console.log(`  ${label.padEnd(44)} ${fmtMs(big).padStart(10)} ${fmtMs(sm).padStart(10)}   ${(big / sm).toFixed(1)}x  ${verdict(big < 1000)} (< 1 s)`);
  row("a session opened first -> its file list", firstOpen.big, firstOpen.small);
  for (const [s, label] of Object.entries(labels)) row(label, median(samples.big[s]), median(samples.small[s]));
  const afterLabels = { paint: "first paint, after another agent's call", filter: "a path filter, after another agent's call", open: "a session opened, after another agent's call" };
  for (const [s, label] of Object.entries(afterLabels)) row(label, median(after.big[s]), median(after.small[s]));
  console.log("  (the first open is the server's fold of the session, one sample: the warm-up round's; later opens get the change set it kept)");
}

await standalone(import.meta.url, bench);
