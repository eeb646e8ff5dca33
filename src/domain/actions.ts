import type { Action, Counts, PlanItem } from "./types.js";

/** Actions that change the work tree (the rest are reported only). */
export const acts = (a: Action): boolean => a === "restore" || a === "delete" || a === "merge";

export function countActions(items: readonly { action: Action }[]): Counts {
  const counts: Counts = { restore: 0, delete: 0, merge: 0, skip: 0, conflict: 0 };
  for (const i of items) counts[i.action]++;
  return counts;
}

/** Exit 1 when anything other than an `unchanged` or `retained` skip or a done action remains (SPEC section 9: a retained path was kept on purpose). */
export function isPartial(items: readonly Pick<PlanItem, "action" | "reason">[]): boolean {
  return items.some((i) => i.action === "conflict" || (i.action === "skip" && i.reason !== "unchanged" && i.reason !== "retained"));
}
