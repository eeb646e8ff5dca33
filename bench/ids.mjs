// Benchmark: the id shortener (src/domain/ids.ts) on real-shaped Claude ids.
//
// `log` and `sessions` shorten every call and session id of the journal,
// not only the page shown (a shown tail must resolve whatever the filter),
// so the shortener runs over the whole journal on every listing and every UI
// timeline. Reported per size as a ratio to building a plain Set of the
// same ids in the same run (the least any pass over them costs). No target:
// it must stay a small multiple of that, n log n, never n squared.

import { importSource, intEnv, medianTime, standalone } from "./lib.mjs";

const REPS = intEnv("BENCH_IDS_REPS", 5);

const HEX = "0123456789abcdef";
const B62 = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz";

function ids(n, seed) {
  // mulberry32: an LCG's low bits repeat, which made tails collide more than random ids do.
  let s = seed >>> 0;
  const r = () => {
    s = (s + 0x6d2b79f5) >>> 0;
    let t = Math.imul(s ^ (s >>> 15), s | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
  const pick = (a, k) => Array.from({ length: k }, () => a[Math.floor(r() * a.length)]).join("");
  const calls = Array.from({ length: n }, () => `toolu_01${pick(B62, 22)}`);
  const sessions = Array.from({ length: n }, () => `claude:${pick(HEX, 8)}-${pick(HEX, 4)}-4${pick(HEX, 3)}-a${pick(HEX, 3)}-${pick(HEX, 12)}`);
  return { calls, sessions };
}

async function bench() {
  // The shortener, bundled from the source (the library does not export it).
  const { shortIds } = await importSource("src/domain/ids.ts");
  shortIds(ids(2_000, 1).calls); // compiled before the first timing
  console.log("  ids       kind      shortIds   Set build   ratio   longest tail");
  for (const n of [1_000, 10_000, 50_000]) {
    const set = ids(n, n);
    for (const kind of ["calls", "sessions"]) {
      const list = set[kind];
      let longest = 0;
      const short = medianTime(() => {
        longest = Math.max(...[...shortIds(list).values()].map((s) => s.length));
      }, REPS);
      const base = medianTime(() => new Set(list), REPS);
      console.log(`  ${String(n).padStart(6)}    ${kind.padEnd(8)}  ${short.toFixed(1).padStart(7)} ms  ${base.toFixed(2).padStart(7)} ms  ${(short / base).toFixed(0).padStart(5)}x   ${longest}`);
    }
  }
}

await standalone(import.meta.url, bench);
