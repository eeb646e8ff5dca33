// Benchmark: snapshots of the 100,000-file repository with the watcher
// running (`unwind watch start`), against `git status --porcelain` on the
// same tree, same rounds.
//
//   watched unwind snapshot / git status                target <= 0.5x
//   watched Bash hook (a tree snapshot) / git status    (reported)
//   the unwatched snapshot, for scale                   (reported)
//   a new file among the changes (checked against the ignore rules), a new
//   directory (git status of the changed paths only)
//   git's side of the two delivery routes: git status of the private index
//   told by an fsmonitor hook, against git status of the changed paths only
//
// Every watched snapshot is checked to have been told by the watcher (the
// scan recorded beside the private index), and the trees against git's.

import { readdirSync, readFileSync, rmSync, writeFileSync, copyFileSync, statSync, utimesSync, chmodSync, mkdirSync } from "node:fs";
import { join } from "node:path";
import { CHANGED, GIT, REPS, ROOT, UNWIND, bigRepo, measure, medians, pairedRatio, printTable, run, standalone, statusBaseline, tempDir, verdict, watchScan } from "./lib.mjs";

const TARGET = 0.5;

export async function bench() {
  console.log("unwind watch benchmark (snapshots told by the watcher)");
  const { repo, summary, modify } = bigRepo();
  console.log(`  repo      ${summary}`);
  const store = join(repo, ".git", "unwind");
  run("node", [UNWIND, "snapshot"], { cwd: repo }); // the private index exists before the watcher starts
  const t0 = performance.now();
  const started = JSON.parse(run("node", [UNWIND, "--json", "watch", "start"], { cwd: repo }).stdout);
  const startMs = performance.now() - t0;
  try {
    const rss = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${started.pid}/status`, "utf8"))?.[1];
    console.log(`  watcher   started in ${startMs.toFixed(0)} ms (unwind watch start, spawn to every directory watched); daemon resident ${rss ? (Number(rss) / 1024).toFixed(1) : "?"} MiB`);
    run("node", [UNWIND, "snapshot"], { cwd: repo }); // the first snapshot after start scans everything and takes the token
    const scan = () => watchScan(store);
    const scans = [];
    const fixture = JSON.parse(readFileSync(join(ROOT, "test", "fixtures", "hooks", "claude", "bash.pre.json"), "utf8"));
    let call = 0;
    const payload = () =>
      JSON.stringify({
        ...fixture,
        session_id: "bench-watch-0000-0000-000000000000",
        transcript_path: join(tempDir("watch-home"), "t.jsonl"),
        cwd: repo,
        tool_use_id: `toolu_01watch${String(call++).padStart(12, "0")}`,
      });
    let input = "";
    /** The Bash hook's PreToolUse, started by `launch` (the program and its arguments up to node): a fresh call each time, 10 files changed. */
    const hookRun = (label, launch) => ({
      label,
      prepare() {
        modify();
        input = payload();
      },
      time() {
        const ms = run(launch[0], [...launch.slice(1), UNWIND, "hook", "claude"], { cwd: repo, input }).ms;
        scans.push(scan());
        return ms;
      },
    });
    const commands = {
      status: statusBaseline(repo, modify),
      watched: {
        label: "unwind snapshot, watched",
        prepare: modify,
        time() {
          const ms = run("node", [UNWIND, "snapshot"], { cwd: repo }).ms;
          scans.push(scan());
          return ms;
        },
      },
      hook: hookRun("unwind hook claude Bash PreToolUse, watched", ["node"]),
      // The command `unwind init` writes into the harness's settings: the hook's Node never reads the
      // certificate bundle NODE_EXTRA_CA_CERTS names (set on these machines; src/capture/harness/setup.ts).
      installed: hookRun("the same hook as init installs it (env -u ...)", ["env", "-u", "NODE_EXTRA_CA_CERTS", "node"]),
      // The code cache's share (bin/load.cjs): the installed hook compiling its bundle from source.
      uncached: hookRun("the installed hook, no code cache", ["env", "-u", "NODE_EXTRA_CA_CERTS", "UNWIND_NO_CODE_CACHE=1", "node"]),
      node: { label: "node -e 0 (Node start-up alone)", time: () => run("node", ["-e", "0"], { cwd: repo }).ms },
      bare: { label: "env -u NODE_EXTRA_CA_CERTS node -e 0", time: () => run("env", ["-u", "NODE_EXTRA_CA_CERTS", "node", "-e", "0"], { cwd: repo }).ms },
    };
    console.log(`  NODE_EXTRA_CA_CERTS ${process.env.NODE_EXTRA_CA_CERTS ? "is set here" : "is not set here"}`);
    console.log(`  ${CHANGED} files get new content before each timed command; median of ${REPS} runs after 1 warm-up\n`);
    const samples = measure(commands);
    const med = medians(samples);
    printTable(commands, samples);
    const told = scans.filter((s) => s === "watched").length;
    if (told !== scans.length) throw new Error(`only ${told} of ${scans.length} watched snapshots were told by the watcher: ${scans.join(" ")}`);
    checkTree(repo);

    // Paths the index does not hold among the changes: a new file is checked against the ignore rules (one git
    // check-ignore); a new directory has git status look at it alone.
    let fresh = 0;
    const made = [];
    const scanned = (want) => {
      const ms = run("node", [UNWIND, "snapshot"], { cwd: repo }).ms;
      const s = scan();
      if (s !== want) throw new Error(`expected a '${want}' scan, got '${s}'`);
      return ms;
    };
    const withNew = {
      status: { label: "git status --porcelain (baseline)", prepare: modify, time: () => run("git", [...GIT, "status", "--porcelain"], { cwd: repo }).ms },
      newFile: {
        label: "unwind snapshot, watched, a new file too",
        prepare() {
          modify();
          const p = join(repo, "a0", `new-${fresh++}.txt`);
          writeFileSync(p, "new\n");
          made.push(p);
        },
        time: () => scanned("watched"),
      },
      newDir: {
        label: "unwind snapshot, watched, a new directory too",
        prepare() {
          modify();
          const d = join(repo, "a1", `newdir-${fresh++}`);
          mkdirSync(d);
          writeFileSync(join(d, "f.txt"), "new\n");
          made.push(d);
        },
        time: () => scanned("pathspec"),
      },
    };
    const samples2 = measure(withNew);
    const med2 = medians(samples2);
    printTable(withNew, samples2);
    checkTree(repo);

    // git's side of the two routes, on a copy of the private index: the hook only prints what it is given, so this is git's cost alone.
    const routes = gitRoutes(repo, store, modify);

    // For scale: the same snapshot without the watcher.
    run("node", [UNWIND, "watch", "stop"], { cwd: repo });
    for (const p of made) rmSync(p, { recursive: true, force: true });
    run("node", [UNWIND, "snapshot"], { cwd: repo });
    const plain = {
      status: statusBaseline(repo, modify),
      unwatched: { label: "unwind snapshot, no watcher", prepare: modify, time: () => run("node", [UNWIND, "snapshot"], { cwd: repo }).ms },
    };
    const samples3 = measure(plain);
    const med3 = medians(samples3);
    printTable(plain, samples3);

    console.log("\n  targets (ratio of medians; median of per-round ratios in brackets)");
    const r = med.watched / med.status;
    console.log(`  watched snapshot / git status          ${r.toFixed(2).padStart(5)}x   target <= ${TARGET}x   ${verdict(r <= TARGET)}   [${pairedRatio(samples, "watched", "status").toFixed(2)}x]`);
    console.log(`  watched Bash hook / git status         ${(med.hook / med.status).toFixed(2).padStart(5)}x   [${pairedRatio(samples, "hook", "status").toFixed(2)}x]`);
    console.log(
      `  watched Bash hook as installed / git status ${(med.installed / med.status).toFixed(2).padStart(5)}x   [${pairedRatio(samples, "installed", "status").toFixed(2)}x]   (target <= ${TARGET}x: ${verdict(med.installed / med.status <= TARGET)})`,
    );
    console.log(`  node -e 0 / git status                 ${(med.node / med.status).toFixed(2).padStart(5)}x   (the floor for any Node process)`);
    console.log(
      `  installed hook, no code cache / git status ${(med.uncached / med.status).toFixed(2).padStart(5)}x   [${pairedRatio(samples, "uncached", "status").toFixed(2)}x]   (the code cache saves ${(med.uncached - med.installed).toFixed(1)} ms)`,
    );
    console.log(`  env -u NODE_EXTRA_CA_CERTS node -e 0 / git status ${(med.bare / med.status).toFixed(2).padStart(5)}x   (the floor for the installed hook)`);
    console.log(`  watched, a new file too / git status   ${(med2.newFile / med2.status).toFixed(2).padStart(5)}x   [${pairedRatio(samples2, "newFile", "status").toFixed(2)}x]`);
    console.log(`  watched, a new dir too / git status    ${(med2.newDir / med2.status).toFixed(2).padStart(5)}x   [${pairedRatio(samples2, "newDir", "status").toFixed(2)}x]`);
    console.log(`  unwatched snapshot / git status        ${(med3.unwatched / med3.status).toFixed(2).padStart(5)}x   [${pairedRatio(samples3, "unwatched", "status").toFixed(2)}x]`);
    console.log(`  (without Node start-up, (watched snapshot - node -e 0) / git status = ${((med.watched - med.node) / med.status).toFixed(2)}x)`);
    console.log("\n  git's side of the delivery routes, private index copy, 10 changed files (medians)");
    console.log(`    git status, full scan                          ${routes.full.toFixed(1).padStart(7)} ms`);
    console.log(`    git status told by an fsmonitor v2 hook (sh)   ${routes.fsmonitor.toFixed(1).padStart(7)} ms   route (a), before unwind's own work`);
    console.log(`    git status of the changed paths only           ${routes.pathspec.toFixed(1).padStart(7)} ms   route (b) when git must look`);
    console.log("    no git status at all                                0.0 ms   route (b) when every path is a file (a new one: git check-ignore)");
    console.log(`  (check: ${scans.length} watched snapshots, each told by the watcher; trees equal git's own)`);
  } finally {
    run("node", [UNWIND, "watch", "stop"], { cwd: repo });
  }
}

