import { UnwindError, usage } from "./errors.js";

/** The fewest characters of an id a person may give instead of all of it. */
export const MIN_ID = 6;

/**
 * The parts of an id a person may give the start of: the id itself, the
 * name after a harness's `claude:`, and the random tail after the last '-'
 * (`r-<time>-<tail>`, a UUID's last group).
 */
function starts(id: string): string[] {
  const out = [id];
  const colon = id.indexOf(":");
  if (colon >= 0) out.push(id.slice(colon + 1));
  const dash = id.lastIndexOf("-");
  if (dash >= 0) out.push(id.slice(dash + 1));
  return out;
}

/** Orders two ids by their UTF-16 code units read from the end. */
function tailOrder(a: string, b: string): number {
  for (let i = a.length - 1, j = b.length - 1; i >= 0 && j >= 0; i--, j--) {
    const d = a.charCodeAt(i) - b.charCodeAt(j);
    if (d !== 0) return d;
  }
  return a.length - b.length;
}

/** How many UTF-16 code units two ids end with alike. */
function commonTail(a: string, b: string): number {
  let n = 0;
  while (n < a.length && n < b.length && a.charCodeAt(a.length - 1 - n) === b.charCodeAt(b.length - 1 - n)) n++;
  return n;
}

/** Names this long or shorter are shown whole (see `shortIds`). */
const SHORT_NAME = 12;

/** An id without its harness: `agent-1` of `record:agent-1`. */
const nameOf = (id: string) => id.slice(id.indexOf(":") + 1);

/**
 * Whether `wanted` names `id` short of being it: 6+ characters that end the
 * id or start one of its parts (see `starts`). The one rule every command
 * uses for sessions, calls, snapshots, receipts and runs, and the rule
 * `shortIds` keeps its answers unique under.
 */
export function idMatches(id: string, wanted: string): boolean {
  if (wanted.length < MIN_ID) return false;
  return id.endsWith(wanted) || starts(id).some((p) => p.startsWith(wanted));
}

/**
 * The shortest tail of each id (at least 6 characters) that names it
 * alone among `ids` under `idMatches`: no other id ends with it or has a
 * part that starts with it. An id with no such tail (another id ends with
 * all of it) is shown whole, which an exact match resolves; a name of 12
 * characters or fewer (after a harness's `claude:`) is shown as it is. Pure; sorting
 * makes it n log n, so a journal of 50,000 calls costs milliseconds.
 */
export function shortIds(ids: Iterable<string>): Map<string, string> {
  const t = idTable(ids);
  const out = new Map<string, string>();
  t.byTail.forEach((id, k) => {
    out.set(id, shortAt(t, id, k));
  });
  return out;
}

/**
 * Ids sorted the two ways `shortIds` searches them, kept as plain data (the
 * record index keeps one between listings, so the short ids of the few
 * calls a listing shows cost a search, not a sort of every id): `byTail`
 * by their text read from the end, where an id's neighbours share the
 * longest tails with it; `parts` every part a person may give the start
 * of, sorted, with `owners` the id each belongs to (null: the part is the
 * id itself); `names` the names of 12 characters or fewer, sorted, each as
 * often as ids have it.
 */
export interface IdTable {
  byTail: string[];
  parts: string[];
  owners: (string | null)[];
  names: string[];
}

export function idTable(ids: Iterable<string>): IdTable {
  const all = [...new Set(ids)];
  const entries: [string, string | null][] = [];
  for (const id of all) {
    starts(id).forEach((p, k) => {
      entries.push([p, k === 0 ? null : id]);
    });
  }
  entries.sort((a, b) => (a[0] < b[0] ? -1 : a[0] > b[0] ? 1 : 0));
  return {
    byTail: all.sort(tailOrder),
    parts: entries.map((e) => e[0]),
    owners: entries.map((e) => e[1]),
    names: all
      .map(nameOf)
      .filter((n) => n.length <= SHORT_NAME)
      .sort(),
  };
}

/** `t` with `ids` added (a copy): each new one put in its place, or the table made again where they are many. */
export function withIds(t: IdTable, ids: Iterable<string>): IdTable {
  const fresh = [...new Set(ids)].filter((id) => !holdsId(t, id));
  if (fresh.length === 0) return t;
  if (fresh.length * 8 > t.byTail.length) return idTable([...t.byTail, ...fresh]);
  const out: IdTable = { byTail: [...t.byTail], parts: [...t.parts], owners: [...t.owners], names: [...t.names] };
  for (const id of fresh) {
    out.byTail.splice(lowerBound(out.byTail, id, tailOrder), 0, id);
    starts(id).forEach((p, k) => {
      const at = lowerBound(out.parts, p, codeOrder);
      out.parts.splice(at, 0, p);
      out.owners.splice(at, 0, k === 0 ? null : id);
    });
    const name = nameOf(id);
    if (name.length <= SHORT_NAME) out.names.splice(lowerBound(out.names, name, codeOrder), 0, name);
  }
  return out;
}

