#!/usr/bin/env node
/**
 * The soak (issue 34): simulated agents of all three harnesses make
 * Write/Edit/Bash calls through the real `unwind hook <harness>` process,
 * spawned as a client spawns it, each agent starting a new session every
 * 100-500 calls; failed and background calls among them; a
 * person edits between; undo and redo of random scopes, gc, and the watcher
 * stopped and started are interleaved. After every round an oracle (a model
 * of each file's bytes and of what each session and call changed) checks that
 * `unwind changes` is exact for every call just made, every 20 steps for
 * every whole session, and after each undo and redo; that each undo took
 * back exactly its scope (or left a path with a conflict and its reason) and
 * that its redo brought back exactly what it took. At the end: `verify`, and
 * every file's bytes are the model's.
 *
 *   npm run soak -- --agents 6 --calls 20000 --seed 1 [--minutes 30] [--parallel 6] [--session-calls 100] [--oracle cli]
 *
 * A round is either --parallel file-tool calls of distinct agents (or one
 * or two fewer) run
 * at once, or one step alone (a shell call, whose tree snapshot would see
 * the others' edits; a person's edit; an undo and its redo; gc; the
 * watcher). Seeded: the steps and every choice come from --seed, so a
 * failure replays (exactly with --parallel 1). Prints one JSON summary:
 * calls/s, store bytes per call, peak memory of any unwind process, hook
 * p50/p99. Exit 1 on any oracle violation.
 */
import { execFileSync, fork, spawn } from "node:child_process";
import { createHash } from "node:crypto";
import { existsSync, mkdirSync, mkdtempSync, readFileSync, readdirSync, realpathSync, rmSync, statSync, unlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import { prng, ROOT, UNWIND } from "./lib.mjs";

const BIN = UNWIND;
const LIB = pathToFileURL(join(ROOT, "dist", "lib", "index.js")).href;
/** Every this many steps, each agent's whole session is checked; the steps between check the call they made. */
const SESSION_CHECK_EVERY = 20;
/** Every this many checks of `changes`, the command answers rather than the library (`--oracle cli`: all of them). */
const ORACLE_CLI_EVERY = 10;
/**
 * Each agent's sessions last this many calls and up to four times as many more (seeded): a person
 * starts a new chat now and then, and a session's undo folds the record from its first call on, so
 * one session per agent for 20,000 calls would make every whole-session check grow with the run.
 */
const SESSION_CALLS = 100;

/** The bench's seeded PRNG, with the two draws the soak makes: an index below n, and an element. */
function rng(seed) {
  const next = prng(seed);
  return { next, int: (n) => next.int(0, n - 1), pick: (xs) => xs[next.int(0, xs.length - 1)] };
}

const sha = (s) => (s === null ? null : createHash("sha256").update(s).digest("hex"));
/** git's blob id of the bytes: a state a tree snapshot recorded names its content by this alone. */
const oid = (s) =>
  s === null
    ? null
    : createHash("sha1")
        .update(`blob ${Buffer.byteLength(s)}\0`)
        .update(s)
        .digest("hex");
/** A recorded state as the oracle compares it: by SHA-256 where the record has it, else by git's id. */
const stateKey = (st) => (st === null || st === undefined ? null : (st.sha256 ?? `oid:${st.oid}`));

/** JSON with object keys sorted at every depth, as unwind keys a call that has no id of its own. */
const stable = (v) =>
  v === undefined || v === null
    ? "null"
    : Array.isArray(v)
      ? `[${v.map(stable).join(",")}]`
      : typeof v === "object"
        ? `{${Object.keys(v)
            .sort()
            .map((k) => `${JSON.stringify(k)}:${stable(v[k])}`)
            .join(",")}}`
        : JSON.stringify(v);

function percentile(xs, p) {
  if (xs.length === 0) return null;
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.floor((p / 100) * s.length))];
}

function dirBytes(dir) {
  let n = 0;
  if (!existsSync(dir)) return 0;
  for (const e of readdirSync(dir, { withFileTypes: true })) {
    const p = join(dir, e.name);
    if (e.isDirectory()) n += dirBytes(p);
    else if (e.isFile()) n += statSync(p).size;
  }
  return n;
}

