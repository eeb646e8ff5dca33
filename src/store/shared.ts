import { randomBytes } from "node:crypto";
import { existsSync, mkdirSync, readFileSync } from "node:fs";
import { hostname } from "node:os";
import { basename, join } from "node:path";
import { usage } from "../domain/errors.js";
import { sha256 } from "../domain/hash.js";
import { checkOrigin, hostSlug, type SharedSessionDoc } from "../domain/share.js";
import type { State } from "../domain/types.js";
import { objectId, writeLooseObject } from "../git/objects.js";
import { parseBatch } from "../git/git.js";
import type { Context } from "../repo/context.js";
import { writeFileAtomic } from "../sys/atomic.js";
import { decodeLine, sessionFile } from "./journal.js";

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
  const file = join(ctx.store, "origin");
  if (existsSync(file)) {
    const kept = readFileSync(file, "utf8").trim();
    if (checkOrigin(kept) === null) return kept;
  }
  if (!opts.create) return null;
  const made = `${hostSlug(hostname())}-${randomBytes(4).toString("hex")}`;
  mkdirSync(ctx.store, { recursive: true });
  writeFileAtomic(file, made + "\n");
  return made;
}

/** The ref of one session of one origin: the journal file's name, so it is a valid ref whatever the session's name. */
export function sessionRef(ctx: Context, origin: string, session: string): string {
  return `${SHARED_PREFIX}${origin}/sessions/${basename(sessionFile(ctx.store, session), ".jsonl")}`;
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
  const fmt = ctx.objectFormat;
  const objects = join(ctx.commonDir, "objects");
  const put = (type: "blob" | "tree" | "commit", body: Buffer) => (opts.write ? writeLooseObject(objects, type, body, fmt) : objectId(type, body, fmt));
  const docBytes = Buffer.from(JSON.stringify(doc) + "\n");
  const entries: { mode: string; name: string; oid: string }[] = [];
  let blobBytes = 0;
  const seen = new Set<string>();
  const contentEntries: { mode: string; name: string; oid: string }[] = [];
  // Content blobs are written by the caller as it reads them (`writeBlob`): a session's bytes are never all in memory.
  for (const c of content) {
    if (seen.has(c.oid)) continue;
    seen.add(c.oid);
    blobBytes += c.size;
    contentEntries.push({ mode: "100644", name: c.oid, oid: c.oid });
  }
  if (contentEntries.length > 0) entries.push({ mode: "40000", name: "content", oid: put("tree", treeBody(contentEntries)) });
  entries.push({ mode: "100644", name: "records.jsonl", oid: put("blob", records) });
  entries.push({ mode: "100644", name: "session.json", oid: put("blob", docBytes) });
  const tree = put("tree", treeBody(entries));
  const message = JSON.stringify({ v: 1, session: doc.session, seal: sha256(docBytes) }) + "\n";
  const body = Buffer.from(
    `tree ${tree}\n${parent ? `parent ${parent}\n` : ""}author ${WHO} ${Math.floor(opts.at.getTime() / 1000)} +0000\ncommitter ${WHO} ${Math.floor(opts.at.getTime() / 1000)} +0000\n\n${message}`,
  );
  const commit = put("commit", body);
  return { commit, tree, bytes: docBytes.length + records.length + blobBytes, blobs: contentEntries.length, blobBytes };
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

const REF_SHAPE = /^refs\/unwind\/shared\/([^/]+)\/sessions\/([^/]+)$/;

/**
 * The sessions fetched from other origins (this store's own are its own
 * records, never read as fetched). Each is checked against its seal before
 * its document is believed: a record that fails is returned with `doc:
 * null` and the problem, so a listing can leave it out and `verify` and
 * `undo` can refuse it.
 */
export async function fetchedSessions(ctx: Context): Promise<FetchedSession[]> {
  const refs = await sharedRefs(ctx);
  if (refs.size === 0) return [];
  const own = await originOf(ctx, { create: false });
  const wanted: { ref: string; origin: string; commit: string }[] = [];
  const odd: FetchedSession[] = [];
  for (const [ref, commit] of refs) {
    const m = REF_SHAPE.exec(ref);
    if (!m) {
      odd.push({
        ref,
        origin: ref.slice(SHARED_PREFIX.length).split("/")[0] ?? "",
        commit,
        session: null,
        doc: null,
        problem: "not a ref unwind writes (refs/unwind/shared/<origin>/sessions/<name>)",
      });
      continue;
    }
    if (m[1] === own) continue;
    wanted.push({ ref, origin: m[1]!, commit });
  }
  if (wanted.length === 0) return odd;
  const input = wanted.flatMap((w) => [w.commit, `${w.commit}:session.json`]).join("\n") + "\n";
  const got = parseBatch((await ctx.git(["cat-file", "--batch"], { input: Buffer.from(input) })).stdout, wanted.length * 2);
  const out = wanted.map((w, k): FetchedSession => {
    const commit = got[2 * k];
    const doc = got[2 * k + 1];
    let named: string | null = null;
    const fail = (problem: string): FetchedSession => ({ ...w, session: named, doc: null, problem });
    if (commit?.type !== "commit") return fail(`commit ${w.commit.slice(0, 12)} is missing`);
    const text = commit.body.toString("utf8");
    const message = text.slice(text.indexOf("\n\n") + 2).trim();
    let seal: unknown;
    try {
      const m = JSON.parse(message) as { seal?: unknown; session?: unknown };
      seal = m.seal;
      if (typeof m.session === "string") named = m.session;
    } catch {
      return fail("its commit message carries no seal");
    }
    if (doc?.type !== "blob") return fail("session.json is missing");
    if (typeof seal !== "string") return fail("its commit message carries no seal");
    if (sha256(doc.body) !== seal) return fail("session.json does not match its seal (altered)");
    let parsed: SharedSessionDoc;
    try {
      parsed = JSON.parse(doc.body.toString("utf8")) as SharedSessionDoc;
    } catch {
      return fail("session.json does not parse");
    }
    if (parsed.v !== 1 || typeof parsed.session !== "string" || !Array.isArray(parsed.entries)) return fail("session.json is not a shared session of format 1");
    if (parsed.origin !== w.origin) return fail(`session.json names origin ${parsed.origin}, not ${w.origin}`);
    return { ...w, session: parsed.session, doc: parsed, problem: null };
  });
  return [...out, ...odd];
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
  const states: State[] = [];
  for (const e of s.doc.entries) for (const st of [e.pre, e.post]) if (st && (st.kind === "file" || st.kind === "symlink") && st.oid) states.push(st);
  const oids = [...new Set(states.map((st) => st.oid!))];
  const input = [`${s.commit}:records.jsonl`, ...oids.map((o) => `${s.commit}:content/${o}`)].join("\n") + "\n";
  const got = parseBatch((await ctx.git(["cat-file", "--batch"], { input: Buffer.from(input) })).stdout, oids.length + 1);
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
  const bytesOf = new Map<string, Buffer | null>();
  oids.forEach((o, k) => {
    const b = got[k + 1];
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
