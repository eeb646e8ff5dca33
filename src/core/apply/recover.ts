import { unlinkSync } from "node:fs";
import type { Context } from "../../store/context.js";
import { Cas } from "../../store/cas.js";
import { Receipts, type Receipt } from "../../store/receipts.js";
import { join } from "node:path";
import { ContentReader } from "../content.js";
import { matches } from "../plan/equal.js";
import { observe } from "../observe.js";
import { finish } from "./apply.js";
import { clearIntent, pendingIntents } from "./intent.js";
import { PerformError, performOne, tmpPath } from "./perform.js";

/**
 * Finishes applies that a crash interrupted, path by path. The caller holds
 * the store lock. A path already at its `after` state is done; one still at
 * its `before` state is written now; anything else was changed by someone
 * after the crash and is left alone as a conflict. Nothing is lost either
 * way: the intent's before-content is in the CAS, and the receipt written
 * here can be redone.
 */
export async function recoverPending(ctx: Context): Promise<Receipt[]> {
  const intents = pendingIntents(ctx.store);
  if (intents.length === 0) return [];
  const reader = new ContentReader(ctx, new Cas(join(ctx.store, "cas")));
  const receipts = new Receipts(ctx.store);
  const out: Receipt[] = [];
  for (const intent of intents) {
    // A crash between sealing the receipt and clearing the intent: the work is done.
    const head = receipts.head();
    if (head?.id === intent.receipt) {
      clearIntent(ctx.store, intent.receipt);
      continue;
    }
    const tag = intent.receipt.slice(-8);
    for (const item of intent.items) {
      if (item.action !== "restore" && item.action !== "delete" && item.action !== "merge") continue;
      try {
        unlinkSync(tmpPath(ctx.root, item.path, tag));
      } catch {
        /* no temp file left behind */
      }
      const now = (await observe(ctx, [item.path])).get(item.path)!;
      if (matches(now, item.after)) continue;
      if (!matches(now, item.before)) {
        item.action = "conflict";
        item.reason = "changed-since";
        item.detail = "changed after an interrupted apply";
        continue;
      }
      try {
        const data = item.after ? await reader.read(item.after) : null;
        performOne(ctx.root, item.path, item.after, data, tag);
      } catch (e) {
        if (!(e instanceof PerformError)) throw e;
        item.action = "conflict";
        item.reason = e.reason;
        item.detail = e.message;
        item.after = item.before;
      }
    }
    out.push(finish(ctx, intent, intent.items, true));
  }
  return out;
}
