import { createHash } from "node:crypto";
import { existsSync, mkdirSync } from "node:fs";
import { join } from "node:path";
import { deflateSync } from "node:zlib";
import { writeFileAtomic } from "../store/atomic.js";

/**
 * Writes one loose git object (zlib of "<type> <size>\0<body>", named by its
 * hash) — the format git itself writes. Used for snapshot commits, where a
 * `git commit-tree` process would cost more than the object it makes.
 * Content-addressed and written by rename: an object that exists is never
 * rewritten.
 */
export function writeLooseObject(objectsDir: string, type: "commit" | "tree" | "blob", body: Buffer, format: "sha1" | "sha256"): string {
  const data = Buffer.concat([Buffer.from(`${type} ${body.length}\0`), body]);
  const oid = createHash(format).update(data).digest("hex");
  const dir = join(objectsDir, oid.slice(0, 2));
  const file = join(dir, oid.slice(2));
  if (existsSync(file)) return oid;
  mkdirSync(dir, { recursive: true });
  writeFileAtomic(file, deflateSync(data), { mode: 0o444 });
  return oid;
}

/** The body of a parentless commit, as `git commit-tree` would write it for the same inputs. */
export function commitBody(tree: string, who: string, epochSeconds: number, message: string): Buffer {
  const sig = `${who} ${epochSeconds} +0000`;
  return Buffer.from(`tree ${tree}\nauthor ${sig}\ncommitter ${sig}\n\n${message}`);
}
