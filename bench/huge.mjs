// Benchmark: the 1,000,000-file figures (issue 35, item 5), kept so that a
// change that loses them shows. A generated tree of BENCH_HUGE_FILES files
// (default 1,000,000) in directories of 1,000, committed once, made on first
// use and cached under BENCH_HUGE_CACHE (default: the OS temp directory,
// unwind-bench-huge-N): generating it takes minutes, so every run reuses it
// in place, after putting it back as it was (the store removed, the changed
// files rewritten, anything new removed). Measured, each against git in the
// same rounds:
//
//   the watcher's start (`unwind watch start`: spawn to every directory
//   watched) and the daemon's resident memory
//   one agent shell call with the watcher running: a Claude Bash call's
//   PreToolUse and PostToolUse through the hook as `unwind init` installs
//   it, CHANGED files changed between, against two `git status` (the pair a
//   caller doing the same by hand would run), each snapshot checked to have
//   been told by the watcher
//   one snapshot without the watcher, against one `git status`
//   the same watched call in a 20-file repository, in the same rounds: on a
//   machine where Node's own start is slow it is most of the call, and the
//   difference is what the million files cost
//
// The call is checked from the journal: its pre and post tree records, and
// the post's snapshot holding what git writes of the work tree.

import { closeSync, copyFileSync, existsSync, mkdirSync, openSync, readdirSync, readFileSync, renameSync, rmSync, writeFileSync, writeSync } from "node:fs";
import os from "node:os";
import { join } from "node:path";
import { BASE_ENV, GIT, REPS, ROOT, UNWIND, gitConfig, intEnv, measure, medians, pairedRatio, printTable, run, settle, smallRepo, standalone, tempDir, watchScan } from "./lib.mjs";

const FILES = intEnv("BENCH_HUGE_FILES", 1_000_000);
const PER_DIR = 1000;
const CACHE = process.env.BENCH_HUGE_CACHE || os.tmpdir();
const CHANGED = 10;
const SESSION = "bench-huge-0000-0000-000000000000";

const rel = (i) => `d${String(Math.floor(i / PER_DIR)).padStart(4, "0")}/f${i}.ts`;
const content = (i) => `// file ${i}\nexport const value${i} = ${i};\n`;
// The changed files, spread over the tree by a fixed-seed generator.
const victims = (() => {
  const picked = new Set();
  let seed = 4242;
  while (picked.size < Math.min(CHANGED, FILES)) {
    seed = (Math.imul(seed, 1103515245) + 12345) & 0x7fffffff;
    picked.add(seed % FILES);
  }
  return [...picked];
})();

/**
 * The cached tree of FILES files (one commit), made on first use, aside and
 * renamed into place, so a killed run leaves no half tree (and the next
 * removes what it left). git's objects come from one `git fast-import`
 * stream, not `git add` (which took over 20 minutes for the million blobs
 * here), and the index from `git read-tree` and one refresh.
 */
function cachedRepo() {
  const dir = join(CACHE, `unwind-bench-huge-${FILES}`);
  if (existsSync(join(dir, ".git", "unwind-bench-ready"))) return { dir, madeMs: 0 };
  const t0 = performance.now();
  for (const n of readdirSync(CACHE)) if (n.startsWith(`unwind-bench-huge-${FILES}.tmp-`)) rmSync(join(CACHE, n), { recursive: true, force: true });
  const tmp = `${dir}.tmp-${process.pid}`;
  mkdirSync(tmp, { recursive: true });
  for (let d = 0; d * PER_DIR < FILES; d++) mkdirSync(join(tmp, `d${String(d).padStart(4, "0")}`));
  for (let i = 0; i < FILES; i++) writeFileSync(join(tmp, rel(i)), content(i));
  run("git", ["init", "-q", "-b", "main"], { cwd: tmp });
  gitConfig(tmp);
  const stream = join(tmp, ".git", "bench-import");
  const fd = openSync(stream, "w");
  const chunk = [];
  const flush = () => {
    writeSync(fd, chunk.join(""));
    chunk.length = 0;
  };
  writeSync(fd, "commit refs/heads/main\ncommitter b <b@b> 1700000000 +0000\ndata 8\noriginal\n");
  for (let i = 0; i < FILES; i++) {
    const body = content(i);
    chunk.push(`M 100644 inline ${rel(i)}\ndata ${Buffer.byteLength(body)}\n${body}\n`);
    if (chunk.length === 10_000) flush();
  }
  flush();
  writeSync(fd, "done\n");
  closeSync(fd);
  run("sh", ["-c", 'git fast-import --quiet --done < "$1"', "sh", stream], { cwd: tmp });
  rmSync(stream);
  run("git", ["read-tree", "HEAD"], { cwd: tmp });
  run("git", [...GIT, "update-index", "-q", "--refresh"], { cwd: tmp });
  writeFileSync(join(tmp, ".git", "unwind-bench-ready"), "");
  rmSync(dir, { recursive: true, force: true });
  renameSync(tmp, dir);
  return { dir, madeMs: performance.now() - t0 };
}