/** The library in a process of its own (bench/soak-oracle.mjs): `ask` a scope's change set, as `open().changes` gives it. */
function oracleProcess(root, env) {
  const child = fork(fileURLToPath(new URL("./soak-oracle.mjs", import.meta.url)), [LIB, root], { env, stdio: ["ignore", "inherit", "inherit", "ipc"] });
  const waiting = new Map();
  let n = 0;
  const request = (m) =>
    new Promise((res, rej) => {
      waiting.set(++n, { res, rej });
      child.send({ ...m, id: n });
    });
  return new Promise((ready, failed) => {
    child.once("error", failed);
    child.on("exit", (code) => {
      for (const w of waiting.values()) w.rej(new Error(`the oracle process exited ${code}`));
    });
    child.on("message", (m) => {
      if (m.ready) return ready({ ask: request, usage: () => request({ usage: true }), close: () => child.kill() });
      const w = waiting.get(m.id);
      waiting.delete(m.id);
      if (m.usage) w.res(m.usage);
      else if (m.error) w.rej(Object.assign(new Error(m.error.message), { exit: m.error.exit }));
      else w.res(m.json);
    });
  });
}

export async function soak(opts = {}) {
  const agents = opts.agents ?? 6;
  const callsWanted = opts.calls ?? 20000;
  const seed = opts.seed ?? 1;
  const sessionCalls = opts.sessionCalls ?? SESSION_CALLS;
  const parallel = Math.max(1, Math.min(opts.parallel ?? agents, agents));
  const deadline = opts.minutes ? Date.now() + opts.minutes * 60_000 : Number.POSITIVE_INFINITY;
  const log = opts.log ?? (() => {});
  const top = realpathSync(mkdtempSync(join(tmpdir(), "unwind-soak-")));
  const root = join(top, "repo");
  const rssDir = join(top, "rss");
  mkdirSync(root);
  mkdirSync(rssDir);
  // Each unwind process notes its peak resident memory at exit (getrusage's maxrss).
  const preload = join(top, "rss.cjs");
  // With it, the command's name and its CPU time in µs, so the summary says where the run's time went.
  writeFileSync(
    preload,
    // kids(): the CPU of the git processes it waited for (cutime and cstime of /proc/self/stat, in ticks of 10 ms).
    `const kids=()=>{try{const s=require("fs").readFileSync("/proc/self/stat","utf8");const f=s.slice(s.lastIndexOf(")")+2).split(" ");return (Number(f[13])+Number(f[14]))*1e4}catch{return 0}};` +
      `process.on("exit",()=>{try{const u=process.resourceUsage();require("fs").appendFileSync(${JSON.stringify(join(rssDir, "rss"))},u.maxRSS+" "+(u.userCPUTime+u.systemCPUTime+kids())+" "+process.argv[2]+"\\n")}catch{}});\n`,
  );
  const env = { ...process.env, NO_COLOR: "1", GIT_AUTHOR_NAME: "s", GIT_AUTHOR_EMAIL: "s@s", GIT_COMMITTER_NAME: "s", GIT_COMMITTER_EMAIL: "s@s" };
  // As `init` installs the hook (`env -u NODE_EXTRA_CA_CERTS`): Node reads that bundle at every start-up, and no unwind process opens TLS.
  delete env.NODE_EXTRA_CA_CERTS;
  for (const k of Object.keys(env)) if (k.startsWith("GIT_DIR") || k === "GIT_INDEX_FILE" || k === "GIT_WORK_TREE" || k === "UNWIND_STORE" || k === "UNWIND_TASK" || k === "UNWIND_RUN") delete env[k];
  const R = rng(seed);
  const violations = [];
  const hookMs = [];
  let calls = 0;
  let steps = 0;
  let undos = 0;
  let conflicts = 0;
  let sessionsEnded = 0;

  function proc(args, input, extraEnv = {}) {
    const t0 = performance.now();
    return new Promise((res) => {
      const child = spawn(process.execPath, ["--require", preload, BIN, ...args], { cwd: root, env: { ...env, ...extraEnv } });
      let stdout = "";
      let stderr = "";
      child.stdout.on("data", (d) => (stdout += d));
      child.stderr.on("data", (d) => (stderr += d));
      child.on("close", (code, signal) => res({ code, signal, stdout, stderr, ms: performance.now() - t0 }));
      child.stdin.end(input ?? "");
    });
  }
  async function cli(args) {
    const r = await proc(args);
    let json;
    try {
      json = JSON.parse(r.stdout);
    } catch {
      json = undefined;
    }
    return { ...r, json };
  }
  const violate = (what) => {
    violations.push(`step ${steps}: ${what}`);
    log(`VIOLATION step ${steps}: ${what}`);
  };

  // The model: every file's bytes (null: absent), by path relative to the root.
  const truth = new Map();
  const writeFile = (rel, text) => {
    mkdirSync(dirname(join(root, rel)), { recursive: true });
    writeFileSync(join(root, rel), text);
    truth.set(rel, text);
  };
  const removeFile = (rel) => {
    unlinkSync(join(root, rel));
    truth.set(rel, null);
  };

  const g = (...a) => execFileSync("git", a, { cwd: root, env, stdio: ["ignore", "pipe", "pipe"] });
  g("init", "-q", "-b", "main");
  g("config", "core.autocrlf", "false");
  const HARNESSES = ["claude", "codex", "gemini"];
  /** A fresh session for agent `a`, the k-th it starts. */
  const sessionOf = (a, k) => {
    const id = `${seed.toString(16)}${a.i}-soak-${String(k).padStart(8, "0")}-${a.i}`;
    return {
      id,
      session: `${a.harness}:${id}`,
      /** Path to its bytes before this session first changed it. */
      first: new Map(),
      /** The session's calls, in order, each with what it changed: path -> [before, after]. */
      calls: [],
      /** It ends (the agent starts a new one) after this many calls. */
      length: sessionCalls + a.rnd.int(sessionCalls * 4),
    };
  };
  const A = Array.from({ length: agents }, (_, i) => {
    const a = { i, harness: HARNESSES[i % 3], dir: `ag${i}`, rnd: rng(seed * 1000 + i + 1), n: 0, started: 1, /** Its sessions that have ended, oldest first. */ past: [] };
    Object.assign(a, sessionOf(a, 0));
    return a;
  });
  /** After its session's last call, the agent starts a new session, as a person starts a new chat: the old one stays in the record, to be checked and undone. */
  const rotate = (a) => {
    if (a.calls.length < a.length) return;
    a.past.push({ id: a.id, session: a.session, first: a.first, calls: a.calls });
    Object.assign(a, sessionOf(a, a.started++));
    sessionsEnded++;
  };
  for (const a of A) for (let f = 0; f < 4; f++) writeFile(`${a.dir}/seed${f}.txt`, `seed ${a.i} ${f}\n`);
  for (let f = 0; f < 3; f++) writeFile(`person/p${f}.txt`, `person ${f}\n`);
  g("add", "-A");
  g("commit", "-q", "-m", "seed");
  let checks = 0;
  const lib = opts.oracle === "cli" ? null : await oracleProcess(root, env);

  const ownFiles = (a) => [...truth.keys()].filter((p) => p.startsWith(`${a.dir}/`) && truth.get(p) !== null).sort();

  function payload(a, phase, tool, input, id, extra = {}) {
    const cwd = root;
    if (a.harness === "gemini") {
      return JSON.stringify({
        session_id: a.id,
        transcript_path: `/home/dev/.gemini/tmp/x/chats/session-${a.id}.json`,
        cwd,
        hook_event_name: phase === "pre" ? "BeforeTool" : "AfterTool",
        timestamp: new Date().toISOString(),
        tool_name: tool,
        tool_input: input,
        ...extra,
      });
    }
    const base = {
      session_id: a.id,
      transcript_path: `/home/dev/.${a.harness}/sessions/${a.id}.jsonl`,
      cwd,
      permission_mode: "default",
      hook_event_name: phase === "pre" ? "PreToolUse" : "PostToolUse",
      tool_name: tool,
      tool_input: input,
      tool_use_id: id,
    };
    if (a.harness === "codex") return JSON.stringify({ ...base, turn_id: `turn-${a.id}`, model: "gpt-5-codex", ...extra });
    return JSON.stringify({ ...base, ...extra });
  }

  async function hook(a, body) {
    const r = await proc(["hook", a.harness], body, a.harness === "codex" ? {} : { CLAUDE_PROJECT_DIR: root, GEMINI_PROJECT_DIR: root });
    hookMs.push(r.ms);
    if (r.code !== 0 || r.stdout !== "") violate(`hook ${a.harness} exit ${r.code} stdout ${JSON.stringify(r.stdout.slice(0, 80))}`);
    return r;
  }

  /** One call: pre hook, the effect (applied to the model too), post hook; records what it changed. */
  async function call(a, kind, tool, input, effect, post = {}) {
    const id = `${a.harness === "claude" ? "toolu" : "call"}_${a.i}_${++a.n}`;
    // Gemini's payloads carry no call id: unwind names the call by its pairing key (docs/design.md), which
    // `changes --call` takes by its unique start; every soak write carries a fresh number, so it is unique.
    const named =
      a.harness === "gemini"
        ? `h-${createHash("sha256")
            .update(`${a.session}\0${tool}\0${stable(input)}`)
            .digest("hex")
            .slice(0, 16)}`
        : id;
    await hook(a, payload(a, "pre", tool, input, id));
    const before = new Map();
    const touched = effect();
    for (const [p, was] of touched) {
      before.set(p, was);
      if (!a.first.has(p)) a.first.set(p, was);
    }
    const postBody = payload(a, "post", post.tool ?? tool, input, id, post.extra ?? {});
    const r = await hook(a, post.event ? postBody.replace('"PostToolUse"', `"${post.event}"`) : postBody);
    a.calls.push({ id: named, kind, harness: a.harness, changed: new Map([...before].map(([p, was]) => [p, [was, truth.get(p)]])) });
    calls++;
    return r;
  }

  /** A fresh line of text no earlier write used: every write changes the bytes. */
  const text = (a) => `agent ${a.i} write ${a.n + 1} ${a.rnd.int(1e9)}\n`;

  async function fileCall(a) {
    const files = ownFiles(a);
    const create = files.length < 3 || a.rnd.next() < 0.3;
    const rel = create ? `${a.dir}/f${a.n + 1}.txt` : a.rnd.pick(files);
    const abs = join(root, rel);
    const old = truth.get(rel) ?? null;
    const now = text(a);
    const effect = () => {
      writeFile(rel, now);
      return [[rel, old]];
    };
    if (a.harness === "claude") {
      if (create || a.rnd.next() < 0.5) return call(a, "file", "Write", { file_path: abs, content: now }, effect);
      return call(a, "file", "Edit", { file_path: abs, old_string: old, new_string: now }, effect);
    }
    if (a.harness === "gemini") {
      if (create || a.rnd.next() < 0.5) return call(a, "file", "write_file", { file_path: abs, content: now }, effect);
      return call(a, "file", "replace", { file_path: abs, instruction: "edit", old_string: old, new_string: now, expected_replacements: 1 }, effect);
    }
    const patch = create
      ? `*** Begin Patch\n*** Add File: ${rel}\n+${now.trimEnd()}\n*** End Patch\n`
      : `*** Begin Patch\n*** Update File: ${rel}\n@@\n-${old.trimEnd()}\n+${now.trimEnd()}\n*** End Patch\n`;
    return call(a, "file", "apply_patch", { command: patch }, effect);
  }

  /** A shell call: edits one or two files and may delete a seeded one; some fail, some run in the background. */
  async function shellCall(a) {
    const files = ownFiles(a);
    const targets = [a.rnd.pick(files), `${a.dir}/sh${a.n + 1}.txt`];
    const seeded = files.filter((p) => /\/seed\d\.txt$/.test(p));
    const del = seeded.length > 0 && a.rnd.next() < 0.25 ? a.rnd.pick(seeded.filter((p) => p !== targets[0])) : undefined;
    const failed = a.rnd.next() < 0.2;
    const background = !failed && a.harness !== "codex" && a.rnd.next() < 0.2;
    const contents = targets.map(() => text(a));
    const effect = () => {
      const out = [];
      targets.forEach((t, k) => {
        out.push([t, truth.get(t) ?? null]);
        writeFile(t, contents[k]);
      });
      if (del) {
        out.push([del, truth.get(del)]);
        removeFile(del);
      }
      return out;
    };
    const command = `echo ... > ${targets.join(" ")}${del ? ` && rm ${del}` : ""}${failed ? " && false" : ""}`;
    if (a.harness === "claude") {
      const input = { command, description: "shell", ...(background ? { run_in_background: true } : {}) };
      await call(a, "shell", "Bash", input, effect, failed ? { event: "PostToolUseFailure", extra: { error: "Exit code 1" } } : {});
    } else if (a.harness === "gemini") {
      const input = { command, description: "shell", ...(background ? { is_background: true } : {}) };
      await call(a, "shell", "run_shell_command", input, effect, { extra: { tool_response: { llmContent: `Command: ${command}\nExit Code: ${failed ? 1 : 0}` } } });
    } else {
      await call(a, "shell", "Bash", { command }, effect, { extra: { tool_response: failed ? "exit status 1" : "ok" } });
    }
    // A background command's window stays open until the session's next call: a read closes it, as an agent's next call would.
    if (background) {
      const id = `read_${a.i}_${a.n}`;
      const tool = a.harness === "claude" ? "Read" : "read_file";
      const input = { file_path: join(root, targets[0]) };
      await hook(a, payload(a, "pre", tool, input, id));
      await hook(a, payload(a, "post", tool, input, id));
    }
  }

  /** What `changes --session` must say for `a`: each path it changed, from its bytes before to now. */
  function expectedChanges(a) {
    const out = [];
    for (const [p, was] of a.first) {
      const now = truth.get(p) ?? null;
      if (was === now) continue;
      out.push({ path: p, change: was === null ? "added" : now === null ? "deleted" : "modified", pre: was, post: now });
    }
    return out;
  }
  /** The model's bytes as the record's state names them. */
  const keyOf = (bytes, st) => (bytes === null ? null : st?.sha256 === undefined && st?.oid !== undefined ? `oid:${oid(bytes)}` : sha(bytes));
  /**
   * `changes --session` as the command prints it, or (every check but each ORACLE_CLI_EVERY-th) the same
   * report from the library in this process: the command's start-up was 60% of the run's CPU (where a
   * file call's two hooks cost 0.08 s each, `changes` cost 0.3-0.4 s), and the command is the library
   * behind a parser (docs/library.md). The command still answers a steady share of the checks.
   */
  async function changesOf(a, call) {
    const scope = call ? { session: a.session, call } : { session: a.session };
    if (++checks % ORACLE_CLI_EVERY === 0 || !lib) return cli(["changes", "--session", a.session, ...(call ? ["--call", call] : []), "--json"]);
    try {
      return { code: 0, json: await lib.ask({ scope }), stdout: "", stderr: "" };
    } catch (e) {
      return { code: e.exit ?? -1, json: undefined, stdout: "", stderr: String(e.message ?? e) };
    }
  }
  /** `changes` of the session (or of its call `c`) against the model: each path, from its bytes before to after. */
  async function checkChanges(a, when, c) {
    const what = c ? `${a.session} --call ${c.id}` : a.session;
    const r = await changesOf(a, c?.id);
    if (r.code !== 0 || !r.json) return violate(`${when}: changes ${what} exit ${r.code}: ${r.stderr.trim()}`);
    const got = r.json.entries.map((e) => `${e.path} ${e.change} ${stateKey(e.pre)} ${stateKey(e.post)}`).sort();
    const byPath = new Map(r.json.entries.map((e) => [e.path, e]));
    const want = (c ? expectedOfCall(c) : expectedChanges(a)).map((w) => `${w.path} ${w.change} ${keyOf(w.pre, byPath.get(w.path)?.pre)} ${keyOf(w.post, byPath.get(w.path)?.post)}`).sort();
    if (JSON.stringify(got) !== JSON.stringify(want)) violate(`${when}: changes ${what}\n  got  ${JSON.stringify(got)}\n  want ${JSON.stringify(want)}`);
  }
  /** What `changes --call` must say of a call just made: each path it changed, from its bytes before the call to after. */
  function expectedOfCall(c) {
    const out = [];
    for (const [p, [was, now]] of c.changed) {
      if (was === now) continue;
      out.push({ path: p, change: was === null ? "added" : now === null ? "deleted" : "modified", pre: was, post: now });
    }
    return out;
  }
  /**
   * After a step, the call it made is checked (`changes --call`, whose fold starts at that call); every
   * SESSION_CHECK_EVERY steps, each whole session (whose fold starts at its first call: its cost grows
   * with the record, see docs/development.md), and always after an undo and a redo.
   */
  async function checkAfterStep(agents, when) {
    await Promise.all(agents.map((a) => checkChanges(a, when, a.calls[a.calls.length - 1])));
  }
  /** Every file of the model holds exactly its bytes on disk. */
  function checkTree(when) {
    for (const [p, want] of truth) {
      const abs = join(root, p);
      const got = existsSync(abs) ? readFileSync(abs, "utf8") : null;
      if (got !== want) violate(`${when}: ${p} holds ${JSON.stringify(got?.slice(0, 60))}, the model ${JSON.stringify(want?.slice(0, 60))}`);
    }
  }

  /**
   * Undo of a random scope (a whole session, or one call of it), checked
   * against the model, then its redo. A call's path that a later call of its
   * session wrote again is a conflict with a reason, left untouched.
   */
  async function undoRedo() {
    const agent = R.pick(A);
    // Now and then a session that has ended: its paths the agent's later sessions wrote again are conflicts.
    const a = agent.past.length > 0 && R.next() < 0.3 ? R.pick(agent.past) : agent;
    if (a.calls.length === 0) return;
    const whole = R.next() < 0.5;
    const c = whole ? null : R.pick(a.calls);
    const scope = whole ? ["--session", a.session] : ["--session", a.session, "--call", c.id];
    const expect = new Map(); // path -> bytes after the undo
    const conflicted = new Set();
    // What the scope left on each path it changed: the bytes its last write to the path made.
    const left = new Map();
    for (const k of whole ? a.calls : [c]) for (const [p, [, after]] of k.changed) left.set(p, after);
    for (const [p, after] of left) {
      const was = whole ? a.first.get(p) : c.changed.get(p)[0];
      if (was === after) continue;
      if ((truth.get(p) ?? null) === after) expect.set(p, was);
      else conflicted.add(p);
    }
    const before = new Map(truth);
    const r = await cli(["undo", ...scope, "--json"]);
    undos++;
    if (r.code !== 0 && r.code !== 1) return violate(`undo ${scope.join(" ")}: exit ${r.code}: ${r.stderr.trim()}`);
    const items = r.json?.items ?? [];
    for (const it of items) {
      if (it.action === "conflict") {
        conflicts++;
        if (!conflicted.has(it.path)) violate(`undo ${scope.join(" ")}: unexpected conflict on ${it.path} (${it.reason})`);
        if (!it.reason) violate(`undo ${scope.join(" ")}: a conflict on ${it.path} without a reason`);
      }
    }
    for (const p of conflicted) if (!items.some((it) => it.path === p && it.action === "conflict")) violate(`undo ${scope.join(" ")}: ${p} was written again later, yet no conflict`);
    for (const [p, v] of expect) truth.set(p, v);
    checkTree(`after undo ${scope.join(" ")}`);
    if (whole && conflicted.size === 0) {
      const cs = await changesOf(a);
      if (cs.code !== 0 || cs.json?.entries?.length !== 0) violate(`after undo ${scope.join(" ")}: changes not empty: ${cs.stdout.slice(0, 200)} ${cs.stderr.trim()}`);
    }
    const receipt = r.json?.receipt;
    // Nothing applied (every path a conflict or already back): no receipt, and nothing to redo.
    if (receipt === null && expect.size === 0 && items.every((it) => it.action === "conflict" || it.action === "skip")) return;
    if (typeof receipt !== "string") return violate(`undo ${scope.join(" ")}: no receipt id in ${r.stdout.slice(0, 200)}`);
    const rr = await cli(["redo", receipt, "-q"]);
    if (rr.code !== 0) violate(`redo ${receipt}: exit ${rr.code}: ${rr.stderr.trim()}`);
    for (const [p, v] of before) truth.set(p, v);
    checkTree(`after redo of ${scope.join(" ")}`);
    // A session that has ended is checked by its call: its whole change set meets what later sessions wrote over it.
    if (a === agent) await checkChanges(a, `after redo of ${scope.join(" ")}`);
    else if (c) await checkChanges(a, `after redo of ${scope.join(" ")}`, c);
  }

  async function personEdit() {
    const p = `person/p${R.int(5)}.txt`;
    writeFile(p, `person edit ${steps} ${R.int(1e9)}\n`);
  }
  let watching = false;
  async function watcher() {
    const r = await cli(["watch", watching ? "stop" : "start"]);
    if (r.code !== 0) violate(`watch ${watching ? "stop" : "start"}: exit ${r.code}: ${r.stderr.trim()}`);
    else watching = !watching;
  }
  async function gc() {
    const r = await cli(["gc"]);
    if (r.code !== 0) violate(`gc: exit ${r.code}: ${r.stderr.trim()}`);
  }

  const t0 = performance.now();
  let lastReport = t0;
  let lastCalls = 0;
  while (calls < callsWanted && Date.now() < deadline && violations.length < 20) {
    steps++;
    // Every kind of step comes round at a fixed rate, so a short run has them all; the rest is drawn.
    const x = steps % 8 === 0 ? 0.95 : steps % 15 === 0 ? 0.98 : steps % 25 === 0 ? 0.995 : R.next() * 0.92;
    if (x < 0.7) {
      // A round of file calls: up to `parallel` distinct agents at once.
      const order = [...A].sort(() => R.next() - 0.5).slice(0, Math.max(1, parallel - R.int(3)));
      await Promise.all(order.map((a) => fileCall(a)));
      await checkAfterStep(order, `file calls of round ${steps}`);
      for (const a of order) rotate(a);
    } else if (x < 0.85) {
      const a = R.pick(A);
      await shellCall(a);
      await checkAfterStep([a], `shell call of ${a.session}`);
      rotate(a);
    } else if (x < 0.92) await personEdit();
    else if (x < 0.97) await undoRedo();
    else if (x < 0.99) await gc();
    else await watcher();
    if (steps % SESSION_CHECK_EVERY === 0) for (const a of A) if (a.calls.length > 0) await checkChanges(a, `every ${SESSION_CHECK_EVERY} steps (step ${steps})`);
    if (performance.now() - lastReport > 30_000) {
      const now = performance.now();
      log(
        `${calls} calls, ${steps} steps, ${((calls * 1000) / (now - t0)).toFixed(2)} calls/s (the last ${((now - lastReport) / 1000).toFixed(0)} s: ${(((calls - lastCalls) * 1000) / (now - lastReport)).toFixed(2)}), hook p50 ${percentile(hookMs, 50)?.toFixed(0)} ms`,
      );
      lastReport = now;
      lastCalls = calls;
    }
  }
  if (watching) await watcher();
  checkTree("at the end");
  for (const a of A) if (a.calls.length > 0) await checkChanges(a, "at the end");
  const v = await cli(["verify"]);
  if (v.code !== 0) violate(`verify: exit ${v.code}: ${v.stdout.trim()} ${v.stderr.trim()}`);
  const seconds = (performance.now() - t0) / 1000;
  const storeBytes = dirBytes(join(root, ".git", "unwind"));
  const gitBytes = dirBytes(join(root, ".git", "objects"));
  const ends = readFileSync(join(rssDir, "rss"), "utf8")
    .split("\n")
    .filter(Boolean)
    .map((l) => l.split(" "));
  const rss = ends.map((e) => Number(e[0]));
  /** CPU seconds of unwind processes, by command: where the run's time went. */
  const cpuByCommand = {};
  for (const [, us, cmd] of ends) cpuByCommand[cmd] = Number(((cpuByCommand[cmd] ?? 0) + Number(us) / 1e6).toFixed(1));
  const summary = {
    seed,
    agents,
    parallel,
    calls,
    steps,
    sessions: agents + sessionsEnded,
    undos,
    conflicts,
    seconds: Math.round(seconds),
    callsPerSecond: Number((calls / seconds).toFixed(2)),
    storeBytes,
    storeBytesPerCall: calls ? Math.round(storeBytes / calls) : null,
    gitObjectBytes: gitBytes,
    peakRssKb: Math.max(...rss),
    oracle: lib ? `library, the command every ${ORACLE_CLI_EVERY}th check` : "command",
    soakProcessPeakRssKb: process.resourceUsage().maxRSS,
    soakProcessCpuSeconds: Number(((process.cpuUsage().user + process.cpuUsage().system) / 1e6).toFixed(1)),
    ...(lib ? { oracleProcess: await lib.usage() } : {}),
    cpuSecondsByCommand: cpuByCommand,
    hookMs: { n: hookMs.length, p50: Math.round(percentile(hookMs, 50)), p99: Math.round(percentile(hookMs, 99)) },
    verify: v.stdout.trim(),
    violations,
  };
  lib?.close();
  if (!opts.keep) rmSync(top, { recursive: true, force: true });
  else summary.dir = top;
  return summary;
}

