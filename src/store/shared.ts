import { storePath } from "../domain/store-layout.js";
import { randomBytes } from "node:crypto";
import { existsSync, readFileSync } from "node:fs";
import { hostname } from "node:os";
import { basename, join } from "node:path";
import { usage } from "../domain/errors.js";
import { sha256 } from "../domain/hash.js";
import { checkOrigin, hostSlug, type LeftOutWhy, type SharedSessionDoc } from "../domain/share.js";
import type { Capsule } from "./capsules.js";
import type { State } from "../domain/types.js";
import { objectId, writeLooseObject } from "../git/objects.js";
import { parseBatch } from "../git/git.js";
import type { Context } from "../repo/context.js";
import { writeFileAtomic } from "../sys/atomic.js";
import { decodeLine, sessionFile } from "./journal.js";
import { mkdirPrivate } from "../sys/files.js";

/**
 * Shared records as git objects (docs/format.md, "Shared records"): one
 * commit per session under `refs/unwind/shared/<origin>/sessions/`, and
 * the reading and checking of those fetched from other origins. Fetched
 * records are only ever read from git: nothing here writes into one.
 */

export const SHARED_PREFIX = "refs/unwind/shared/";
/** The refspec `unwind fetch` uses: not forced, so history rewritten on the remote is refused, not taken. */
export const FETCH_REFSPEC = `${SHARED_PREFIX}*:${SHARED_PREFIX}*`;
const WHO = "unwind <unwind@localhost>";

/** `git config unwind.origin`, else `<store>/origin`; with `create`, the latter is written on first use (`<host>-<8 hex>`). */
export async function originOf(ctx: Context, opts: { create: boolean }): Promise<string | null> {
  const r = await ctx.git(["config", "--get", "unwind.origin"], { okCodes: [1] });
  const configured = r.code === 0 ? r.stdout.toString("utf8").trim() : "";
  if (configured !== "") {
    const bad = checkOrigin(configured);
    if (bad) throw usage(`git config unwind.origin '${configured}' ${bad}`, "set it with: git config unwind.origin ci-runner-7");
    return configured;
  }
  const file = storePath(ctx.store, "origin");
  if (existsSync(file)) {
    const kept = readFileSync(file, "utf8").trim();
    if (checkOrigin(kept) === null) return kept;
  }
  if (!opts.create) return null;
  const made = `${hostSlug(hostname())}-${randomBytes(4).toString("hex")}`;
  mkdirPrivate(ctx.store);
  writeFileAtomic(file, made + "\n");
  return made;
}

/** The ref of one session of one origin: the journal file's name, so it is a valid ref whatever the session's name. */
export function sessionRef(ctx: Context, origin: string, session: string): string {
  return `${SHARED_PREFIX}${origin}/sessions/${basename(sessionFile(ctx.store, session), ".jsonl")}`;
}

/** The ref of one run capsule of one origin: its id (a file name and a ref component already). */
export function runRef(origin: string, id: string): string {
  return `${SHARED_PREFIX}${origin}/runs/${id}`;
}

/** `run.json` of a shared run: the capsule as sealed where it ran, left-out paths made unknown and content named by blob id. */
export interface SharedRunDoc {
  v: 1;
  origin: string;
  run: Capsule;
  /** The capsule's own seal where it ran (the SHA-256 of its file there): for reference, since the entries here may differ by redaction. */
  seal: string;
  excluded: { path: string; why: LeftOutWhy }[];
}

export interface SessionObjects {
  commit: string;
  tree: string;
  /** Bytes of the blobs the record holds (session.json, records.jsonl, content): what the push could send at most. */
  bytes: number;
  /** Content blobs, and how many bytes they hold. */
  blobs: number;
  blobBytes: number;
}

/**
 * The commit of one shared session, written to the object database unless
 * `write` is false (a dry run: ids only). The parent's tree is compared by
 * the caller: the same tree means nothing new.
 */
export function sessionObjects(
  ctx: Context,
  doc: SharedSessionDoc,
  records: Buffer,
  content: readonly { oid: string; size: number }[],
  parent: string | null,
  opts: { write: boolean; at: Date },
): SessionObjects {
  return recordObjects(ctx, { file: "session.json", label: { session: doc.session }, doc, records }, content, parent, opts);
}

