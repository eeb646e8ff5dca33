import type { Context } from "../repo/context.js";
import { Receipts, type Receipt } from "../store/receipts.js";
import { listed, type ListOptions } from "./list.js";

export type ReceiptSummary = Pick<Receipt, "id" | "kind" | "at" | "scope" | "counts"> & { recovered: boolean };

/** Applied plans, newest first. */
export async function receipts(ctx: Context, opts: ListOptions = {}): Promise<{ receipts: ReceiptSummary[]; total: number }> {
  const all = [...new Receipts(ctx.store).heads()].map(({ id, kind, at, scope, counts, recovered }) => ({ id, kind, at, scope, counts, recovered: Boolean(recovered) }));
  const { items, total } = listed(all, opts, (r) => r.at);
  return { receipts: items, total };
}
