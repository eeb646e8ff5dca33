import { createHash } from "node:crypto";
import type { Sha256 } from "./types.js";

export function sha256(data: Buffer | string): Sha256 {
  return createHash("sha256").update(data).digest("hex") as Sha256;
}
