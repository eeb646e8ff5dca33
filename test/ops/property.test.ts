/**
 * Property: undo of one session takes back exactly its own work (SPEC
 * section 2, "Attribution"; section 3, the plan), over random interleavings.
 *
 * Each seed drives a fresh real repository through the real hook process:
 * two Claude sessions' file calls (Write/Edit, pinned by their own captures)
 * and shell calls (Bash, tree snapshots before and after, with create,
 * modify, delete and rename effects in between), two shell calls of both
 * sessions overlapping in time, a file call of one session inside the
 * other's open shell call, and a person's direct edits between calls.
 *
 * The test keeps its own ground truth of what was *observable*: every tree
 * snapshot observes every path of the pool, a file capture its own path,
 * and the undo the work tree as it is. A change of a path between two
 * observations belongs to whoever wrote it in between (a person's edit that
 * was undone before anything looked is nobody's change, since no record can
 * hold it). Then the undo of session T (no force), called through the
 * library (the sessions are recorded through the real hook process), and:
 *
 * 1. Safety: a path whose last observed change is not T's, and a path T never
 *    changed, is byte-identical (content and existence) after the undo; so
 *    are files outside the pool; conflicts and skips leave their path as is.
 * 2. Honesty: a path listed as restore/delete is one T changed, and is left
 *    as it was right before T's first change; the report is partial (the
 *    command exits 1) exactly when a conflict is listed (else not: exit 0).
 * 3. Usefulness: a path T changed, that no change seen while both sessions'
 *    shell calls were open touched, and that nobody else changed from T's
 *    first change on, is back to its state right before T's first change.
 *
 * A failure names its seed and prints the whole operation log.
 */
