import { UnwindError, usage } from "./errors.js";

/** A single id as people give it (SPEC section 4): the id, a unique prefix or suffix of 6+ characters, or the newest. */
export type IdRef = string | { last: true };

/**
 * The one id in `ids` (newest first) that `wanted` names: itself, the only
 * id it is a prefix or a suffix of (6+ characters; or a prefix of the
 * random tail after the last '-'), or the newest for
 * `{ last: true }`. Unknown and ambiguous ids are exit 3, naming candidates.
 */
export function pickId(ids: readonly string[], wanted: IdRef, what: string, listWith: string): string {
  if (typeof wanted !== "string") {
    if (ids.length === 0) throw new UnwindError("E_SCOPE_UNKNOWN", `no ${what} yet`, { hint: `list them with: ${listWith}` });
    return ids[0]!;
  }
  if (ids.includes(wanted)) return wanted;
  const hits = wanted.length >= 6 ? ids.filter((id) => id.startsWith(wanted) || id.endsWith(wanted) || id.slice(id.lastIndexOf("-") + 1).startsWith(wanted)) : [];
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