/** unwind's last snapshot must hold what git writes from a fresh index. */
function checkTree(repo) {
  const snap = JSON.parse(run("node", [UNWIND, "--json", "snapshot"], { cwd: repo }).stdout);
  const env = { GIT_INDEX_FILE: join(tempDir("watch-check"), "fresh.index") };
  run("git", [...GIT, "read-tree", "HEAD"], { cwd: repo, env });
  run("git", [...GIT, "add", "-A"], { cwd: repo, env });
  const tree = run("git", [...GIT, "write-tree"], { cwd: repo, env }).stdout.trim();
  if (snap.tree !== tree) throw new Error(`watched snapshot tree ${snap.tree} != git's tree ${tree}`);
}

/** git status on copies of the private index: full, with an fsmonitor v2 hook that prints the changed paths, and limited to them. */
function gitRoutes(repo, store, modify) {
  const dir = tempDir("watch-routes");
  const index = join(
    store,
    "index",
    readdirSync(join(store, "index")).find((n) => n.endsWith(".index")),
  );
  const copy = (name) => {
    const to = join(dir, name);
    const st = statSync(index);
    copyFileSync(index, to);
    utimesSync(to, st.atime, st.mtime);
    return to;
  };
  const cfg = ["-c", "core.splitIndex=false", "-c", "core.untrackedCache=true", "-c", "status.showUntrackedFiles=all", "-c", "core.ignoreStat=false"];
  const status = ["status", "--porcelain=v1", "-z", "--untracked-files=all", "--no-renames", "--ignore-submodules=all"];
  const hook = join(dir, "fsmonitor.sh");
  const answer = join(dir, "answer");
  // What a hook talking to the daemon would print at best: a token, then the paths, NUL-separated.
  writeFileSync(hook, `#!/bin/sh\nprintf 't%s\\0' "$(date +%s%N)"\ncat "${answer}"\n`);
  chmodSync(hook, 0o755);
  const fsmon = ["-c", `core.fsmonitor=${hook}`, "-c", "core.fsmonitorHookVersion=2"];
  const idx = { full: copy("full.index"), fsmonitor: copy("fsmonitor.index"), pathspec: copy("pathspec.index") };
  writeFileSync(answer, "/\0"); // first run: everything, which records the token in the index
  run("git", [...cfg, ...fsmon, ...status], { cwd: repo, env: { GIT_INDEX_FILE: idx.fsmonitor } });
  let changed = [];
  const prepare = () => {
    modify();
    changed = run("git", [...GIT, "status", "--porcelain", "-z"], { cwd: repo })
      .stdout.split("\0")
      .filter(Boolean)
      .map((r) => r.slice(3));
    writeFileSync(answer, changed.map((p) => `${p}\0`).join(""));
  };
  const cmds = {
    full: { prepare, time: () => run("git", [...cfg, "-c", "core.fsmonitor=false", ...status], { cwd: repo, env: { GIT_INDEX_FILE: idx.full } }).ms },
    fsmonitor: { prepare, time: () => run("git", [...cfg, ...fsmon, ...status], { cwd: repo, env: { GIT_INDEX_FILE: idx.fsmonitor } }).ms },
    pathspec: { prepare, time: () => run("git", ["--literal-pathspecs", ...cfg, "-c", "core.fsmonitor=false", ...status, "--", ...changed], { cwd: repo, env: { GIT_INDEX_FILE: idx.pathspec } }).ms },
  };
  return medians(measure(cmds));
}

await standalone(import.meta.url, bench);