/** Whether `id` is one of the ids of `t`. */
export function holdsId(t: IdTable, id: string): boolean {
  return t.byTail[lowerBound(t.byTail, id, tailOrder)] === id;
}

/** The short id of `id` among the ids of `t` (as `shortIds` gives it, `id` one of them). */
export function shortOf(t: IdTable, id: string): string {
  return shortAt(t, id, lowerBound(t.byTail, id, tailOrder));
}

/** `id`'s short id, `k` its place (or where it would go) in `t.byTail`. */
function shortAt(t: IdTable, id: string, k: number): string {
  // A short name a person or a test chose (`record:agent-1`, `toolu_01`) reads better whole than by its tail: shown as the
  // name after the harness where no other id has that name (every resolver takes an exact name first).
  const name = nameOf(id);
  if (name.length <= SHORT_NAME && t.names[lowerBound(t.names, name, codeOrder) + 1] !== name) return name;
  const after = t.byTail[k] === id ? k + 1 : k;
  const prev = k > 0 ? commonTail(id, t.byTail[k - 1]!) : 0;
  const next = after < t.byTail.length ? commonTail(id, t.byTail[after]!) : 0;
  let n = Math.max(MIN_ID, Math.max(prev, next) + 1);
  while (n < id.length && startsOther(t, id.slice(-n), id)) n++;
  return n >= id.length ? id : id.slice(-n);
}

/** Whether a part of an id other than `owner` starts with `s`: a tail that starts another id's part would be ambiguous. */
function startsOther(t: IdTable, s: string, owner: string): boolean {
  for (let k = lowerBound(t.parts, s, codeOrder); k < t.parts.length && t.parts[k]!.startsWith(s); k++) if ((t.owners[k] ?? t.parts[k]) !== owner) return true;
  return false;
}

/** The first place in `sorted` (ordered by `order`) whose entry is not before `x`. */
function lowerBound(sorted: readonly string[], x: string, order: (a: string, b: string) => number): number {
  let lo = 0;
  let hi = sorted.length;
  while (lo < hi) {
    const mid = (lo + hi) >> 1;
    if (order(sorted[mid]!, x) < 0) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

const codeOrder = (a: string, b: string) => (a < b ? -1 : a > b ? 1 : 0);

/** A single id as people give it (SPEC section 4): the id, a unique prefix or suffix of 6+ characters, or the newest. */
export type IdRef = string | { last: true };

/**
 * The one id in `ids` (newest first) that `wanted` names: itself, the only
 * id it names under `idMatches` (6+ characters that end it or start one of
 * its parts), or the newest for
 * `{ last: true }`. Unknown and ambiguous ids are exit 3, naming candidates.
 */
export function pickId(ids: readonly string[], wanted: IdRef, what: string, listWith: string): string {
  if (typeof wanted !== "string") {
    if (ids.length === 0) throw new UnwindError("E_SCOPE_UNKNOWN", `no ${what} yet`, { hint: `list them with: ${listWith}` });
    return ids[0]!;
  }
  if (ids.includes(wanted)) return wanted;
  const hits = ids.filter((id) => idMatches(id, wanted));
  if (hits.length === 1) return hits[0]!;
  if (hits.length > 1) {
    throw new UnwindError("E_SCOPE_AMBIGUOUS", `${hits.length} ${what}s match '${wanted}': ${hits.slice(0, 5).join(", ")}${hits.length > 5 ? ", …" : ""}`, {
      hint: "use more characters of the id",
    });
  }
  const near = ids.slice(0, 3);
  const short = wanted.length < 6 ? ` (a prefix or suffix needs 6+ characters)` : "";
  throw new UnwindError("E_SCOPE_UNKNOWN", `no ${what} ${wanted}${short}`, {
    hint: near.length ? `the newest: ${near.join(", ")}; list them with: ${listWith}` : `there are none yet; list them with: ${listWith}`,
  });
}

/**
 * An id given as an argument, or `last`: exactly one of them. What `--last`
 * means on the command line and `last: true` in an MCP tool call.
 */
export function idOrLast(id: string | undefined, last: boolean | undefined, what: string): IdRef {
  if (id !== undefined && last) throw usage(`give a ${what} id or --last, not both`);
  if (id !== undefined) return id;
  if (last) return { last: true };
  throw usage(`no ${what} given`, `name one (a unique prefix or suffix of 6+ characters), or pass --last`);
}
