import { existsSync, lstatSync, readdirSync, readFileSync, statSync } from "node:fs";
import { homedir } from "node:os";
import { basename, isAbsolute, join, resolve } from "node:path";
import { payloadPath } from "../capture/capture.js";
import { modeOf } from "../capture/observe.js";
import { readTranscript, TranscriptError, type Transcript, type TranscriptCall } from "../capture/harness/claude-transcript.js";
import { UnwindError, usage } from "../domain/errors.js";
import { sha256 } from "../domain/hash.js";
import { idMatches } from "../domain/ids.js";
import type { RepoPath, State } from "../domain/types.js";
import { blobOid } from "../git/objects.js";
import { ensureStore, type Context } from "../repo/context.js";
import { Cas } from "../store/cas.js";
import { loadConfig } from "../store/config.js";
import { append, readJournal, type JournalRecord } from "../store/journal.js";
import { withLock } from "../store/lock.js";

export interface ImportOptions {
  claude?: boolean | undefined;
  codex?: boolean | undefined;
  /** A session id (or a unique part of 6+ characters, or `claude:<id>`), or a transcript file's path; default: every session of this project. */
  session?: string | undefined;
  /** Say what would be imported; write nothing. */
  dryRun?: boolean | undefined;
  /** Claude Code's configuration directory (default: $CLAUDE_CONFIG_DIR, else ~/.claude). */
  claudeDir?: string | undefined;
}

/** One call of a transcript and what import did with it. */
export interface ImportedCall {
  call: string;
  tool: string;
  at: string;
  /** "file": its before and after are in the record now; "unknown": a shell (or unknown) call, its effects unknown. */
  capture: "file" | "unknown";
  paths: string[];
  /** imported; recorded (hooks, or an earlier import, have it already); skipped (`why`). */
  status: "imported" | "recorded" | "skipped";
  why?: string;
  command?: string;
}

export interface ImportedSession {
  session: string;
  transcript: string;
  calls: ImportedCall[];
  counts: { imported: number; recorded: number; skipped: number; unknown: number };
  /** Of the calls imported now, how many fall in a session the hooks recorded too: calls they missed. */
  missedByHooks: number;
}

export interface ImportReport {
  harness: "claude";
  dryRun: boolean;
  sessions: ImportedSession[];
}

/**
 * `unwind import --claude [SESSION]`: calls from Claude Code's own session
 * transcript become imported records (docs/import.md). Idempotent: a call
 * the journal has (a hook caught it, or an earlier import) is left alone.
 */
export async function importSessions(ctx: Context, opts: ImportOptions): Promise<ImportReport> {
  if (opts.codex) {
    throw usage(
      "unwind import --codex: Codex's session logs keep an edit as a diff without the file it changed, and no bytes of a deleted file, so unwind cannot know what a file held before: nothing is imported",
      "record Codex's next sessions with: unwind init --codex",
    );
  }
  if (!opts.claude) throw usage("import: name the client whose transcript to read: --claude", "e.g. unwind import --claude --dry-run");
  const files = transcripts(ctx, opts);
  const read = files.map((f) => ({ file: f, t: parse(f) }));
  const dryRun = Boolean(opts.dryRun);
  const work = async () => {
    const journal = readJournal(ctx.store).records;
    const cas = dryRun ? null : Cas.in(ctx.store);
    const { sizeCap } = loadConfig(ctx.store);
    const out: ImportedSession[] = [];
    for (const { file, t } of read) {
      const session = `claude:${sessionIdOf(file, t)}`;
      const mine = journal.filter((r) => r.session === session);
      const known = new Set(mine.map((r) => r.call));
      const hooked = mine.some((r) => !r.imported);
      const records: JournalRecord[] = [];
      const calls: ImportedCall[] = [];
      for (const c of t.calls) {
        const one = toRecords(ctx, c, session, { cas, sizeCap });
        if (known.has(c.call)) one.report = { ...one.report, status: "recorded" };
        else if (one.report.status === "imported") records.push(...one.records);
        calls.push(one.report);
      }
      for (const s of t.skipped) calls.push({ call: s.call, tool: s.tool, at: s.at, capture: "file", paths: [], status: known.has(s.call) ? "recorded" : "skipped", why: s.why });
      calls.sort((a, b) => (a.at < b.at ? -1 : a.at > b.at ? 1 : 0));
      if (!dryRun) append(ctx.store, records);
      const n = (s: ImportedCall["status"]) => calls.filter((c) => c.status === s).length;
      const imported = n("imported");
      out.push({
        session,
        transcript: basename(file),
        calls,
        counts: { imported, recorded: n("recorded"), skipped: n("skipped"), unknown: calls.filter((c) => c.status === "imported" && c.capture === "unknown").length },
        missedByHooks: hooked ? imported : 0,
      });
    }
    return { harness: "claude" as const, dryRun, sessions: out };
  };
  if (dryRun) return work();
  await ensureStore(ctx);
  return withLock(ctx.store, "import", work);
}

