import { Cas } from "../store/cas.js";
import type { Context } from "../repo/context.js";
import { Receipts, type Receipt } from "../store/receipts.js";
import { ContentReader } from "../store/content.js";
import { matches } from "../domain/states.js";
import { acts } from "../domain/actions.js";
import { finish, performAll } from "./apply.js";
import { clearIntent, clearTornIntents, pendingIntents } from "./intent.js";
import { ancestorsOf, removeTemp } from "./perform.js";
import { BoundDirs } from "../sys/bound-dir.js";

/**
 * Finishes applies that a crash interrupted, path by path. The caller holds
 * the store lock. A path already at its `after` state is done; one still at
 * its `before` state (and still a single-link file) is written now; anything
 * else was changed by someone after the crash and is left alone as a
 * conflict (a directory the intent's own writes made, where it deleted a
 * file, counts as done). Nothing is lost either way: the intent's
 * before-content is in the CAS, and the receipt written here can be redone.
 */
export async function recoverPending(ctx: Context): Promise<Receipt[]> {
  clearTornIntents(ctx.store);
  const intents = pendingIntents(ctx.store);
  if (intents.length === 0) return [];
  const reader = new ContentReader(ctx, Cas.in(ctx.store));
  const receipts = new Receipts(ctx.store);
  const out: Receipt[] = [];
  for (const intent of intents) {
    // A crash between sealing the receipt and clearing the intent: the work is done.
    if (receipts.head()?.id === intent.receipt) {
      clearIntent(ctx.store, intent.receipt);
      continue;
    }
    const tag = intent.receipt.slice(-8);
    const dirs = new BoundDirs(ctx.root);
    try {
      intent.items.forEach((item, i) => {
        if (!acts(item.action)) return;
        try {
          removeTemp(dirs, item.path, `${tag}-${i}`);
        } catch {
          /* no temp file left behind */
        }
        dirs.trim();
      });
    } finally {
      dirs.close();
    }
    // A file the intent deleted may have given way to a directory its own writes made (a file replaced by a
    // directory): that path is done, not changed by someone else.
    const made = ancestorsOf(intent.items.filter((x) => acts(x.action) && x.after !== null).map((x) => x.path));
    await performAll(
      ctx,
      intent,
      async (item) => (item.after ? reader.read(item.after) : null),
      (item, now) => {
        if (matches(now, item.after)) return "done";
        if (item.after === null && now.kind === "dir" && made.has(item.path)) return "done";
        if (now.kind === "file" && now.nlink > 1) return "changed";
        return matches(now, item.before) ? "go" : "changed";
      },
    );
    out.push(finish(ctx, intent, true));
  }
  return out;
}
