import { appendFileSync, existsSync, readdirSync, readFileSync, rmSync } from "node:fs";
import { randomBytes } from "node:crypto";
import { join } from "node:path";
import { UnwindError } from "../domain/errors.js";
import { sha256 } from "../domain/hash.js";
import type { Decision, Policy } from "../domain/policy.js";
import type { Ownership } from "../domain/owned-procs.js";
import type { ChangeKind, RepoPath, State } from "../domain/types.js";
import { commitBody, writeLooseObject } from "../git/objects.js";
import { createRef } from "../git/refs.js";
import type { Context } from "../repo/context.js";
import { writeFileAtomic } from "../sys/atomic.js";
import { mkdirPrivate } from "../sys/files.js";

/**
 * Run capsules (SPEC section 9): one sealed record per wrapped command.
 *
 *   <store>/runs/<id>.json           the capsule: one JSON document, never rewritten
 *   <store>/runs/<id>.results.jsonl  what happened after sealing (undo receipts, cleanups), one checksummed line each
 *   <store>/runs/HEAD                {"id","seal"} of the newest capsule; each capsule names the one before (`prev`)
 *   <store>/runs/BASE                after gc: the pointer where the kept chain legitimately ends
 *   refs/unwind/runs/<id>            a commit whose message is {"v":1,"run","seal"}: the seal kept a second time,
 *                                    in git, with the before and after snapshots as parents (so git keeps them)
 *
 * The seal is the SHA-256 of the capsule file's bytes. docs/format.md says
 * what it catches and what it cannot.
 */

export const RUN_REFS = "refs/unwind/runs/";

/** How a recorded process ended, or what `cleanup` found (SPEC section 9). */
export type EndOutcome = "terminated" | "killed" | "already-exited" | "pid-reused" | "access-denied" | "still-running" | "unverifiable";

export interface ProcessRecord {
  pid: number;
  /** Start time in clock ticks since boot (/proc/<pid>/stat field 22); null where it cannot be read (not Linux). */
  start: string | null;
  comm: string;
  /**
   * What it ran when the command ended, read from the process itself
   * (/proc/<pid>/cmdline): a job started through `setsid` or `nohup`, or a
   * script's `sleep`, is first seen as the launcher or the script that
   * forked it, and `comm` (15 bytes of the program's name) keeps only that.
   * Absent when it had exited by then, and in capsules older than the field.
   */
  cmd?: string[];
  /** The parent when first seen. */
  ppid: number;
  how: Ownership;
  /** When it was first seen, in ms after the command started. */
  seenAfterMs: number;
  /** What the run did about it when the command ended: null with --keep-processes, or when it had already exited. */
  end: EndOutcome | null;
}

export interface CapsuleEntry {
  /** Repository-relative, as the record holds it (bytes that are not UTF-8 kept: src/domain/path-bytes.ts). */
  path: RepoPath;
  change: ChangeKind;
  pre: State | null;
  post: State | null;
  decision: Decision;
  /** Whether undo could take it back, as far as the record can say (the work tree decides the rest). */
  reversible: boolean;
  /** Why not, when not. */
  why: string | null;
}

export interface SnapshotRef {
  snapshot: string;
  commit: string;
  tree: string;
}

export interface Capsule {
  v: 1;
  id: string;
  argv: string[];
  cwd: string;
  root: string;
  task: string | null;
  startedAt: string;
  endedAt: string;
  durationMs: number;
  /** code: the command's exit code, or null when a signal ended it; status: what `unwind run` exited with. */
  exit: { code: number | null; signal: string | null; status: number; timedOut: boolean };
  timeoutMs: number | null;
  policy: { source: string | null; sha256: string | null; rules: Policy };
  /** false: hashes only, no earlier bytes kept: undo is refused. */
  rollback: boolean;
  keepProcesses: boolean;
  /** "proc": the process table was read (Linux); "group": only the child and its process group were known. */
  processTracking: "proc" | "group";
  before: SnapshotRef | null;
  after: SnapshotRef;
  processes: ProcessRecord[];
  /** Records of the store found rewritten while the command ran (each a sentence); empty when none. */
  tamper: string[];
  entries: CapsuleEntry[];
  prev: { id: string; seal: string } | null;
}