import { existsSync, lstatSync, mkdirSync, readFileSync, renameSync, unlinkSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { describe, expect, it } from "vitest";
import { open, type UndoReport } from "../../src/index.js";
import { makeRepo, treeState } from "../helpers.js";
import { claudePayload, hook } from "../journal-helpers.js";

const POOL = ["f0", "f1", "f2", "f3", "sub/f4", "sub/f5"];
const FIXED: Record<string, string> = { "keep.txt": "nobody touches this\n", "sub/README": "fixed\n" };
/**
 * Seeds 1-10 (16 cost the suite's time budget 40 s more and found nothing
 * the ten do not), plus the seeds a wider sweep (1-200) found breaking the
 * property, kept so the failures stay visible until fixed:
 * 24, 62 and 157 (safety: a deleted path someone re-created and deleted
 * again since is resurrected by the undo) and 28 (usefulness: a file another
 * session's Write created inside T's shell call, then deleted by T's shell
 * command, is not in T's change set at all).
 */
const SEEDS = [...Array.from({ length: 10 }, (_, i) => i + 1), 24, 28, 62, 157];
const OPS = 8;

type Agent = "A" | "B";
type Actor = Agent | "P";
/** A path's state: its content, or null when absent. */
type St = string | null;

/** One observed change of one path: between two observations, and who wrote in between (in order). */
interface Change {
  from: St;
  to: St;
  writers: Actor[];
  /** Some write in between happened while both sessions' shell calls were open. */
  shared: boolean;
  /** Index in the operation log where it was observed. */
  seen: number;
}

function mulberry32(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const fmt = (s: St) => (s === null ? "absent" : JSON.stringify(s));
const other = (a: Agent): Agent => (a === "A" ? "B" : "A");

/** Coverage across all seeds: the property must actually be exercised. */
const stats = {
  overlaps: 0,
  filesInShell: 0,
  personEdits: 0,
  renames: 0,
  usefulChecked: 0,
  undoB: 0,
  items: {} as Record<string, number>,
};

class Run {
  readonly log: string[] = [];
  readonly cur = new Map<string, St>();
  /** What the last observation of each path saw. */
  private readonly obs = new Map<string, St>();
  private readonly pending = new Map<string, { writers: Actor[]; shared: boolean }>();
  readonly changes = new Map<string, Change[]>();
  /** Both sessions' shell calls are open: whatever is written now is shared. */
  both = false;
  private n = 0;
  private calls = 0;
  /** The sessions that sent any hook event (undo of a session never seen is exit 3). */
  readonly seen = new Set<Agent>();
  readonly sessions: Record<Agent, string>;

  constructor(
    readonly seed: number,
    readonly root: string,
    readonly rnd: () => number,
  ) {
    this.sessions = { A: `prop-aaaa-${seed}`, B: `prop-bbbb-${seed}` };
    for (const p of POOL) {
      const s = this.disk(p);
      this.cur.set(p, s);
      this.obs.set(p, s);
    }
  }

  int(n: number): number {
    return Math.floor(this.rnd() * n);
  }
  chance(p: number): boolean {
    return this.rnd() < p;
  }
  pick<T>(xs: readonly T[]): T {
    return xs[this.int(xs.length)]!;
  }

  disk(p: string): St {
    const abs = join(this.root, p);
    if (!existsSync(abs)) return null;
    if (!lstatSync(abs).isFile()) return `<not a file: ${p}>`;
    return readFileSync(abs, "utf8");
  }

  private fresh(actor: Actor): string {
    return `${actor}-${++this.n} seed ${this.seed}\n`;
  }

  /** Records that `actor` wrote `p` (now `st`): a change the next observation of `p` will see. */
  private wrote(actor: Actor, p: string, st: St) {
    this.cur.set(p, st);
    const pd = this.pending.get(p) ?? { writers: [], shared: false };
    pd.writers.push(actor);
    if (this.both) pd.shared = true;
    this.pending.set(p, pd);
  }

  /** An observation of `paths` (a tree snapshot, a file capture, the undo's look at the work tree). */
  observe(paths: readonly string[]) {
    for (const p of paths) {
      const now = this.cur.get(p)!;
      const was = this.obs.get(p)!;
      const pd = this.pending.get(p);
      this.pending.delete(p);
      if (now === was) continue;
      if (!pd) throw new Error(`test bug: ${p} changed with no writer`);
      const list = this.changes.get(p) ?? [];
      list.push({ from: was, to: now, writers: pd.writers, shared: pd.shared, seen: this.log.length });
      this.changes.set(p, list);
      this.obs.set(p, now);
    }
  }

  private put(actor: Actor, p: string) {
    const content = this.fresh(actor);
    mkdirSync(dirname(join(this.root, p)), { recursive: true });
    writeFileSync(join(this.root, p), content);
    this.wrote(actor, p, content);
    return content;
  }

  private rm(actor: Actor, p: string) {
    unlinkSync(join(this.root, p));
    this.wrote(actor, p, null);
  }

  private mv(actor: Agent, src: string, dst: string) {
    mkdirSync(dirname(join(this.root, dst)), { recursive: true });
    renameSync(join(this.root, src), join(this.root, dst));
    const moved = this.cur.get(src)!;
    this.wrote(actor, src, null);
    this.wrote(actor, dst, moved);
    stats.renames++;
  }

  private existing() {
    return POOL.filter((p) => this.cur.get(p) !== null);
  }
  private absent() {
    return POOL.filter((p) => this.cur.get(p) === null);
  }

  /** One effect of a shell command run by `actor`: create, modify, delete or rename a pool file. */
  shellEffect(actor: Agent) {
    const kinds: string[] = [];
    if (this.absent().length) kinds.push("create");
    if (this.existing().length) kinds.push("modify", "delete", "mv");
    const k = this.pick(kinds);
    if (k === "create" || k === "modify") {
      const p = this.pick(k === "create" ? this.absent() : this.existing());
      const c = this.put(actor, p);
      this.log.push(`    ${actor} (shell): ${k} ${p} = ${fmt(c)}${this.both ? "  [both open]" : ""}`);
    } else if (k === "delete") {
      const p = this.pick(this.existing());
      this.rm(actor, p);
      this.log.push(`    ${actor} (shell): rm ${p}${this.both ? "  [both open]" : ""}`);
    } else {
      const src = this.pick(this.existing());
      const dst = this.pick(POOL.filter((p) => p !== src));
      const over = this.cur.get(dst) !== null;
      this.mv(actor, src, dst);
      this.log.push(`    ${actor} (shell): mv ${src} ${dst}${over ? " (over an existing file)" : ""}${this.both ? "  [both open]" : ""}`);
    }
  }

  /** A person's direct edit: no hook, outside every call's window. */
  personEdit() {
    const kinds: string[] = [];
    if (this.absent().length) kinds.push("create");
    if (this.existing().length) kinds.push("modify", "delete");
    const k = this.pick(kinds);
    stats.personEdits++;
    if (k === "delete") {
      const p = this.pick(this.existing());
      this.rm("P", p);
      this.log.push(`person: rm ${p}`);
    } else {
      const p = this.pick(k === "create" ? this.absent() : this.existing());
      const c = this.put("P", p);
      this.log.push(`person: ${k} ${p} = ${fmt(c)}`);
    }
  }

  private ev(agent: Agent, event: "PreToolUse" | "PostToolUse", tool: string, input: Record<string, unknown>, id: string) {
    this.seen.add(agent);
    const r = hook(this.root, "claude", claudePayload(this.root, this.sessions[agent], event, tool, input, id));
    if (r.code !== 0 || r.stdout !== "")
      throw new Error(`seed ${this.seed}: ${agent} ${tool} ${event} hook: exit ${r.code}, stdout ${JSON.stringify(r.stdout)}, stderr ${r.stderr}\n${this.log.join("\n")}`);
  }

  shellPre(agent: Agent): { id: string; input: Record<string, unknown> } {
    const id = `toolu_${String(++this.calls).padStart(3, "0")}_${agent}`;
    const input = { command: `step ${this.calls}` };
    this.ev(agent, "PreToolUse", "Bash", input, id);
    this.observe(POOL);
    this.log.push(`${agent} Bash ${id}: pre`);
    return { id, input };
  }

  shellPost(agent: Agent, call: { id: string; input: Record<string, unknown> }) {
    this.ev(agent, "PostToolUse", "Bash", call.input, call.id);
    this.observe(POOL);
    this.log.push(`${agent} Bash ${call.id}: post`);
  }

  /** A Write or Edit of one pool file, pinned by its own pre and post captures. */
  fileCall(agent: Agent, note = "") {
    const p = this.pick(POOL);
    const tool = this.cur.get(p) !== null && this.chance(0.5) ? "Edit" : "Write";
    const id = `toolu_${String(++this.calls).padStart(3, "0")}_${agent}`;
    const abs = join(this.root, p);
    const input: Record<string, unknown> = tool === "Edit" ? { file_path: abs, old_string: this.cur.get(p), new_string: "x" } : { file_path: abs, content: "x" };
    this.ev(agent, "PreToolUse", tool, input, id);
    this.observe([p]);
    const c = this.put(agent, p);
    this.ev(agent, "PostToolUse", tool, input, id);
    this.observe([p]);
    this.log.push(`${agent} ${tool} ${id}: ${p} = ${fmt(c)}${note}`);
  }

  shellCall(agent: Agent) {
    const call = this.shellPre(agent);
    for (let k = 1 + this.int(3); k > 0; k--) this.shellEffect(agent);
    this.shellPost(agent, call);
  }

  /** X's shell call starts, then Y's; both write while both are open; they end in either order. */
  overlap() {
    stats.overlaps++;
    const x: Agent = this.chance(0.5) ? "A" : "B";
    const y = other(x);
    const cx = this.shellPre(x);
    if (this.chance(0.5)) this.shellEffect(x);
    const cy = this.shellPre(y);
    this.both = true;
    for (let k = 1 + this.int(3); k > 0; k--) this.shellEffect(this.pick([x, y]));
    this.both = false;
    const [first, second] = this.chance(0.5) ? ([x, y] as const) : ([y, x] as const);
    this.shellPost(first, first === x ? cx : cy);
    if (this.chance(0.5)) this.shellEffect(second);
    this.shellPost(second, second === x ? cx : cy);
  }

  /** A file call of Y while X's shell call is open: pinned to Y by its own captures. */
  fileInShell() {
    stats.filesInShell++;
    const x: Agent = this.chance(0.5) ? "A" : "B";
    const y = other(x);
    const cx = this.shellPre(x);
    if (this.chance(0.6)) this.shellEffect(x);
    this.fileCall(y, `  [inside ${x}'s ${cx.id}]`);
    if (this.chance(0.6)) this.shellEffect(x);
    this.shellPost(x, cx);
  }

  step() {
    const r = this.rnd();
    if (r < 0.22) this.fileCall(this.chance(0.5) ? "A" : "B");
    else if (r < 0.42) this.shellCall(this.chance(0.5) ? "A" : "B");
    else if (r < 0.62) this.overlap();
    else if (r < 0.78) this.fileInShell();
    else for (let k = 1 + this.int(2); k > 0; k--) this.personEdit();
  }
}

async function property(seed: number) {
  const rnd = mulberry32(seed);
  const init: Record<string, string> = { ...FIXED };
  for (const p of POOL) if (rnd() < 0.6) init[p] = `init ${p}\n`;
  const root = makeRepo(init);
  const run = new Run(seed, root, rnd);
  const target: Agent = seed % 2 === 1 ? "B" : "A";
  if (target === "B") stats.undoB++;
  run.log.push(`seed ${seed}; initial: ${POOL.map((p) => `${p}=${fmt(run.cur.get(p)!)}`).join(" ")}`);
  for (let i = 0; i < OPS; i++) run.step();
  // The session to undo must exist: one that never acted gets one shell call.
  if (!run.seen.has(target)) run.shellCall(target);
  // The undo looks at the work tree as it is now.
  run.observe(POOL);

  const outside = (t: Record<string, string>) => Object.fromEntries(Object.entries(t).filter(([k, v]) => v !== "dir" && !POOL.includes(k)));
  const beforeOutside = outside(treeState(root));
  let r: UndoReport | null = null;
  let failure: unknown = null;
  try {
    r = await (await open({ root })).undo({ session: run.sessions[target] });
  } catch (e) {
    failure = e;
  }
  const after = new Map(POOL.map((p) => [p, run.disk(p)]));
  const items: { path: string; action: string; reason: string | null; detail?: string | null }[] = r?.items ?? [];
  /** The exit code the command would give: 1 when the report is partial, else 0; the error's own when it failed. */
  const code = r ? (r.partial ? 1 : 0) : ((failure as { exit?: number } | null)?.exit ?? -1);

  const violations: string[] = [];
  const bad = (rule: string, text: string) => violations.push(`${rule}: ${text}`);
  if (!r || !Array.isArray(r.items)) bad("report", `no report (exit ${code}): ${String(failure)}`);

  for (const it of items) {
    const k = it.action === "conflict" ? `conflict:${it.reason}` : it.action;
    stats.items[k] = (stats.items[k] ?? 0) + 1;
  }
  const itemOf = (p: string) => items.find((i) => i.path === p);
  const describeItem = (p: string) => {
    const i = itemOf(p);
    return i ? `undo listed it as ${i.action}${i.reason ? ` (${i.reason})` : ""}${i.detail ? `: ${i.detail}` : ""}` : "undo did not list it";
  };

  // Honesty: partial (the exit code) says whether conflicts remain.
  const conflicts = items.some((i) => i.action === "conflict");
  if (code !== (conflicts ? 1 : 0)) bad("honesty", `exit ${code} (partial ${r?.partial}) with ${conflicts ? "" : "no "}conflict in the report`);

  for (const p of POOL) {
    const list = run.changes.get(p) ?? [];
    const now = run.cur.get(p)!;
    const got = after.get(p)!;
    const firstOurs = list.findIndex((c) => c.writers.includes(target));
    const last = list[list.length - 1];
    const lastWriter: Actor | "nobody" = last ? last.writers[last.writers.length - 1]! : "nobody";
    const beforeUs = firstOurs >= 0 ? list[firstOurs]!.from : undefined;

    // 1. Safety.
    if (firstOurs < 0 && got !== now) bad("safety", `${target} never changed ${p}, yet it went from ${fmt(now)} to ${fmt(got)}; ${describeItem(p)}`);
    else if (lastWriter !== target && got !== now) bad("safety", `${p} was last changed by ${lastWriter}, yet it went from ${fmt(now)} to ${fmt(got)}; ${describeItem(p)}`);

    const item = itemOf(p);
    if (item && (item.action === "conflict" || item.action === "skip") && got !== now) bad("safety", `${p} is a ${item.action} (${item.reason}) yet went from ${fmt(now)} to ${fmt(got)}`);

    // 2. Honesty: what undo acted on is T's, and it is put back as it was before T.
    if (item && (item.action === "restore" || item.action === "delete")) {
      if (firstOurs < 0) bad("honesty", `${p} is listed as ${item.action} but ${target} never changed it`);
      else if (got !== beforeUs) bad("honesty", `${p} is listed as ${item.action} and now holds ${fmt(got)}; before ${target}'s first change it held ${fmt(beforeUs!)}`);
    }

    // 3. Usefulness: T's own path, nobody else's since, nothing shared: back as before T.
    if (firstOurs >= 0 && !list.some((c) => c.shared) && list.slice(firstOurs).every((c) => c.writers.every((w) => w === target))) {
      stats.usefulChecked++;
      if (got !== beforeUs) bad("usefulness", `only ${target} changed ${p} (from ${fmt(beforeUs!)} to ${fmt(now)}) yet it now holds ${fmt(got)}; ${describeItem(p)}`);
    }
  }
  for (const i of items) if (!POOL.includes(i.path)) bad("honesty", `undo listed ${i.path} (${i.action}), which is outside what anyone changed`);
  const afterOutside = outside(treeState(root));
  if (JSON.stringify(afterOutside) !== JSON.stringify(beforeOutside)) {
    bad("safety", `files outside the pool changed: ${JSON.stringify(beforeOutside)} -> ${JSON.stringify(afterOutside)}`);
  }

  const changes = POOL.flatMap((p) =>
    (run.changes.get(p) ?? []).map((c) => `  ${p}: ${fmt(c.from)} -> ${fmt(c.to)} by ${c.writers.join(",")}${c.shared ? " (shared)" : ""} (seen after log line ${c.seen})`),
  );
  const message = [
    `seed ${seed}: undo --session ${run.sessions[target]} (${target}) broke the property`,
    "operations:",
    ...run.log.map((l, i) => `  ${String(i).padStart(2)} ${l}`),
    "observed changes (ground truth):",
    ...changes,
    `undo exit ${code}; items: ${JSON.stringify(items)}`,
    "after undo: " + POOL.map((p) => `${p}=${fmt(after.get(p)!)}`).join(" "),
  ].join("\n");
  expect(violations, message).toEqual([]);
}

describe("property: undo of one session over random interleavings of two sessions, overlaps and a person", () => {
  // About 7 s a seed on a quiet machine; the suite's 60 s default ran out under load (a second suite beside it).
  it.each(SEEDS)("seed %i", async (seed) => property(seed), 240_000);

  it("the seeds exercised overlap, pins, renames, a person, conflicts and real restores", () => {
    const s = stats.items;
    const summary = JSON.stringify(stats);
    expect(stats.overlaps, summary).toBeGreaterThan(0);
    expect(stats.filesInShell, summary).toBeGreaterThan(0);
    expect(stats.personEdits, summary).toBeGreaterThan(0);
    expect(stats.renames, summary).toBeGreaterThan(0);
    expect(stats.undoB, summary).toBeGreaterThan(0);
    expect(stats.usefulChecked, summary).toBeGreaterThan(0);
    expect(s["conflict:concurrent-call"] ?? 0, summary).toBeGreaterThan(0);
    expect((s["conflict:later-write"] ?? 0) + (s["conflict:changed-since"] ?? 0), summary).toBeGreaterThan(0);
    expect(s.restore ?? 0, summary).toBeGreaterThan(0);
    expect(s.delete ?? 0, summary).toBeGreaterThan(0);
  });
});
