import { Exit } from "../../domain/errors.js";
import type { Excluded } from "../../domain/share.js";
import type { PushOptions } from "../../ops/share.js";
import type { Globals } from "../globals.js";
import { bytes, paint, short, table } from "../render.js";
import type { Output } from "../render.js";
import { openFor } from "./common.js";

/** `unwind push [REMOTE] (--session S... | --task T | --run R | --all) [--exclude GLOB]... [--include-secrets] [--dry-run]` (SPEC section 14). */
export async function push(
  globals: Globals,
  remote: string | undefined,
  opts: { session?: string[]; task?: string; run?: string; all?: boolean; exclude?: string[]; includeSecrets?: boolean; dryRun?: boolean },
): Promise<Output> {
  const u = await openFor(globals);
  const o: PushOptions & { remote?: string } = {
    ...(remote !== undefined ? { remote } : {}),
    sessions: opts.session,
    task: opts.task,
    run: opts.run,
    all: opts.all,
    excludes: opts.exclude,
    includeSecrets: opts.includeSecrets,
    dryRun: opts.dryRun,
  };
  const r = await u.push(o);
  const all = [...r.sessions, ...r.runs];
  const leftOut = new Map<string, string>();
  for (const s of all) for (const e of s.excluded) if (!leftOut.has(e.path)) leftOut.set(e.path, whyText(e));
  // The warning SPEC section 14 asks for: on stderr, so it is seen with --json too.
  const secrets = r.secrets.map((p) => `${p} (${leftOut.get(p)})`);
  if (secrets.length > 0) {
    process.stderr.write(`unwind: warning: left out the content of secret-looking paths (not-captured on the other side): ${secrets.join(", ")}\n  pass --include-secrets to send them\n`);
  }
  for (const s of r.skipped) process.stderr.write(`unwind: skipped ${s.session}: ${s.why}\n`);
  const rows = [...r.sessions.map((s) => ({ ...s, name: s.session })), ...r.runs.map((s) => ({ ...s, name: `run ${s.run}` }))].map((s) => [
    s.name,
    s.status,
    String(s.entries),
    String(s.blobs),
    bytes(s.bytes),
    s.excluded.length ? s.excluded.map((e) => e.path).join(" ") : "-",
    short(s.commit),
  ]);
  const verb = r.dryRun ? "would push" : "pushed";
  const what = r.runs.length ? `run ${r.runs[0]!.run}` : `${r.sessions.length} session(s)`;
  const head = rows.length
    ? `${verb} ${what} to ${r.remote} under refs/unwind/shared/${r.origin ?? "<origin: named at the first push>"}/ (${bytes(r.bytes)}${r.dryRun ? "" : "; git sent only what the remote lacked"})`
    : "nothing to push";
  const human = [
    head,
    ...(rows.length ? [table([["RECORD", "STATUS", "PATHS", "BLOBS", "BYTES", "LEFT OUT", "COMMIT"], ...rows], [], { fit: [5] })] : []),
    ...(leftOut.size ? [`${r.dryRun ? "would leave" : "left"} out (not-captured on the other side):`, table([...leftOut].map(([p, why]) => [`  ${p}`, why]))] : []),
  ].join("\n");
  return { json: r, human, exit: Exit.ok };
}

/** Why a path was left out, as a person reads it. */
function whyText(e: Excluded): string {
  if (e.why === "exclude") return `--exclude ${e.rule}`;
  if (e.why === "token") return `its content holds ${e.rule}`;
  return `secret-looking name: ${e.rule}`;
}

/** `unwind fetch [REMOTE] [--origin NAME]...` (SPEC section 14). */
export async function fetch(globals: Globals, remote: string | undefined, opts: { origin?: string[] } = {}): Promise<Output> {
  const u = await openFor(globals);
  const r = await u.fetch({ ...(remote !== undefined ? { remote } : {}), origins: opts.origin });
  const changed = r.refs.filter((x) => x.status !== "unchanged");
  for (const d of r.damaged) process.stderr.write(`unwind: warning: ${d.ref}: ${d.problem} (unwind verify names it; undo refuses it)\n`);
  const human = [
    `${changed.length ? `fetched ${changed.length} shared ref(s) from ${r.remote}` : `nothing new from ${r.remote}`}; ${r.sessions} fetched session(s)${r.runs ? `, ${r.runs} run(s)` : ""} readable`,
    ...changed.map((x) => `  ${x.status === "new" ? paint("new", "green") : "updated"}  ${x.ref}  ${short(x.commit)}`),
  ].join("\n");
  return { json: r, human, exit: Exit.ok };
}