/** A line of `<id>.results.jsonl`. */
export type RunResult =
  | { kind: "undo"; at: string; receipt: string; safeOnly: boolean; counts: Record<string, number> }
  | { kind: "cleanup"; at: string; dryRun: boolean; processes: { pid: number; start: string | null; outcome: EndOutcome; cmd?: string[] }[] };

export interface CapsuleProblem {
  id: string;
  message: string;
}

export function newRunId(now = new Date()): string {
  const stamp = now
    .toISOString()
    .replace(/[-:]/g, "")
    .replace(/\.\d+Z$/, "Z");
  return `run-${stamp}-${randomBytes(4).toString("hex")}`;
}

const checksum = (body: string) => sha256(body).slice(0, 16);

export class Capsules {
  readonly dir: string;
  constructor(private readonly ctx: Context) {
    this.dir = join(ctx.store, "runs");
  }

  fileOf(id: string): string {
    return join(this.dir, `${id}.json`);
  }
  resultsOf(id: string): string {
    return join(this.dir, `${id}.results.jsonl`);
  }
  private headPath(): string {
    return join(this.dir, "HEAD");
  }
  /** After gc: the chain pointer where the kept chain legitimately ends. */
  private basePath(): string {
    return join(this.dir, "BASE");
  }

  /** Every capsule's id, in no particular order: read from the file names alone. */
  names(): string[] {
    if (!existsSync(this.dir)) return [];
    return readdirSync(this.dir)
      .filter((f) => f.endsWith(".json"))
      .map((f) => f.slice(0, -5));
  }

  /** Every capsule's id, newest first (by start time; a file that does not parse goes last, so `verify` can still name it). */
  ids(): string[] {
    const found = this.names();
    const at = new Map(found.map((id) => [id, this.tryRead(id)?.startedAt ?? ""]));
    return found.sort((a, b) => (at.get(b)! < at.get(a)! ? -1 : at.get(b)! > at.get(a)! ? 1 : b < a ? -1 : 1));
  }

  exists(id: string): boolean {
    return existsSync(this.fileOf(id)) || existsSync(join(this.ctx.commonDir, RUN_REFS + id));
  }

  /** The capsule as stored, unchecked (lists); null when it cannot be read. */
  tryRead(id: string): Capsule | null {
    try {
      return JSON.parse(readFileSync(this.fileOf(id), "utf8")) as Capsule;
    } catch {
      return null;
    }
  }

  /** The SHA-256 of each capsule file as it is now: what a run compares before and after its command. */
  fileSeals(): Map<string, string> {
    const out = new Map<string, string>();
    if (!existsSync(this.dir)) return out;
    for (const f of readdirSync(this.dir)) {
      if (!f.endsWith(".json")) continue;
      try {
        out.set(f.slice(0, -5), sha256(readFileSync(join(this.dir, f))));
      } catch {
        /* vanished */
      }
    }
    return out;
  }

  /**
   * The capsule, only if its seal holds: its bytes hash to the seal kept in
   * git and to the one the chain names. Otherwise the store is damaged
   * (exit 4) and nothing may be done from it: a forged capsule could name
   * any path to delete or any process to kill.
   */
  async verified(id: string): Promise<{ capsule: Capsule; seal: string }> {
    const problems = await this.verify([id]);
    if (problems.length > 0) {
      throw new UnwindError("E_STORE_DAMAGED", `run ${id}: ${problems[0]!.message}; the capsule is refused and nothing was done`, {
        hint: "run `unwind verify`; a capsule whose seal fails is never used",
      });
    }
    const bytes = readFileSync(this.fileOf(id));
    return { capsule: JSON.parse(bytes.toString("utf8")) as Capsule, seal: sha256(bytes) };
  }