/** The tree as generated: no store, no watcher, the changed files' bytes back, nothing new, the index settled. */
function reset(repo) {
  if (existsSync(join(repo, ".git", "unwind"))) run("node", [UNWIND, "watch", "stop"], { cwd: repo });
  rmSync(join(repo, ".git", "unwind"), { recursive: true, force: true });
  for (const i of victims) writeFileSync(join(repo, rel(i)), content(i));
  run("git", [...GIT, "clean", "-fdq"], { cwd: repo });
  settle(repo);
}

let edits = 0;
function modify(repo) {
  edits++;
  for (const i of victims) writeFileSync(join(repo, rel(i)), `${content(i)}// edit ${edits}\n`);
}

/** `git status --porcelain`, checked to see exactly the changed files. */
function status(repo) {
  const r = run("git", [...GIT, "status", "--porcelain"], { cwd: repo });
  const n = r.stdout.split("\n").filter(Boolean).length;
  if (n !== victims.length) throw new Error(`git status saw ${n} changed paths, expected ${victims.length}`);
  return r.ms;
}

export async function bench() {
  console.log(`unwind at ${FILES.toLocaleString("en")} files (the watcher, a shell call, a snapshot)`);
  const { dir: repo, madeMs } = cachedRepo();
  console.log(`  repo      ${FILES} files in ${Math.ceil(FILES / PER_DIR)} directories, ${madeMs ? `generated now in ${(madeMs / 1000).toFixed(0)} s` : "from the cache"} (${repo})`);
  reset(repo);
  const store = join(repo, ".git", "unwind");
  let tiny = null;
  try {
    // The store and its private index exist before the watcher starts, as after a session's first call.
    const first = run("node", [UNWIND, "snapshot"], { cwd: repo }).ms;
    console.log(`  first snapshot (the private index made)  ${(first / 1000).toFixed(2)} s`);
    const t0 = performance.now();
    const started = JSON.parse(run("node", [UNWIND, "--json", "watch", "start"], { cwd: repo }).stdout);
    const startMs = performance.now() - t0;
    const rssKb = Number(/VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${started.pid}/status`, "utf8"))?.[1]);
    run("node", [UNWIND, "snapshot"], { cwd: repo }); // the first snapshot after start scans everything and takes the token
    const scans = [];
    const fixture = (event) => JSON.parse(readFileSync(join(ROOT, "test", "fixtures", "hooks", "claude", `bash.${event}.json`), "utf8"));
    const transcript = join(tempDir("huge-home"), `${SESSION}.jsonl`);
    let n = 0;
    // The hook as `unwind init` installs it (src/capture/harness/setup.ts): its Node never reads NODE_EXTRA_CA_CERTS.
    const hook = (event, id, at = repo) => {
      const input = JSON.stringify({ ...fixture(event), session_id: SESSION, transcript_path: transcript, cwd: at, tool_use_id: id });
      const r = run("env", ["-u", "NODE_EXTRA_CA_CERTS", "node", UNWIND, "hook", "claude"], { cwd: at, input, env: BASE_ENV });
      if (r.stdout !== "") throw new Error(`the hook printed ${JSON.stringify(r.stdout)}`);
      scans.push(watchScan(join(at, ".git", "unwind")));
      return r.ms;
    };
    tiny = tinyRepo();
    const ids = [];
    const commands = {
      status: {
        label: "git status --porcelain, twice (baseline)",
        time() {
          modify(repo);
          const a = status(repo);
          modify(repo);
          return a + status(repo);
        },
      },
      call: {
        label: "a Bash call's pre + post hook, watched",
        time() {
          const id = `toolu_01huge${String(n++).padStart(14, "0")}`;
          ids.push(id);
          const pre = hook("pre", id);
          modify(repo); // what the shell command did
          return pre + hook("post", id);
        },
      },
      tiny: {
        label: "the same call, a 20-file repository",
        time() {
          const id = `toolu_01tiny${String(n++).padStart(14, "0")}`;
          const pre = hook("pre", id, tiny);
          writeFileSync(join(tiny, "src", "m0.ts"), `// edit ${n}\n`);
          return pre + hook("post", id, tiny);
        },
      },
    };
    console.log(`  ${CHANGED} files change in each call and before each git status; median of ${REPS} rounds after 1 warm-up\n`);
    const samples = measure(commands);
    const med = medians(samples);
    printTable(commands, samples);
    const told = scans.filter((s) => s === "watched").length;
    if (told !== scans.length) throw new Error(`only ${told} of ${scans.length} hook snapshots were told by the watcher: ${scans.join(" ")}`);
    // One more call, untimed, whose post is checked against git's own tree right after it.
    commands.call.time();
    checkCalls(repo, store, ids);

    run("node", [UNWIND, "watch", "stop"], { cwd: repo });
    const plain = {
      status: { label: "git status --porcelain (baseline)", prepare: () => modify(repo), time: () => status(repo) },
      unwatched: { label: "unwind snapshot, no watcher", prepare: () => modify(repo), time: () => run("node", [UNWIND, "snapshot"], { cwd: repo }).ms },
    };
    const samples2 = measure(plain);
    const med2 = medians(samples2);
    printTable(plain, samples2);

    console.log("\n  figures (ratio of medians; median of per-round ratios in brackets)");
    console.log(`  watcher start                              ${(startMs / 1000).toFixed(2).padStart(6)} s    daemon resident ${(rssKb / 1024).toFixed(0)} MiB`);
    console.log(
      `  watched Bash call / two git status         ${(med.call / med.status).toFixed(3).padStart(6)}x   [${pairedRatio(samples, "call", "status").toFixed(3)}x]   (${(med.call / 1000).toFixed(2)} s against ${(med.status / 1000).toFixed(2)} s)`,
    );
    console.log(
      `  watched Bash call / the same, 20 files     ${(med.call / med.tiny).toFixed(3).padStart(6)}x   [${pairedRatio(samples, "call", "tiny").toFixed(3)}x]   (${((med.call - med.tiny) / 1000).toFixed(3)} s more)`,
    );
    console.log(`  unwatched snapshot / git status            ${(med2.unwatched / med2.status).toFixed(3).padStart(6)}x   [${pairedRatio(samples2, "unwatched", "status").toFixed(3)}x]`);
    console.log(`  (check: ${scans.length} hook snapshots, each told by the watcher; ${ids.length} calls, each closed by its own post; the last post's tree equal to git's own)`);
  } finally {
    if (tiny) run("node", [UNWIND, "watch", "stop"], { cwd: tiny });
    reset(repo);
  }
}