/** The session a transcript is of: its file's name, as the hooks' `session_id` is (the entries' own id where the name is no id). */
function sessionIdOf(file: string, t: Transcript): string {
  const stem = basename(file, ".jsonl");
  return /^[A-Za-z0-9_-]{6,}$/.test(stem) ? stem : (t.sessionId ?? stem);
}

function parse(file: string): Transcript {
  let text: string;
  try {
    text = readFileSync(file, "utf8");
  } catch (e) {
    throw new UnwindError("E_SCOPE_UNKNOWN", `cannot read the transcript ${file}: ${(e as NodeJS.ErrnoException).code ?? String(e)}`, { hint: "check the file's path and permissions" });
  }
  try {
    return readTranscript(text);
  } catch (e) {
    if (!(e instanceof TranscriptError)) throw e;
    throw new UnwindError("E_TRANSCRIPT", `transcript ${file}:${e.line} is ${e.message}; nothing was imported`, {
      hint: "import it once the session has ended, or mend or remove that line",
    });
  }
}

/**
 * Claude Code keeps a project's transcripts in `<config>/projects/<slug>/`,
 * the slug being the directory it ran in with every character but letters
 * and digits made `-`. A session started in a subdirectory has a longer
 * slug: those count when their transcript says it ran inside the root.
 */
function transcripts(ctx: Context, opts: ImportOptions): string[] {
  const wanted = opts.session?.replace(/^claude:/, "");
  if (wanted !== undefined && (wanted.includes("/") || wanted.endsWith(".jsonl"))) {
    const file = resolve(wanted);
    if (!existsSync(file)) throw new UnwindError("E_SCOPE_UNKNOWN", `no transcript ${wanted}`, { hint: "give a Claude Code session id, or the path of its .jsonl transcript" });
    return [file];
  }
  const config = opts.claudeDir ?? process.env.CLAUDE_CONFIG_DIR ?? join(homedir(), ".claude");
  const projects = join(config, "projects");
  const slug = ctx.root.replace(/[^A-Za-z0-9]/g, "-");
  let dirs: string[] = [];
  try {
    dirs = readdirSync(projects).filter((d) => d === slug || d.startsWith(`${slug}-`));
  } catch {
    /* no projects directory: no transcripts */
  }
  const files: string[] = [];
  for (const d of dirs.sort()) {
    let names: string[] = [];
    try {
      names = readdirSync(join(projects, d)).filter((f) => f.endsWith(".jsonl"));
    } catch {
      continue;
    }
    for (const f of names.sort()) {
      const path = join(projects, d, f);
      if (d !== slug && !ranInside(ctx.root, path)) continue;
      if (statSync(path).isFile()) files.push(path);
    }
  }
  const where = `${projects}/${slug}/`;
  if (wanted === undefined) {
    if (files.length === 0)
      throw new UnwindError("E_SCOPE_UNKNOWN", `no Claude Code transcripts for ${ctx.root} (looked in ${where})`, { hint: "give the session's transcript path, or set CLAUDE_CONFIG_DIR" });
    return files;
  }
  const stem = (f: string) => basename(f, ".jsonl");
  const exact = files.filter((f) => stem(f) === wanted);
  const hits = exact.length > 0 ? exact : files.filter((f) => idMatches(stem(f), wanted));
  if (hits.length === 1) return hits;
  if (hits.length > 1) {
    throw new UnwindError("E_SCOPE_AMBIGUOUS", `${hits.length} Claude Code sessions match '${wanted}': ${hits.map(stem).slice(0, 8).join(", ")}`, { hint: "give more characters of the session id" });
  }
  throw new UnwindError("E_SCOPE_UNKNOWN", `no Claude Code session '${wanted}' for ${ctx.root} (looked in ${where})`, {
    hint: "list what can be imported with: unwind import --claude --dry-run; or give the transcript's path",
  });
}

