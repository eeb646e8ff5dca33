import { spawn, spawnSync } from "node:child_process";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { BIN, makeRepo, tempDir, treeState, write } from "../helpers.js";
import { claudePayload } from "../journal-helpers.js";

/*
 * Issue 34, item 2: the hook, snapshot, undo, redo and gc with system-call
 * faults injected by strace (EIO, ENOSPC, EROFS returned, or the process
 * killed) at a spread of the calls that touch the repository or its store.
 * The hook always exits 0, fast, and says the failure in the error log
 * (`status`); a command finishes or fails with one clear line; the next
 * command recovers, `verify` passes and no recorded byte is lost.
 *
 * Which calls: a clean traced run of each operation lists, per system call,
 * the main thread's calls that name a path under the repository (strace -y);
 * the faults go to a spread of those (first, middle, last...). strace counts
 * per thread, so the same K also lands in each git child it spawns. The
 * clean run and the injected runs trace with the same options, so their
 * calls come in the same order; where a write still lands on one of libuv's
 * own pipes (missedTarget), the run is stopped and the next write aimed at.
 */

const HAS_STRACE = spawnSync("strace", ["-V"], { stdio: "ignore" }).status === 0;
const SYSCALLS = ["openat", "write", "rename", "fsync", "mkdir", "unlink"] as const;
type Syscall = (typeof SYSCALLS)[number];
const FAULTS = ["error=EIO", "error=ENOSPC", "error=EROFS", "signal=SIGKILL"] as const;
const BUDGET_MS = 4000;
/** Cases per operation: the file's budget is a minute on a quiet machine. */
const PER_OP = 4;

interface Ran {
  code: number | null;
  signal: NodeJS.Signals | null;
  stdout: string;
  stderr: string;
  ms: number;
  /** An injected run stopped as soon as its trace showed the fault had missed its target (see missedTarget). */
  missed?: string;
}

/** strace as the clean and the injected runs use it: the same options, so their calls come in the same order as far as they can. */
const TRACE_OPTS = (syscalls: string, out: string) => ["-f", "--seccomp-bpf", "-qq", "-y", "-o", out, "-e", `trace=${syscalls},execve`];
/** Aims at consecutive calls before a case is given up as one that cannot be hit. */
const MAX_AIMS = 6;
/** How long an injected run may take before it is killed (with its git children) and the case judged. */
const RUN_LIMIT_MS = 60_000;

/** The CLI (or hook) as a real process, optionally under strace. */
function run(cwd: string, args: string[], opts: { input?: string; strace?: string[] } = {}): Promise<Ran> {
  const env = { ...process.env, NO_COLOR: "1", UNWIND_HOOK_BUDGET_MS: String(BUDGET_MS), CLAUDE_PROJECT_DIR: cwd };
  const [cmd, argv] = opts.strace ? ["strace", [...opts.strace, process.execPath, BIN, ...args]] : [process.execPath, [BIN, ...args]];
  const t0 = performance.now();
  return new Promise((res) => {
    // Its own process group, so a run that never ends is killed whole (strace, node, git) rather than holding the file.
    const child = spawn(cmd, argv as string[], { cwd, env, detached: true });
    const kill = () => {
      try {
        process.kill(-child.pid!, "SIGKILL");
      } catch {
        /* gone */
      }
    };
    const limit = setTimeout(kill, RUN_LIMIT_MS);
    // An injected run's trace is read as it grows: a fault that missed is stopped at once, not waited out.
    const trace = opts.strace?.some((a) => a.startsWith("inject=")) ? opts.strace[opts.strace.indexOf("-o") + 1] : undefined;
    let missed: string | undefined;
    const watch = trace
      ? setInterval(() => {
          let text = "";
          try {
            text = readFileSync(trace, "utf8");
          } catch {
            return;
          }
          missed = missedTarget(text) ?? undefined;
          if (missed) kill();
        }, 100)
      : undefined;
    let stdout = "";
    let stderr = "";
    child.stdout.on("data", (d) => (stdout += d));
    child.stderr.on("data", (d) => (stderr += d));
    child.on("close", (code, signal) => {
      clearTimeout(limit);
      clearInterval(watch);
      if (trace && !missed) missed = missedTarget(readFileSync(trace, "utf8")) ?? undefined;
      res({ code, signal, stdout, stderr, ms: performance.now() - t0, ...(missed ? { missed } : {}) });
    });
    child.stdin.end(opts.input ?? "");
  });
}