  /** Every problem with the named capsules (default: all), the chain, and their result lines. */
  async verify(only?: readonly string[]): Promise<CapsuleProblem[]> {
    const ids = only ?? this.ids();
    const problems: CapsuleProblem[] = [];
    if (ids.length === 0 && !existsSync(this.dir)) return problems;
    const gitSeals = await this.gitSeals();
    const chain = this.chain(problems, only === undefined);
    for (const id of ids) {
      let bytes: Buffer;
      try {
        bytes = readFileSync(this.fileOf(id));
      } catch {
        problems.push({ id, message: "the capsule file is missing" });
        continue;
      }
      const seal = sha256(bytes);
      const inGit = gitSeals.get(id);
      if (inGit === undefined) problems.push({ id, message: "its seal is missing from git (refs/unwind/runs)" });
      else if (inGit !== seal) problems.push({ id, message: "the capsule was altered: its bytes do not match the seal kept in git" });
      const onChain = chain.seals.get(id);
      // Past a broken link the chain vouches for nothing, and the break is reported where it is.
      if (onChain === undefined) {
        if (chain.whole) problems.push({ id, message: "the capsule is not on the chain of runs" });
      } else if (onChain !== seal) problems.push({ id, message: "the capsule was altered: its bytes do not match the seal the chain names" });
      try {
        const c = JSON.parse(bytes.toString("utf8")) as Capsule;
        if (c.id !== id) problems.push({ id, message: `the capsule names another run (${c.id})` });
      } catch {
        problems.push({ id, message: "the capsule is not valid JSON" });
      }
      for (const line of this.results(id).damaged) problems.push({ id, message: `result line ${line} is damaged (checksum)` });
    }
    for (const id of gitSeals.keys()) if (only === undefined && !existsSync(this.fileOf(id))) problems.push({ id, message: "a seal in git names a capsule that is missing" });
    return problems;
  }

  /** id -> seal, as the chain from HEAD names them; `whole` when it was followed to its start without a break. */
  private chain(problems: CapsuleProblem[], report: boolean): { seals: Map<string, string>; whole: boolean } {
    const seals = new Map<string, string>();
    const base = readPointer(this.basePath());
    let p = readPointer(this.headPath());
    while (p) {
      if (base && p.id === base.id && p.seal === base.seal) break; // gc dropped the rest
      if (seals.has(p.id)) {
        if (report) problems.push({ id: p.id, message: "the chain of runs loops here" });
        return { seals, whole: false };
      }
      seals.set(p.id, p.seal);
      let bytes: Buffer;
      try {
        bytes = readFileSync(this.fileOf(p.id));
      } catch {
        return { seals, whole: false }; // reported per capsule
      }
      if (sha256(bytes) !== p.seal) return { seals, whole: false }; // its prev cannot be trusted either; reported per capsule
      try {
        p = (JSON.parse(bytes.toString("utf8")) as Capsule).prev;
      } catch {
        return { seals, whole: false };
      }
    }
    return { seals, whole: true };
  }

  private async gitSeals(): Promise<Map<string, string>> {
    const out = new Map<string, string>();
    if (this.ctx.mode === "private" && !existsSync(join(this.ctx.gitDir, "HEAD"))) return out;
    const r = await this.ctx.git(["for-each-ref", "--format=%(refname)%00%(contents:subject)", RUN_REFS]);
    for (const line of r.stdout.toString("utf8").split("\n")) {
      if (!line) continue;
      const [ref, subject] = line.split("\0");
      try {
        const m = JSON.parse(subject ?? "") as { run?: string; seal?: string };
        if (typeof m.seal === "string") out.set(ref!.slice(RUN_REFS.length), m.seal);
      } catch {
        /* unreadable: counts as missing */
      }
    }
    return out;
  }

  /**
   * Seals a capsule (the caller holds the store lock): the seal goes to git
   * first, then the capsule file, then the chain's head. A crash in
   * between leaves a seal without its capsule, which `verify` names; never
   * a capsule that seems sealed and is not.
   */
  async seal(capsule: Omit<Capsule, "prev">): Promise<{ capsule: Capsule; seal: string }> {
    mkdirPrivate(this.dir);
    const head = readPointer(this.headPath());
    const full: Capsule = { ...capsule, prev: head };
    const text = JSON.stringify(full) + "\n";
    const seal = sha256(text);
    // Without rollback the before snapshot is not kept alive: no earlier bytes are kept (SPEC section 9).
    const parents = [capsule.rollback ? capsule.before?.commit : undefined, capsule.after.commit].filter((c): c is string => Boolean(c));
    const now = Math.floor(Date.now() / 1000);
    const body = commitBody(capsule.after.tree, "unwind <unwind@localhost>", now, JSON.stringify({ v: 1, run: capsule.id, seal }) + "\n", parents);
    const oid = writeLooseObject(join(this.ctx.commonDir, "objects"), "commit", body, this.ctx.objectFormat);
    await createRef(this.ctx, RUN_REFS + capsule.id, oid);
    writeFileAtomic(this.fileOf(capsule.id), text);
    writeFileAtomic(this.headPath(), JSON.stringify({ id: capsule.id, seal }) + "\n");
    return { capsule: full, seal };
  }

