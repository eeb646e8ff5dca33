// Benchmark: hook start-up. `unwind hook claude` runs inside every tool call
// an agent makes, so its whole-process cost next to bare Node matters most.
//
//   unwind hook claude (Edit PreToolUse) / node -e 0     target <= 1.25x
//   unwind hook claude (Read PreToolUse) / node -e 0     reported: the fixed cost, nothing captured
//   a Read call under the matcher `unwind init` installs  / node -e 0
//     what Claude Code does per Read now: it tests the installed matcher, and
//     starts the hook only when it matches (before, with "*", every Read
//     started the hook: the row above)
//
// A small real git repository; the payloads are the Claude Code fixtures in
// test/fixtures/hooks/claude/ with cwd and paths pointed at it. Before every
// Edit run the target file gets new content, so every run does the same
// work: one new blob into the CAS and one journal line (same session, a new
// tool_use_id each time).

import { existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { createHash } from "node:crypto";
import { dirname, join } from "node:path";
import { GIT, REPS, ROOT, UNWIND, fmtMs, gitConfig, intEnv, measure, medians, pairedRatio, printTable, prng, run, standalone, tempDir, verdict } from "./lib.mjs";
import { makeSource } from "./source-gen.mjs";

// Hook runs are short (~a Node start-up), so they get more repetitions than the big-repo benchmarks.
const HOOK_REPS = intEnv("BENCH_HOOK_REPS", Math.max(REPS, 21));
const TARGET_EDIT_VS_NODE = 1.25;

const fixture = (name) => JSON.parse(readFileSync(join(ROOT, "test", "fixtures", "hooks", "claude", name), "utf8"));

/** A small project: ~150 source files in a handful of directories, committed. */
function smallRepo() {
  const repo = tempDir("hook-repo");
  const r = prng(7);
  const dirs = ["src/server", "src/client", "src/lib", "src/db", "test", "scripts"];
  for (let i = 0; i < 150; i++) {
    const rel = `${dirs[i % dirs.length]}/m${i}.ts`;
    mkdirSync(join(repo, dirname(rel)), { recursive: true });
    writeFileSync(join(repo, rel), makeSource(500 + i, r.int(1024, 8192)));
  }
  mkdirSync(join(repo, "src/server"), { recursive: true });
  writeFileSync(join(repo, "src/server/routes.ts"), makeSource(99, 6000));
  writeFileSync(join(repo, "package.json"), '{ "name": "webapp", "version": "1.0.0", "type": "module" }\n');
  run("git", ["init", "-q", "-b", "main"], { cwd: repo });
  gitConfig(repo);
  run("git", [...GIT, "add", "-A"], { cwd: repo });
  run("git", [...GIT, "commit", "-q", "-m", "initial"], { cwd: repo });
  return repo;
}

export async function bench() {
  console.log("unwind hook start-up benchmark");
  const repo = smallRepo();
  const target = join(repo, "src", "server", "routes.ts");
  const original = readFileSync(target, "utf8");
  const session = "3f6c1d2e-8a4b-4c7e-9b1f-5d2a7e9c0b14";
  const transcript = join(tempDir("hook-home"), `${session}.jsonl`);

  let call = 0;
  const callId = () => `toolu_01bench${String(call++).padStart(12, "0")}`; // same length every time
  const edit = () => {
    const p = fixture("edit.pre.json");
    return JSON.stringify({
      ...p,
      session_id: session,
      transcript_path: transcript,
      cwd: repo,
      tool_input: { ...p.tool_input, file_path: target },
      tool_use_id: callId(),
    });
  };
  const read = () => {
    const p = fixture("read.pre.json");
    // A session of its own: a Read is also its session's next call and would close the Edit left open
    // between two measured runs; measured here is the usual read-only hook, with nothing open.
    return JSON.stringify({ ...p, session_id: `${session}-reader`, transcript_path: transcript, cwd: repo, tool_input: { file_path: join(repo, "package.json") }, tool_use_id: callId() });
  };

  // The matcher `unwind init --claude` writes, read back from the settings file as Claude Code reads it.
  run("node", [UNWIND, "init", "--claude"], { cwd: repo });
  const settings = JSON.parse(readFileSync(join(repo, ".claude", "settings.json"), "utf8"));
  const matcher = new RegExp(settings.hooks.PreToolUse.at(-1).matcher);

  let rev = 0;
  let lastContent = original;
  let editInput = "";
  let readInput = "";
  const commands = {
    node: { label: "node -e 0 (baseline)", time: () => run("node", ["-e", "0"], { cwd: repo }).ms },
    edit: {
      label: "unwind hook claude, Edit PreToolUse",
      prepare() {
        // The previous call's post, unmeasured, as the harness sends it: it closes that call, so
        // each measured pre is a call's first event, as in a real session.
        if (editInput) run("node", [UNWIND, "hook", "claude"], { cwd: repo, input: editInput.replace('"PreToolUse"', '"PostToolUse"') });
        // New content every run: the capture always stores a blob it has not seen.
        lastContent = `${original}// rev ${String(++rev).padStart(6, "0")}\n`;
        writeFileSync(target, lastContent);
        editInput = edit();
      },
      time: () => run("node", [UNWIND, "hook", "claude"], { cwd: repo, input: editInput }).ms,
    },
    read: {
      label: "unwind hook claude, Read PreToolUse",
      prepare() {
        readInput = read();
      },
      time: () => run("node", [UNWIND, "hook", "claude"], { cwd: repo, input: readInput }).ms,
    },
    // The command `unwind init` writes: its Node never reads the certificate bundle NODE_EXTRA_CA_CERTS names.
    installed: {
      label: "unwind hook claude, Read, as init installs it",
      prepare() {
        readInput = read();
      },
      time: () => run("env", ["-u", "NODE_EXTRA_CA_CERTS", "node", UNWIND, "hook", "claude"], { cwd: repo, input: readInput }).ms,
    },
    bare: { label: "env -u NODE_EXTRA_CA_CERTS node -e 0", time: () => run("env", ["-u", "NODE_EXTRA_CA_CERTS", "node", "-e", "0"], { cwd: repo }).ms },
    quiet: {
      label: "a Read call under the installed matcher",
      prepare() {
        readInput = read();
      },
      time() {
        const t0 = performance.now();
        const fired = matcher.test("Read") ? run("node", [UNWIND, "hook", "claude"], { cwd: repo, input: readInput }).ms : 0;
        return fired > 0 ? fired : performance.now() - t0;
      },
    },
  };
  console.log(`  repo      a small project, 152 files committed; Edit target ${target.slice(repo.length + 1)} (${original.length} B)`);
  console.log(`  payloads  test/fixtures/hooks/claude/{edit,read}.pre.json with cwd and paths set to the repo`);
  console.log(`  median of ${HOOK_REPS} runs after 1 warm-up, interleaved\n`);
  const samples = measure(commands, HOOK_REPS);
  const med = medians(samples);
  printTable(commands, samples);

  // Every Edit run must have captured: one journal line each, the last one holding the last content.
  const store = join(repo, ".git", "unwind");
  const errors = join(store, "errors.jsonl");
  if (existsSync(errors)) throw new Error(`the hook logged capture errors:\n${readFileSync(errors, "utf8")}`);
  const journal = readdirSync(join(store, "journal"))
    .map((f) => readFileSync(join(store, "journal", f), "utf8"))
    .join("");
  const records = journal
    .split("\n")
    .filter(Boolean)
    .map((l) => JSON.parse(l));
  const edits = records.filter((x) => x.tool === "Edit" && x.kind === "file" && x.phase === "pre");
  if (edits.length !== HOOK_REPS + 1) throw new Error(`expected ${HOOK_REPS + 1} Edit pre captures in the journal, found ${edits.length}`);
  if (records.some((x) => x.closedBy)) throw new Error("a call was closed by another event: a post went missing");
  if (records.some((x) => x.tool === "Read")) throw new Error("a Read call was captured; it should be ignored");
  const sha = createHash("sha256").update(lastContent).digest("hex");
  if (edits.at(-1).state.sha256 !== sha || !existsSync(join(store, "cas", "sha256", sha.slice(0, 2), sha.slice(2)))) {
    throw new Error("the last Edit capture does not hold the file's content");
  }
  const blobs = readdirSync(join(store, "cas", "sha256")).reduce((n, d) => n + readdirSync(join(store, "cas", "sha256", d)).length, 0);

  const vsNode = med.edit / med.node;
  const readVsNode = med.read / med.node;
  console.log("\n  targets (ratio of medians; median of per-round ratios in brackets)");
  console.log(
    `  hook Edit / node -e 0              ${vsNode.toFixed(2).padStart(6)}x   target <= ${TARGET_EDIT_VS_NODE}x  ${verdict(vsNode <= TARGET_EDIT_VS_NODE)}   [${pairedRatio(samples, "edit", "node").toFixed(2)}x]`,
  );
  console.log(`  hook Read / node -e 0              ${readVsNode.toFixed(2).padStart(6)}x   (no target: the fixed cost)   [${pairedRatio(samples, "read", "node").toFixed(2)}x]`);
  console.log(`  Read call, installed matcher / node -e 0 ${(med.quiet / med.node).toFixed(4).padStart(8)}x   (with matcher "*": the hook Read row, ${readVsNode.toFixed(2)}x)`);
  console.log(
    `  hook Read as installed / node -e 0 ${(med.installed / med.node).toFixed(2).padStart(6)}x   (NODE_EXTRA_CA_CERTS ${process.env.NODE_EXTRA_CA_CERTS ? "set here: Node reads that bundle at every start" : "not set here"}; against env -u ... node -e 0: ${(med.installed / med.bare).toFixed(2)}x)`,
  );
  console.log(`  fixed cost over Node (bundle load, stdin, parse)   ${fmtMs(med.read - med.node).padStart(10)}`);
  console.log(`  capture cost over Read (locate, lock, CAS, journal) ${fmtMs(med.edit - med.read).padStart(9)}`);
  console.log(`  (check: ${edits.length} Edit captures in the journal, ${blobs} blobs in the CAS, the last one the file's content; Read captured nothing)`);
}

await standalone(import.meta.url, bench);