/** The commit of one shared run capsule: `run.json` and its content (no journal records: a run's record is its capsule). */
export function runObjects(ctx: Context, doc: SharedRunDoc, content: readonly { oid: string; size: number }[], parent: string | null, opts: { write: boolean; at: Date }): SessionObjects {
  return recordObjects(ctx, { file: "run.json", label: { run: doc.run.id }, doc, records: null }, content, parent, opts);
}

function recordObjects(
  ctx: Context,
  what: { file: "session.json" | "run.json"; label: Record<string, string>; doc: unknown; records: Buffer | null },
  content: readonly { oid: string; size: number }[],
  parent: string | null,
  opts: { write: boolean; at: Date },
): SessionObjects {
  const fmt = ctx.objectFormat;
  const objects = join(ctx.commonDir, "objects");
  const put = (type: "blob" | "tree" | "commit", body: Buffer) => (opts.write ? writeLooseObject(objects, type, body, fmt) : objectId(type, body, fmt));
  const docBytes = Buffer.from(JSON.stringify(what.doc) + "\n");
  const entries: { mode: string; name: string; oid: string }[] = [];
  let blobBytes = 0;
  const seen = new Set<string>();
  const contentEntries: { mode: string; name: string; oid: string }[] = [];
  // Content blobs are written by the caller as it reads them (`writeBlob`): a record's bytes are never all in memory.
  for (const c of content) {
    if (seen.has(c.oid)) continue;
    seen.add(c.oid);
    blobBytes += c.size;
    contentEntries.push({ mode: "100644", name: c.oid, oid: c.oid });
  }
  if (contentEntries.length > 0) entries.push({ mode: "40000", name: "content", oid: put("tree", treeBody(contentEntries)) });
  if (what.records) entries.push({ mode: "100644", name: "records.jsonl", oid: put("blob", what.records) });
  entries.push({ mode: "100644", name: what.file, oid: put("blob", docBytes) });
  const tree = put("tree", treeBody(entries));
  const message = JSON.stringify({ v: 1, ...what.label, seal: sha256(docBytes) }) + "\n";
  const stamp = `${WHO} ${Math.floor(opts.at.getTime() / 1000)} +0000`;
  const body = Buffer.from(`tree ${tree}\n${parent ? `parent ${parent}\n` : ""}author ${stamp}\ncommitter ${stamp}\n\n${message}`);
  const commit = put("commit", body);
  return { commit, tree, bytes: docBytes.length + (what.records?.length ?? 0) + blobBytes, blobs: contentEntries.length, blobBytes };
}

/** One content blob into the object database (or only its id, for a dry run). */
export function writeBlob(ctx: Context, bytes: Buffer, write: boolean): string {
  return write ? writeLooseObject(join(ctx.commonDir, "objects"), "blob", bytes, ctx.objectFormat) : objectId("blob", bytes, ctx.objectFormat);
}

/** A tree object's body: entries sorted as git sorts them (a tree's name compares as if it ended in '/'). */
function treeBody(entries: readonly { mode: string; name: string; oid: string }[]): Buffer {
  const key = (e: { mode: string; name: string }) => Buffer.from(e.mode === "40000" ? e.name + "/" : e.name);
  const sorted = [...entries].sort((a, b) => Buffer.compare(key(a), key(b)));
  return Buffer.concat(sorted.flatMap((e) => [Buffer.from(`${e.mode} ${e.name}\0`), Buffer.from(e.oid, "hex")]));
}

/** Every ref under `prefix`, with the object it names. */
export async function sharedRefs(ctx: Context, prefix = SHARED_PREFIX): Promise<Map<string, string>> {
  const out = new Map<string, string>();
  if (ctx.mode === "private" && !existsSync(join(ctx.gitDir, "HEAD"))) return out;
  const r = await ctx.git(["for-each-ref", "--format=%(objectname) %(refname)", prefix]);
  for (const line of r.stdout.toString("utf8").split("\n")) {
    const sp = line.indexOf(" ");
    if (sp > 0) out.set(line.slice(sp + 1), line.slice(0, sp));
  }
  return out;
}