  /**
   * gc (the caller holds the store lock): drops the capsules the chain
   * reaches from the newest one that ended before `cutoff` on, with their
   * results and seals; BASE keeps the pointer that named the newest
   * dropped, so `verify` knows the chain ends there. Dropping a suffix of
   * the chain keeps what is left whole. Capsules off the chain that ended
   * before `cutoff` go too.
   */
  async dropOlderThan(cutoff: number, dryRun: boolean): Promise<string[]> {
    const drop: string[] = [];
    let via = readPointer(this.headPath());
    const base = readPointer(this.basePath());
    let from: { id: string; seal: string } | null = null;
    const onChain = new Set<string>();
    while (via && !onChain.has(via.id) && !(base && via.id === base.id && via.seal === base.seal)) {
      onChain.add(via.id);
      const c = this.tryRead(via.id);
      if (!c) break;
      if (from === null && Date.parse(c.endedAt) < cutoff) from = via;
      if (from !== null) drop.push(via.id);
      via = c.prev;
    }
    for (const id of this.ids()) {
      const c = this.tryRead(id);
      if (!onChain.has(id) && c && Date.parse(c.endedAt) < cutoff) drop.push(id);
    }
    if (dryRun || drop.length === 0) return drop;
    if (from) writeFileAtomic(this.basePath(), JSON.stringify(from) + "\n");
    const seals = await this.ctx.git(["for-each-ref", "--format=%(refname) %(objectname)", RUN_REFS]);
    const refs = new Map(
      seals.stdout
        .toString("utf8")
        .split("\n")
        .filter(Boolean)
        .map((l) => l.split(" ") as [string, string]),
    );
    const lines = drop.flatMap((id) => (refs.has(RUN_REFS + id) ? [`delete ${RUN_REFS}${id} ${refs.get(RUN_REFS + id)}`] : []));
    if (lines.length > 0) await this.ctx.git(["update-ref", "--stdin"], { input: lines.join("\n") + "\n" });
    for (const id of drop) {
      rmSync(this.fileOf(id), { force: true });
      rmSync(this.resultsOf(id), { force: true });
    }
    return drop;
  }

  /** Adds a result after sealing: appended, one checksummed line, fsynced by the append's own close. */
  appendResult(id: string, result: RunResult): void {
    const body = JSON.stringify(result);
    appendFileSync(this.resultsOf(id), `${body.slice(0, -1)},"sum":"${checksum(body)}"}\n`);
  }

  /** The results added after sealing; a line whose checksum fails is left out and named by its number. */
  results(id: string): { results: RunResult[]; damaged: number[] } {
    const out: RunResult[] = [];
    const damaged: number[] = [];
    let text = "";
    try {
      text = readFileSync(this.resultsOf(id), "utf8");
    } catch {
      return { results: out, damaged };
    }
    text.split("\n").forEach((line, k) => {
      if (!line) return;
      try {
        const parsed = JSON.parse(line) as RunResult & { sum?: string };
        const { sum, ...rest } = parsed;
        if (sum !== checksum(JSON.stringify(rest))) throw new Error("checksum");
        out.push(rest as RunResult);
      } catch {
        damaged.push(k + 1);
      }
    });
    return { results: out, damaged };
  }
}

function readPointer(path: string): { id: string; seal: string } | null {
  try {
    const p = JSON.parse(readFileSync(path, "utf8")) as { id?: unknown; seal?: unknown };
    return typeof p.id === "string" && typeof p.seal === "string" ? { id: p.id, seal: p.seal } : null;
  } catch {
    return null;
  }
}
