import { join } from "node:path";

/**
 * Every entry at the top of a store, by name (docs/format.md, "The store"):
 * the one list of what a store holds, so code outside store/ names a record
 * kind, never a folder it guessed.
 */
export type StoreEntry =
  | "cas"
  | "clock"
  | "config.json"
  | "errors.ack"
  | "errors.jsonl"
  | "fired"
  | "git"
  | "index"
  | "journal"
  | "lock"
  | "mcp-calls"
  | "origin"
  | "pending"
  | "receipts"
  | "revert-checks"
  | "baselines"
  | "cache"
  | "runs"
  | "tasks"
  | "VERSION"
  | "watch";

/** A path inside a store: an entry, and what lies under it. */
export const storePath = (store: string, entry: StoreEntry, ...rest: string[]): string => join(store, entry, ...rest);
