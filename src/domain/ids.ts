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
  const all = [...new Set(ids)];
  const out = new Map<string, string>();
  // Ids by their reversed text: an id's nearest neighbours share the longest tails with it.
  const rev = all.map((id) => [...id].reverse().join(""));
  const order = all.map((_, i) => i).sort((a, b) => (rev[a]! < rev[b]! ? -1 : rev[a]! > rev[b]! ? 1 : 0));
  const common = (a: string, b: string) => {
    let n = 0;
    while (n < a.length && n < b.length && a[n] === b[n]) n++;
    return n;
  };
  const tailLen = new Array<number>(all.length).fill(0);
  for (let k = 0; k < order.length; k++) {
    const i = order[k]!;
    const prev = k > 0 ? common(rev[i]!, rev[order[k - 1]!]!) : 0;
    const next = k + 1 < order.length ? common(rev[i]!, rev[order[k + 1]!]!) : 0;
    tailLen[i] = Math.max(prev, next) + 1;
  }
  // Every part a person may give the start of, sorted, with its owner: a tail that starts another id's part would be ambiguous.
  const parts: [string, number][] = [];
  all.forEach((id, i) => {
    for (const p of starts(id)) parts.push([p, i]);
  });
  parts.sort((a, b) => (a[0] < b[0] ? -1 : a[0] > b[0] ? 1 : 0));
  const startsOther = (s: string, owner: number) => {
    let lo = 0;
    let hi = parts.length;
    while (lo < hi) {
      const mid = (lo + hi) >> 1;
      if (parts[mid]![0] < s) lo = mid + 1;
      else hi = mid;
    }
    for (let k = lo; k < parts.length && parts[k]![0].startsWith(s); k++) if (parts[k]![1] !== owner) return true;
    return false;
  };
  // A short name a person or a test chose (`record:agent-1`, `toolu_01`) reads better whole than by its tail: shown as the
  // name after the harness where no other id has that name (every resolver takes an exact name first).
  const names = new Map<string, number>();
  for (const id of all) names.set(nameOf(id), (names.get(nameOf(id)) ?? 0) + 1);
  all.forEach((id, i) => {
    const name = nameOf(id);
    if (name.length <= SHORT_NAME && names.get(name) === 1) {
      out.set(id, name);
      return;
    }
    let n = Math.max(MIN_ID, tailLen[i]!);
    while (n < id.length && startsOther(id.slice(-n), i)) n++;
    out.set(id, n >= id.length ? id : id.slice(-n));
  });
  return out;
}

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