/** Whether a transcript's first `cwd` is the root or inside it (a longer slug may be another project's). */
function ranInside(root: string, file: string): boolean {
  try {
    const head = readFileSync(file, "utf8").slice(0, 1 << 20);
    const m = /"cwd":"((?:[^"\\]|\\.)*)"/.exec(head);
    if (!m) return false;
    const cwd = JSON.parse(`"${m[1]}"`) as string;
    return cwd === root || cwd.startsWith(`${root}/`);
  } catch {
    return false;
  }
}

/** One call's records (pre and post) and its line in the report. */
function toRecords(ctx: Context, c: TranscriptCall, session: string, how: { cas: Cas | null; sizeCap: number }): { records: JournalRecord[]; report: ImportedCall } {
  const base = {
    v: 1 as const,
    root: ctx.root,
    session,
    harness: "claude",
    ...(c.agent ? { agent: c.agent } : {}),
    tool: c.tool,
    call: c.call,
    imported: true as const,
  };
  const e = c.effect;
  if (e.kind === "unknown") {
    const command = e.command !== undefined ? { command: e.command } : {};
    return {
      records: [
        { ...base, at: c.start, phase: "pre", kind: "unknown", ...command },
        { ...base, at: c.end, phase: "post", kind: "unknown", ...command },
      ],
      report: { call: c.call, tool: c.tool, at: c.start, capture: "unknown", paths: [], status: "imported", why: e.why, ...command },
    };
  }
  const where = payloadPath(ctx.root, ctx.store, c.cwd ?? ctx.root, isAbsolute(e.path) ? e.path : resolve(c.cwd ?? ctx.root, e.path));
  if ("skip" in where) return { records: [], report: { call: c.call, tool: c.tool, at: c.start, capture: "file", paths: [], status: "skipped", why: where.skip } };
  const path = where.rel;
  const mode = modeNow(ctx.root, path);
  const state = (text: string | null | undefined): State | null => {
    if (text === null) return null;
    if (text === undefined) return { kind: "unknown" };
    const data = Buffer.from(text, "utf8");
    if (data.length > how.sizeCap) return { kind: "toolarge", mode, size: data.length, sha256: sha256(data) };
    return { kind: "file", mode, size: data.length, sha256: how.cas ? how.cas.put(data) : sha256(data), oid: blobOid(data, ctx.objectFormat) };
  };
  return {
    records: [
      { ...base, at: c.start, phase: "pre", kind: "file", path, state: state(e.before) },
      { ...base, at: c.end, phase: "post", kind: "file", path, state: state(e.after) },
    ],
    report: { call: c.call, tool: c.tool, at: c.start, capture: "file", paths: [path], status: "imported", ...(e.before === undefined ? { why: "its earlier content is not in the transcript" } : {}) },
  };
}

/** The transcript does not say a file's mode: the file's own where it is a regular file now, else git's plain file. */
function modeNow(root: string, path: RepoPath): string {
  try {
    const st = lstatSync(join(root, path));
    return st.isFile() ? modeOf(st) : "100644";
  } catch {
    return "100644";
  }
}
