/**
 * What an agent may take back over MCP (SPEC section 13). By default only
 * its own session's work: the session itself, or one of its calls. A task,
 * a snapshot, another session, or a restore (the whole work tree, or paths,
 * made equal to a snapshot, whoever wrote them since) is refused, and so is
 * a redo of a receipt this same session did not start over MCP. When the
 * caller is unknown nothing is taken back. The person allows more with
 * `mcp.allow: "any"` in the store's config.json (`unwind init --mcp-allow
 * any`), read at each call.
 *
 * This guards against an agent that, through these tools, takes back work
 * that is not its own (a confused or misled one). It is not a sandbox: an
 * agent that can run commands can run `unwind` itself.
 */
import { UnwindError } from "../domain/errors.js";
import type { IdRef } from "../domain/ids.js";
import type { StartedBy } from "../domain/types.js";
import type { Unwind } from "../ops/open.js";
import { pickReceipt } from "../ops/undo.js";
import type { ScopeFields } from "../scope/resolve.js";
import { resolveSession } from "../scope/calls.js";
import { loadMcpAllow } from "../store/config.js";
import { readJournal } from "../store/journal.js";
import type { Caller } from "./caller.js";

/** What a receipt records of an MCP call: the client, and the calling session where known. */
export function startedBy(caller: Caller): StartedBy {
  return caller.session ? { client: "mcp", session: caller.session } : { client: "mcp" };
}

/** Refused: `message` says what and why, in the tools' own terms; the hint says what the agent and the person can do. */
function refuse(u: Unwind, tool: string, message: string, own: string): never {
  throw new UnwindError("E_NOT_ALLOWED", `${tool}: ${message}; over MCP an agent takes back only its own session's work`, {
    hint: `${own}; or the person does it (unwind ${tool} on the command line or in unwind ui), or allows it: unwind init --mcp-allow any (sets mcp.allow to "any" in ${u.store}/config.json)`,
  });
}

const unknown = (caller: Caller) => !caller.session;
const UNKNOWN = "the calling session is unknown: neither the client's environment nor a hook event of this call names it";
const HOOKS = "with unwind's hooks installed (unwind init --claude, --codex or --gemini), the client's hook event for each call names its session";

/** The scope an undo may take back: the caller's own session, or a call (or from a call on) narrowed to it. Throws E_NOT_ALLOWED otherwise. */
export function ownScope(u: Unwind, caller: Caller, scope: ScopeFields): ScopeFields {
  if (loadMcpAllow(u.store) === "any") return scope;
  const own = caller.session;
  if (!own) return refuse(u, "undo", UNKNOWN, HOOKS);
  const mine = "take back your own session's work (session omitted or your own, or one of your calls)";
  if (scope.task !== undefined) return refuse(u, "undo", `task ${scope.task} holds every session labelled with it, not only yours (${own})`, mine);
  if (scope.snapshot !== undefined) return refuse(u, "undo", `snapshot ${scope.snapshot} takes back everyone's changes since it, not only yours (${own})`, mine);
  if (scope.session !== undefined && sessionNamed(u, scope.session) !== own) {
    return refuse(u, "undo", `session ${scope.session} is not the calling session (${own})`, mine);
  }
  // A call is looked for among the caller's own calls only: another session's call of the same id is not found.
  if (scope.fromCall !== undefined) return { fromCall: scope.fromCall, session: own };
  return scope.call !== undefined ? { call: scope.call, session: own } : { session: own };
}

/** The session a name resolves to, or null when none or several do (never the caller's then). */
function sessionNamed(u: Unwind, name: string): string | null {
  try {
    return resolveSession(readJournal(u.store).records, name);
  } catch (e) {
    if (e instanceof UnwindError && e.code === "E_SCOPE_AMBIGUOUS") throw e;
    return null;
  }
}

/** A restore writes the whole work tree (or paths) back to a snapshot, whoever wrote them since: only when allowed. */
export function mayRestore(u: Unwind, caller: Caller): void {
  if (loadMcpAllow(u.store) === "any") return;
  refuse(
    u,
    "restore",
    `a restore makes the work tree equal to a snapshot, taking back every session's later work, not only yours${unknown(caller) ? "" : ` (${caller.session})`}`,
    "take back your own work with undo_preview and undo",
  );
}

/** The receipt a redo may take back: one this same session started over MCP. Returns its id. */
export function ownReceipt(u: Unwind, caller: Caller, id: IdRef): IdRef {
  if (loadMcpAllow(u.store) === "any") return id;
  const own = caller.session;
  if (!own) return refuse(u, "redo", UNKNOWN, HOOKS);
  const r = pickReceipt(u.context, id);
  if (r.by?.client === "mcp" && r.by.session === own) return r.id;
  const who = r.by ? `${r.by.client}${r.by.session ? ` ${r.by.session}` : ""}` : "an earlier version of unwind, which did not record who";
  return refuse(u, "redo", `receipt ${r.id} was started by ${who}, not by the calling session (${own}) over MCP`, "redo only what your own session undid over MCP");
}
