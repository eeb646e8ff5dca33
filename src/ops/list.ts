import { sinceTime } from "../scope/resolve.js";

/** How a long list is cut (SPEC section 4): the newest `limit`, or those since a time. */
export interface ListOptions {
  /** At most this many, newest first. */
  limit?: number | undefined;
  /** Only those at or after this: an ISO time or a duration back from now (`2h`, `3d`). */
  since?: string | undefined;
}

/** `all` newest first, cut as asked; `total` is how many there were before the limit (after `since`). */
export function listed<T>(all: readonly T[], opts: ListOptions, at: (x: T) => string): { items: T[]; total: number } {
  const since = opts.since !== undefined ? sinceTime(opts.since) : null;
  const kept = since ? all.filter((x) => at(x) >= since) : [...all];
  return { items: opts.limit !== undefined ? kept.slice(0, opts.limit) : kept, total: kept.length };
}