/**
 * Whether an error strace injected (the trace of `strace -f -y -e trace=SYSCALL,execve`) went to a
 * node thread's write on a pipe, socket or eventfd instead of a file: a fault no kernel gives (a
 * pipe write cannot fail with EIO, ENOSPC or EROFS), and one that can hang the process for good.
 * libuv's signal handler writes a one-byte token to a lock pipe on every child's exit; an error
 * there loses the token, and the next spawn waits for it in read() for ever. Those writes come
 * between the main thread's own as the git children happen to end, so the K-th write of a traced
 * run is not always the K-th of the clean run that chose K.
 */
function missedTarget(trace: string): string | null {
  const lines = trace.split("\n");
  const execs = new Set(lines.filter((l) => /^\d+ +execve\(/.test(l)).map((l) => l.split(" ")[0]));
  execs.delete(lines[0]?.split(" ")[0]); // the first execve is node itself; the others are its git children
  for (const line of lines) {
    if (!line.endsWith("(INJECTED)") || !/= -1 /.test(line)) continue;
    const tid = line.split(" ")[0]!;
    if (!execs.has(tid) && /^\d+ +write\(\d+<(pipe|socket|anon_inode):/.test(line)) return line;
  }
  return null;
}

async function ok(cwd: string, args: string[], input?: string): Promise<Ran> {
  const r = await run(cwd, args, input === undefined ? {} : { input });
  if (r.code !== 0) throw new Error(`${args.join(" ")} in ${cwd}: exit ${r.code} ${r.signal ?? ""}\n${r.stderr}`);
  return r;
}

const json = (r: Ran) => JSON.parse(r.stdout);

let seq = 0;
/** One Claude tool call through `unwind hook claude`: pre, effect, post; `pre` may run under strace. */
async function claudeCall(root: string, tool: string, input: Record<string, unknown>, effect: () => void, pre?: string[]): Promise<{ id: string; pre: Ran }> {
  const id = `toolu_fault_${++seq}`;
  const p = await run(root, ["hook", "claude"], { input: claudePayload(root, "sess-f", "PreToolUse", tool, input, id), ...(pre ? { strace: pre } : {}) });
  effect();
  const post = await run(root, ["hook", "claude"], { input: claudePayload(root, "sess-f", "PostToolUse", tool, input, id) });
  expect([post.code, post.stdout]).toEqual([0, ""]);
  return { id, pre: p };
}

/** A session that changed a.txt and added n.txt; the tree before and after it. */
async function session(root: string) {
  const before = treeState(root);
  await claudeCall(root, "Write", { file_path: join(root, "a.txt"), content: "a 2\n" }, () => write(root, "a.txt", "a 2\n"));
  await claudeCall(root, "Write", { file_path: join(root, "n.txt"), content: "n 1\n" }, () => write(root, "n.txt", "n 1\n"));
  return { before, after: treeState(root) };
}

const repo = () => makeRepo({ "a.txt": "a 1\n", "b/c.txt": "c 1\n" });

interface Op {
  name: string;
  /** Brings a fresh repository to just before the operation. */
  setup(root: string): Promise<Record<string, unknown>>;
  /** The operation, under `strace` when given. */
  act(root: string, state: Record<string, unknown>, strace?: string[]): Promise<Ran>;
  /** After the injected run and a recovering command: every byte is where it belongs. */
  check(root: string, state: Record<string, unknown>, injected: Ran): Promise<void>;
}

const OPS: Op[] = [
  {
    name: "hook (a shell call's tree snapshot)",
    setup: async () => ({}),
    act: async (root, _s, strace) => {
      const r = await claudeCall(
        root,
        "Bash",
        { command: "echo x > a.txt && echo y > y.txt", description: "edit" },
        () => {
          write(root, "a.txt", "x\n");
          write(root, "y.txt", "y\n");
        },
        strace,
      );
      return r.pre;
    },
    check: async (root, _s, injected) => {
      const status = json(await ok(root, ["status", "--json"]));
      // A session none of whose records survived is unknown (exit 3): then nothing of it was captured.
      const listed = await run(root, ["changes", "--session", "sess-f", "--json"]);
      expect([0, 3], listed.stderr).toContain(listed.code);
      const changes = listed.code === 0 ? json(listed).entries.map((e: { path: string; change: string }) => `${e.change} ${e.path}`) : [];
      const whole = changes.includes("modified a.txt") && changes.includes("added y.txt");
      // Either the call was captured whole, or the failure is in the error log status shows (a killed hook has no chance to say it).
      if (!whole && injected.signal !== "SIGKILL") expect(status.errorCount, JSON.stringify({ changes, injected })).toBeGreaterThan(0);
      // The next call is recorded again, exactly.
      const next = await claudeCall(root, "Write", { file_path: join(root, "z.txt"), content: "z\n" }, () => write(root, "z.txt", "z\n"));
      const got = json(await ok(root, ["changes", "--call", next.id, "--json"])).entries.map((e: { path: string; change: string }) => `${e.change} ${e.path}`);
      expect(got).toEqual(["added z.txt"]);
    },
  },
  {
    name: "snapshot",
    setup: async (root) => {
      await ok(root, ["snapshot"]);
      write(root, "a.txt", "a 3\n");
      write(root, "d/e.txt", "e\n");
      return {};
    },
    act: (root, _s, strace) => run(root, ["snapshot"], strace ? { strace } : {}),
    check: async (root) => {
      const id = json(await ok(root, ["snapshot", "--json"])).id;
      // The snapshot taken after the fault holds the work tree byte for byte.
      expect(json(await ok(root, ["diff", id, "--json"])).files).toEqual([]);
    },
  },
  {
    name: "undo",
    setup: async (root) => session(root),
    act: (root, _s, strace) => run(root, ["undo", "--session", "sess-f", "-q"], strace ? { strace } : {}),
    check: async (root, s) => {
      const again = await run(root, ["undo", "--session", "sess-f", "-q"]);
      expect(again.stderr).not.toMatch(/internal error/);
      expect(treeState(root)).toEqual(s.before);
      // The session's record is whole: a redo of the last undo brings its bytes back.
      await ok(root, ["redo", "--last", "-q"]);
      expect(treeState(root)).toEqual(s.after);
    },
  },
  {
    name: "redo",
    setup: async (root) => {
      const s = await session(root);
      await ok(root, ["undo", "--session", "sess-f", "-q"]);
      const receipt = json(await ok(root, ["receipts", "--json"])).receipts[0].id;
      return { ...s, receipt };
    },
    act: (root, s, strace) => run(root, ["redo", s.receipt as string, "-q"], strace ? { strace } : {}),
    check: async (root, s) => {
      if (JSON.stringify(treeState(root)) !== JSON.stringify(s.after)) {
        const again = await run(root, ["redo", s.receipt as string, "-q"]);
        expect(again.stderr).not.toMatch(/internal error/);
      }
      expect(treeState(root)).toEqual(s.after);
    },
  },
  {
    name: "gc",
    setup: async (root) => {
      const s = await session(root);
      await ok(root, ["undo", "--session", "sess-f", "-q"]);
      await ok(root, ["redo", "--last", "-q"]);
      await ok(root, ["snapshot"]);
      return s;
    },
    act: (root, _s, strace) => run(root, ["gc", "--ttl", "0s"], strace ? { strace } : {}),
    check: async (root, s) => {
      await ok(root, ["gc", "--ttl", "0s"]);
      expect(treeState(root)).toEqual(s.after);
    },
  },
];

/**
 * The main thread's calls of each system call that name a path under `root`,
 * by their 1-based count among all its calls of that system call (strace's
 * `when=`), from one clean traced run of the operation.
 */
async function candidates(op: Op): Promise<Record<Syscall, number[]>> {
  const root = repo();
  const state = await op.setup(root);
  const out = join(tempDir("unwind-trace-"), "trace");
  const r = await op.act(root, state, TRACE_OPTS(SYSCALLS.join(","), out));
  expect([r.code, r.stderr]).toEqual([0, expect.any(String)]);
  const lines = readFileSync(out, "utf8").split("\n");
  const main = lines[0]!.split(" ")[0];
  const counts = Object.fromEntries(SYSCALLS.map((s) => [s, 0])) as Record<Syscall, number>;
  const found = Object.fromEntries(SYSCALLS.map((s) => [s, [] as number[]])) as Record<Syscall, number[]>;
  for (const line of lines) {
    const m = /^(\d+) +([a-z0-9]+)\((.*)$/.exec(line);
    if (!m || m[1] !== main || !(SYSCALLS as readonly string[]).includes(m[2]!)) continue;
    const s = m[2] as Syscall;
    counts[s]++;
    if (m[3]!.startsWith(`"${root}`) || new RegExp(`^\\d+<${root.replace(/[.*+?^${}()|[\]\\]/g, "\\$&")}/`).test(m[3]!) || m[3]!.includes(`, "${root}/`)) found[s].push(counts[s]);
  }
  return found;
}

interface Case {
  op: Op;
  syscall: Syscall;
  fault: (typeof FAULTS)[number];
  k: number;
}

/** A case's failure (null: it held), and whether the fault visibly bit: the run failed, was killed, or logged an error. */
async function runCase(c: Case): Promise<{ failure: string | null; bit: boolean; missed: number }> {
  const what = `${c.op.name}: ${c.syscall} ${c.fault} at call ${c.k}`;
  // A fault that went to one of libuv's own pipes (see missedTarget) is aimed at the next call, on a fresh
  // repository: the trace shows where it went, so this repeats only a case that did not test what it names.
  let root = "";
  let state: Record<string, unknown> = {};
  let injected: Ran | undefined;
  const missed: string[] = [];
  while (missed.length < MAX_AIMS) {
    root = repo();
    state = await c.op.setup(root);
    const trace = join(tempDir("unwind-inject-"), "trace");
    const k = c.k + missed.length;
    injected = await c.op.act(root, state, [...TRACE_OPTS(c.syscall, trace), "-e", `inject=${c.syscall}:${c.fault}:when=${k}`]);
    if (!injected.missed) break;
    missed.push(injected.missed);
  }
  if (missed.length === MAX_AIMS) return { bit: true, missed: MAX_AIMS, failure: `${what}: missed its target ${MAX_AIMS} times:\n  ${missed.join("\n  ")}` };
  if (!injected) throw new Error("unreachable");
  try {
    expect(injected.stderr, what).not.toMatch(/internal error|This is a bug/);
    if (c.op.name.startsWith("hook")) {
      // A killed hook is killed; any other fault: exit 0, nothing on stdout, inside its budget (plus start-up under strace).
      if (injected.signal !== "SIGKILL") expect([injected.code, injected.stdout], what).toEqual([0, ""]);
      expect(injected.ms, what).toBeLessThan(BUDGET_MS + 8000);
    } else if (injected.signal !== "SIGKILL" && injected.code !== 0) {
      // Done as far as safe (exit 1, per path reasons), or one line saying what failed.
      expect([1, 2, 3, 4], `${what}: ${injected.stderr}`).toContain(injected.code);
      if (injected.code !== 1) expect(injected.stderr, what).toMatch(/^unwind: [^\n]+\n$/);
    }
    // The next command recovers (finishes an interrupted apply), the record verifies, nothing is lost.
    const status = json(await ok(root, ["status", "--json"]));
    const bit = injected.code !== 0 || injected.signal !== null || status.errorCount > 0;
    await c.op.check(root, state, injected);
    await ok(root, ["verify"]);
    return { failure: null, bit, missed: missed.length };
  } catch (e) {
    return {
      bit: true,
      missed: missed.length,
      failure: `${what}\n  injected: exit ${injected.code} ${injected.signal ?? ""} ${injected.stderr.trim()}\n  ${(e as Error).message.split("\n").slice(0, 6).join("\n  ")}`,
    };
  }
}

/** Runs `tasks` with at most `n` at a time (the machine has two cores). */
async function pool<T>(tasks: (() => Promise<T>)[], n: number): Promise<T[]> {
  const out: T[] = new Array(tasks.length);
  let next = 0;
  await Promise.all(
    Array.from({ length: n }, async () => {
      while (next < tasks.length) {
        const i = next++;
        out[i] = await tasks[i]!();
      }
    }),
  );
  return out;
}

describe.skipIf(!HAS_STRACE)("system-call faults (strace -e inject)", () => {
  it("a fault strace put on a pipe write is told apart from one on a file write", () => {
    const dir = tempDir("unwind-miss-");
    const file = join(dir, "f");
    const script = `require("fs").writeSync(1, "x"); try { require("fs").writeFileSync(${JSON.stringify(file)}, "y"); } catch {}`;
    const traced = (extra: string[]) => {
      const out = join(dir, `t${extra.join("")}`);
      spawnSync("strace", ["-f", "-qq", "-y", "-o", out, "-e", "trace=write,execve", ...extra, process.execPath, "-e", script], { stdio: ["ignore", "pipe", "ignore"] });
      return readFileSync(out, "utf8");
    };
    // A clean run says which of the writes goes to a pipe (libuv's own, at start-up) and which to the file.
    const writes = traced([])
      .split("\n")
      .filter((l) => / write\(/.test(l));
    const toPipe = writes.findIndex((l) => /write\(\d+<pipe:/.test(l)) + 1;
    const toFile = writes.findIndex((l) => l.includes(`<${file}>`)) + 1;
    expect([toPipe > 0, toFile > 0]).toEqual([true, true]);
    expect(missedTarget(traced(["-e", `inject=write:error=ENOSPC:when=${toPipe}`]))).toMatch(/ write\(\d+<pipe:.*ENOSPC.*\(INJECTED\)$/);
    // Control: the same fault on the file's write is on target.
    const onFile = traced(["-e", `inject=write:error=ENOSPC:when=${toFile}`]);
    expect(onFile).toMatch(new RegExp(`<${file.replace(/[.*+?^${}()|[\]\\]/g, "\\$&")}>.*\\(INJECTED\\)`));
    expect(missedTarget(onFile)).toBeNull();
  });

  it("the hook, snapshot, undo, redo and gc: exit 0 or one clear line, then recovery, verify, no byte lost", async () => {
    const found = await pool(
      OPS.map((op) => () => candidates(op)),
      3,
    );
    // PER_OP cases an operation, each a different system call (rotating through them across operations),
    // the faults rotating, each at one of the calls that touch the repository, spread from first to last.
    const cases: Case[] = [];
    let f = 0;
    let s = 0;
    OPS.forEach((op, i) => {
      const usable = SYSCALLS.filter((sc) => found[i]![sc].length > 0);
      for (let n = 0; n < Math.min(PER_OP, usable.length); n++) {
        const syscall = usable[(s + n) % usable.length]!;
        const list = found[i]![syscall];
        const k = list[Math.floor((((f * 7) % 5) / 4) * (list.length - 1))]!;
        cases.push({ op, syscall, fault: FAULTS[f++ % FAULTS.length]!, k });
      }
      s += PER_OP;
    });
    // Every operation meets faults, and of every kind.
    expect(new Set(cases.map((c) => c.op.name)).size).toBe(OPS.length);
    expect(new Set(cases.map((c) => c.fault)).size).toBe(FAULTS.length);
    const results = await pool(
      cases.map((c) => () => runCase(c)),
      3,
    );
    const failures = results.map((r) => r.failure).filter((x): x is string => x !== null);
    expect(failures, `${cases.length} cases`).toEqual([]);
    // The faults were real: a good share of them made the run fail, killed it, or left an error in the log.
    expect(results.filter((r) => r.bit).length, `${cases.length} cases`).toBeGreaterThanOrEqual(Math.ceil(cases.length / 3));
  }, 600_000);
});