/** One fetched session as read from git: its document when the seal holds, else why not. */
export interface FetchedSession {
  ref: string;
  origin: string;
  commit: string;
  /** The session's name: from session.json, or, when that fails its seal, as the commit message gives it (so a refusal can name it). */
  session: string | null;
  /** Null when the record could not be read or its seal fails (`problem` says which). */
  doc: SharedSessionDoc | null;
  problem: string | null;
}

/** One fetched run capsule as read from git: its document when the seal holds, else why not. */
export interface FetchedRun {
  ref: string;
  origin: string;
  commit: string;
  /** The run's id: from run.json, or, when that fails its seal, as the commit message gives it. */
  run: string | null;
  doc: SharedRunDoc | null;
  problem: string | null;
}

const REF_SHAPE = /^refs\/unwind\/shared\/([^/]+)\/(sessions|runs)\/([^/]+)$/;

interface Read {
  kind: "sessions" | "runs";
  ref: string;
  origin: string;
  commit: string;
  name: string | null;
  doc: unknown;
  problem: string | null;
}

/**
 * Every record fetched from other origins (this store's own are its own
 * records, never read as fetched), each checked against its seal before
 * its document is believed: one that fails comes back with `doc: null` and
 * the problem, so a listing can leave it out and `verify` and `undo` can
 * refuse it. A ref of another shape is returned as a session problem, for
 * `verify` to name.
 */
async function readFetched(ctx: Context): Promise<Read[]> {
  const refs = await sharedRefs(ctx);
  if (refs.size === 0) return [];
  const own = await originOf(ctx, { create: false });
  const wanted: { kind: "sessions" | "runs"; ref: string; origin: string; commit: string }[] = [];
  const odd: Read[] = [];
  for (const [ref, commit] of refs) {
    const m = REF_SHAPE.exec(ref);
    if (!m) {
      odd.push({
        kind: "sessions",
        ref,
        origin: ref.slice(SHARED_PREFIX.length).split("/")[0] ?? "",
        commit,
        name: null,
        doc: null,
        problem: "not a ref unwind writes (refs/unwind/shared/<origin>/sessions|runs/<name>)",
      });
      continue;
    }
    if (m[1] === own) continue;
    wanted.push({ kind: m[2] as "sessions" | "runs", ref, origin: m[1]!, commit });
  }
  if (wanted.length === 0) return odd;
  const input = wanted.flatMap((w) => [w.commit, `${w.commit}:${w.kind === "runs" ? "run.json" : "session.json"}`]).join("\n") + "\n";
  const got = parseBatch((await ctx.git(["cat-file", "--batch", "--buffer"], { input: Buffer.from(input) })).stdout, wanted.length * 2);
  const out = wanted.map((w, k): Read => {
    const commit = got[2 * k];
    const doc = got[2 * k + 1];
    const file = w.kind === "runs" ? "run.json" : "session.json";
    let name: string | null = null;
    const fail = (problem: string): Read => ({ ...w, name, doc: null, problem });
    if (commit?.type !== "commit") return fail(`commit ${w.commit.slice(0, 12)} is missing`);
    const text = commit.body.toString("utf8");
    const message = text.slice(text.indexOf("\n\n") + 2).trim();
    let seal: unknown;
    try {
      const m = JSON.parse(message) as { seal?: unknown; session?: unknown; run?: unknown };
      seal = m.seal;
      const n = w.kind === "runs" ? m.run : m.session;
      if (typeof n === "string") name = n;
    } catch {
      return fail("its commit message carries no seal");
    }
    if (doc?.type !== "blob") return fail(`${file} is missing`);
    if (typeof seal !== "string") return fail("its commit message carries no seal");
    if (sha256(doc.body) !== seal) return fail(`${file} does not match its seal (altered)`);
    let parsed: { v?: unknown; origin?: unknown; session?: unknown; entries?: unknown; run?: { id?: unknown; entries?: unknown } };
    try {
      parsed = JSON.parse(doc.body.toString("utf8")) as typeof parsed;
    } catch {
      return fail(`${file} does not parse`);
    }
    const shaped = w.kind === "runs" ? typeof parsed.run?.id === "string" && Array.isArray(parsed.run.entries) : typeof parsed.session === "string" && Array.isArray(parsed.entries);
    if (parsed.v !== 1 || !shaped) return fail(`${file} is not a shared ${w.kind === "runs" ? "run" : "session"} of format 1`);
    if (parsed.origin !== w.origin) return fail(`${file} names origin ${String(parsed.origin)}, not ${w.origin}`);
    return { ...w, name: w.kind === "runs" ? (parsed.run!.id as string) : (parsed.session as string), doc: parsed, problem: null };
  });
  return [...out, ...odd];
}