/** A small repository with its store and a watcher running, as `repo` has, its first full scan taken. */
function tinyRepo() {
  const dir = smallRepo("huge-tiny");
  run("node", [UNWIND, "watch", "start"], { cwd: dir });
  run("node", [UNWIND, "snapshot"], { cwd: dir });
  return dir;
}

/** Each call has its pre and its own post tree record, and the last post's snapshot holds what git writes of the work tree. */
function checkCalls(repo, store, ids) {
  const records = readdirSync(join(store, "journal"))
    .filter((f) => f.endsWith(".jsonl"))
    .flatMap((f) =>
      readFileSync(join(store, "journal", f), "utf8")
        .split("\n")
        .filter(Boolean),
    )
    .map((l) => JSON.parse(l));
  let last = null;
  for (const id of ids) {
    const mine = records.filter((r) => r.call === id && r.kind === "tree");
    const post = mine.find((r) => r.phase === "post" && !r.closedBy);
    if (!mine.some((r) => r.phase === "pre") || !post) throw new Error(`call ${id}: no pre, or not closed by its own post`);
    last = post;
  }
  // A copy of the settled real index (HEAD, with stat data), so `git add -A` hashes only what changed, not a million files.
  const index = join(tempDir("huge-check"), "index");
  copyFileSync(join(repo, ".git", "index"), index);
  const env = { GIT_INDEX_FILE: index };
  run("git", [...GIT, "add", "-A"], { cwd: repo, env });
  const tree = run("git", [...GIT, "write-tree"], { cwd: repo, env }).stdout.trim();
  const snap = run("git", ["rev-parse", `refs/unwind/snapshots/${last.snapshot}^{tree}`], { cwd: repo }).stdout.trim();
  if (snap !== tree) throw new Error(`the last post's snapshot tree ${snap} != git's tree ${tree}`);
}

await standalone(import.meta.url, bench);
