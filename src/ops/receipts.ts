import type { StartedBy } from "../domain/types.js";
import type { Context } from "../repo/context.js";
import { Receipts, type Receipt } from "../store/receipts.js";
import { listed, type ListOptions } from "./list.js";

/** `by`: who started it (null for a receipt written before that was recorded). */
export type ReceiptSummary = Pick<Receipt, "id" | "kind" | "at" | "scope" | "counts"> & { recovered: boolean; by: StartedBy | null };

/** Applied plans, newest first. */
export async function receipts(ctx: Context, opts: ListOptions = {}): Promise<{ receipts: ReceiptSummary[]; total: number }> {
  const all = [...new Receipts(ctx.store).heads()].map(({ id, kind, at, scope, counts, recovered, by }) => ({
    id,
    kind,
    at,
    scope,
    counts,
    recovered: Boolean(recovered),
    by: by ?? null,
  }));
  const { items, total } = listed(all, opts, (r) => r.at);
  return { receipts: items, total };
}