/** The sessions fetched from other origins (and refs of no known shape, as problems). */
export async function fetchedSessions(ctx: Context): Promise<FetchedSession[]> {
  return (await readFetched(ctx))
    .filter((r) => r.kind === "sessions")
    .map((r) => ({ ref: r.ref, origin: r.origin, commit: r.commit, session: r.name, doc: r.doc as SharedSessionDoc | null, problem: r.problem }));
}

/** The run capsules fetched from other origins. */
export async function fetchedRuns(ctx: Context): Promise<FetchedRun[]> {
  return (await readFetched(ctx)).filter((r) => r.kind === "runs").map((r) => ({ ref: r.ref, origin: r.origin, commit: r.commit, run: r.name, doc: r.doc as SharedRunDoc | null, problem: r.problem }));
}

/** A fetched run's content, each blob against its oid and recorded SHA-256; what is wrong (empty when nothing). */
export async function checkFetchedRun(ctx: Context, r: FetchedRun): Promise<string[]> {
  if (!r.doc) return [r.problem ?? "cannot be read"];
  return checkContent(ctx, r.commit, r.doc.run.entries);
}

/**
 * Everything about one fetched session beyond its seal: `records.jsonl`
 * against the hash `session.json` holds and each line against its own
 * checksum, and every content blob against its oid and the SHA-256 its
 * states record. Returns what is wrong (empty when nothing).
 */
export async function checkFetched(ctx: Context, s: FetchedSession): Promise<string[]> {
  if (!s.doc) return [s.problem ?? "cannot be read"];
  const problems: string[] = [];
  const got = parseBatch((await ctx.git(["cat-file", "--batch", "--buffer"], { input: Buffer.from(`${s.commit}:records.jsonl\n`) })).stdout, 1);
  const records = got[0];
  if (records?.type !== "blob") problems.push("records.jsonl is missing");
  else if (sha256(records.body) !== s.doc.records) problems.push("records.jsonl does not match the hash session.json holds (altered)");
  else {
    const lines = records.body.toString("utf8").split("\n");
    lines.forEach((line, i) => {
      if (line === "" && i === lines.length - 1) return;
      const r = decodeLine(line);
      if (typeof r === "string") problems.push(`records.jsonl:${i + 1} is damaged: ${r}`);
    });
  }
  return [...new Set([...problems, ...(await checkContent(ctx, s.commit, s.doc.entries))])];
}

/** Each content blob a record's entries name, from its commit's `content/`, against its oid and the SHA-256 its states record. */
async function checkContent(ctx: Context, commit: string, entries: readonly { pre: State | null; post: State | null }[]): Promise<string[]> {
  const problems: string[] = [];
  const states: State[] = [];
  for (const e of entries) for (const st of [e.pre, e.post]) if (st && (st.kind === "file" || st.kind === "symlink") && st.oid) states.push(st);
  const oids = [...new Set(states.map((st) => st.oid!))];
  if (oids.length === 0) return problems;
  const input = oids.map((o) => `${commit}:content/${o}`).join("\n") + "\n";
  const got = parseBatch((await ctx.git(["cat-file", "--batch", "--buffer"], { input: Buffer.from(input) })).stdout, oids.length);
  const bytesOf = new Map<string, Buffer | null>();
  oids.forEach((o, k) => {
    const b = got[k];
    bytesOf.set(o, b?.type === "blob" ? b.body : null);
  });
  for (const st of states) {
    const b = bytesOf.get(st.oid!);
    if (b === null || b === undefined) problems.push(`content ${st.oid!.slice(0, 12)} is missing`);
    else if (objectId("blob", b, ctx.objectFormat) !== st.oid) problems.push(`content ${st.oid!.slice(0, 12)} fails its blob id (altered)`);
    else if (st.sha256 && sha256(b) !== st.sha256) problems.push(`content ${st.oid!.slice(0, 12)} fails its SHA-256 (altered)`);
  }
  return [...new Set(problems)];
}
