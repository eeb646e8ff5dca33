import { createHash } from "node:crypto";
import type { Sha256 } from "./types.js";

export function sha256(data: Buffer | string): Sha256 {
  return createHash("sha256").update(data).digest("hex") as Sha256;
}

/** JSON with object keys sorted at every level: the same value always gives the same text (and the same digest). */
export function canonicalJson(value: unknown): string {
  if (Buffer.isBuffer(value)) return JSON.stringify(value.toString("base64"));
  if (Array.isArray(value)) return `[${value.map((v) => (v === undefined ? "null" : canonicalJson(v))).join(",")}]`;
  if (value && typeof value === "object") {
    const keys = Object.keys(value as object)
      .filter((k) => (value as Record<string, unknown>)[k] !== undefined)
      .sort();
    return `{${keys.map((k) => `${JSON.stringify(k)}:${canonicalJson((value as Record<string, unknown>)[k])}`).join(",")}}`;
  }
  return JSON.stringify(value) ?? "null";
}