if (process.argv[1] && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const USAGE = "usage: npm run soak -- [--agents 6] [--calls 20000] [--seed 1] [--minutes M] [--parallel P] [--session-calls N] [--oracle lib|cli] [--keep]";
  const NUMERIC = new Set(["agents", "calls", "seed", "parallel", "minutes", "session-calls"]);
  const given = process.argv.slice(2);
  if (given.includes("--help") || given.includes("-h")) {
    process.stdout.write(`${USAGE}\n`);
    process.exit(0);
  }
  // A flag it does not know, or a number that is none, would otherwise start an hours-long run with the defaults.
  for (let i = 0; i < given.length; i++) {
    const flag = given[i];
    const name = flag.replace(/^--/, "");
    const value = given[i + 1];
    const bad = (why) => {
      process.stderr.write(`soak: ${flag}${value === undefined || why.startsWith("not") ? "" : ` ${value}`}: ${why}\n${USAGE}\n`);
      process.exit(2);
    };
    if (flag === "--keep") continue;
    if (flag === "--oracle") {
      if (!["lib", "cli"].includes(value)) bad("expected lib or cli");
    } else if (!flag.startsWith("--") || !NUMERIC.has(name)) bad("not an option of the soak");
    else if (!(Number(value) >= (name === "seed" ? 0 : 1))) bad(name === "seed" ? "expected a number" : "expected a number from 1");
    i++;
  }
  const arg = (name, dflt) => {
    const i = process.argv.indexOf(`--${name}`);
    return i > 0 ? Number(process.argv[i + 1]) : dflt;
  };
  const summary = await soak({
    agents: arg("agents", 6),
    calls: arg("calls", 20000),
    seed: arg("seed", 1),
    parallel: arg("parallel", undefined),
    minutes: arg("minutes", undefined),
    sessionCalls: arg("session-calls", undefined),
    oracle: process.argv.includes("--oracle") ? process.argv[process.argv.indexOf("--oracle") + 1] : "lib",
    keep: process.argv.includes("--keep"),
    log: (m) => process.stderr.write(`${m}\n`),
  });
  process.stdout.write(`${JSON.stringify(summary, null, 2)}\n`);
  process.exit(summary.violations.length === 0 ? 0 : 1);
}
