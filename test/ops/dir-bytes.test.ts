/**
 * `dirBytes` (src/sys/files.ts): the bytes under a directory, where a
 * "settled" directory (files only added or removed, as the CAS's shards)
 * keeps its sum in the process under its stat data. The status bar of a
 * long-lived UI asks for it after every burst of captures.
 */
import { appendFileSync, lstatSync, mkdirSync, readdirSync, rmSync, utimesSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { describe, expect, it } from "vitest";
import { status } from "../../src/ops/status.js";
import { resolveContext, ensureStore } from "../../src/repo/context.js";
import { Cas } from "../../src/store/cas.js";
import { dirBytes } from "../../src/sys/files.js";
import { makeRepo, tempDir } from "../helpers.js";

/** Every file's size under `dir`, summed by a plain walk. */
function walked(dir: string): number {
  let n = 0;
  for (const e of readdirSync(dir, { withFileTypes: true })) {
    const p = join(dir, e.name);
    n += e.isDirectory() ? walked(p) : lstatSync(p).size;
  }
  return n;
}

/** Sets a directory's modification time a minute back: old enough to be kept. */
const age = (d: string) => utimesSync(d, new Date(Date.now() - 60_000), new Date(Date.now() - 60_000));

function tree(): { root: string; shard: string; loose: string } {
  const root = tempDir("unwind-dirbytes-");
  const shard = join(root, "cas", "ab");
  const loose = join(root, "journal");
  mkdirSync(shard, { recursive: true });
  mkdirSync(loose, { recursive: true });
  for (let i = 0; i < 40; i++) writeFileSync(join(shard, `blob${i}`), "x".repeat(100 + i));
  writeFileSync(join(loose, "a.jsonl"), "one\n");
  writeFileSync(join(root, "top"), "top\n");
  age(shard);
  return { root, shard, loose };
}

describe("dirBytes", () => {
  it("sums every file, nested or not, as a plain walk does, and shows each to `each`", async () => {
    const { root, shard } = tree();
    const settled = (d: string) => d === shard;
    const seen: string[] = [];
    expect(await dirBytes(root, (p) => seen.push(p), settled)).toBe(walked(root));
    expect(seen).toHaveLength(42);
    // Kept: the same answer and the same paths shown.
    const again: string[] = [];
    expect(await dirBytes(root, (p) => again.push(p), settled)).toBe(walked(root));
    expect(again.sort()).toEqual(seen.sort());
  });

  it("does not look at a settled directory's files again while its stat data is the same; a file added is seen", async () => {
    const { root, shard } = tree();
    const settled = (d: string) => d === shard;
    const first = await dirBytes(root, undefined, settled);
    // Not what the CAS ever does: a blob grown in place, which leaves the directory as it was. Only the kept sum misses it.
    appendFileSync(join(shard, "blob0"), "y".repeat(1000));
    expect(await dirBytes(root, undefined, settled)).toBe(first);
    // The control: asked without `settled`, the same tree is walked afresh.
    expect(await dirBytes(root)).toBe(first + 1000);
    // A blob added changes the directory's stat data: summed again.
    writeFileSync(join(shard, "new"), "z".repeat(7));
    expect(await dirBytes(root, undefined, settled)).toBe(walked(root));
  });

  it("keeps nothing for a directory changed in the last two seconds, nor for one that is not settled", async () => {
    const { root, shard, loose } = tree();
    writeFileSync(join(shard, "fresh"), "f"); // the shard's mtime is now
    const settled = (d: string) => d === shard || d === loose;
    await dirBytes(root, undefined, settled);
    appendFileSync(join(shard, "fresh"), "g".repeat(50));
    expect(await dirBytes(root, undefined, settled)).toBe(walked(root));
    age(loose);
    // An unsettled directory (`top`'s) is looked at each time.
    appendFileSync(join(root, "top"), "more\n");
    expect(await dirBytes(root, undefined, (d) => d === shard)).toBe(walked(root));
  });
});

describe("status, asked twice in one process", () => {
  it("counts a blob written between the two, and one removed", async () => {
    const root = makeRepo({ "a.txt": "a\n" });
    const ctx = await resolveContext(undefined, root);
    await ensureStore(ctx);
    const cas = Cas.in(ctx.store);
    const sha = cas.put(Buffer.from("first blob\n"));
    age(dirname(cas.pathOf(sha)));
    const before = await status(ctx);
    expect(before.blobs).toBe(1);
    expect(before.bytes).toBe(walked(ctx.store));
    const again = await status(ctx);
    expect([again.blobs, again.bytes]).toEqual([before.blobs, before.bytes]);
    const other = cas.put(Buffer.from("second blob, in a shard of its own or not\n"));
    const after = await status(ctx);
    expect(after.blobs).toBe(2);
    expect(after.bytes).toBe(walked(ctx.store));
    rmSync(cas.pathOf(other));
    const gone = await status(ctx);
    expect(gone.blobs).toBe(1);
    expect(gone.bytes).toBe(walked(ctx.store));
  });
});
