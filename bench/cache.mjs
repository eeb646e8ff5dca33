// Benchmark: the reuse cache (src/domain/byte-cache.ts) through a full
// budget. A 100,000-path undo sets about 300,000 entries in it (each file's
// bytes as the plan reads them, each blob to write), nearly all evicting
// the oldest. Before it kept its own order, each eviction walked the map
// past the slots its deletions left: 2.8 s for 200,000 sets, n squared.
// Reported per size as a ratio to a plain Map that evicts a key it is told,
// in the same run (the least a bounded cache costs). No target: the ratio
// must stay flat as the sets grow.

import { importSource, intEnv, medianTime, standalone } from "./lib.mjs";

const REPS = intEnv("BENCH_CACHE_REPS", 5);

export async function bench() {
  const { ByteCache, REUSE_BUDGET, REUSE_MAX_ITEM, REUSE_PER_ENTRY } = await importSource("src/domain/byte-cache.ts");
  const data = Buffer.alloc(100); // a source file's bytes, as a monorepo's are
  const key = (i) => `git\0${i.toString(16).padStart(40, "0")}`;
  const fits = Math.floor(REUSE_BUDGET / (data.length + REUSE_PER_ENTRY));
  console.log(`reuse cache: sets of ${data.length}-byte entries through a full ${REUSE_BUDGET / 2 ** 20} MiB budget (${fits.toLocaleString("en")} fit)`);
  console.log("  sets      ByteCache   plain Map   ratio");
  for (const n of [50_000, 100_000, 200_000]) {
    const keys = Array.from({ length: n }, (_, i) => key(i));
    const cache = medianTime(() => {
      const c = new ByteCache(REUSE_BUDGET, REUSE_MAX_ITEM, REUSE_PER_ENTRY);
      for (const k of keys) c.set(k, data);
    }, REPS);
    const plain = medianTime(() => {
      const m = new Map();
      for (let i = 0; i < n; i++) {
        if (i >= fits) m.delete(keys[i - fits]);
        m.set(keys[i], data);
      }
    }, REPS);
    console.log(`  ${String(n).padStart(7)}  ${cache.toFixed(1).padStart(8)} ms ${plain.toFixed(1).padStart(8)} ms  ${(cache / plain).toFixed(1).padStart(5)}x`);
  }
}

await standalone(import.meta.url, bench);
