/** Ids shaped as real clients make them (a Claude session is a UUID, a call `toolu_01` and 22 base-62 characters), from a seeded generator: the same ids every run. */

export function rng(seed: number): () => number {
  let s = seed >>> 0;
  return () => {
    s = (s + 0x6d2b79f5) >>> 0;
    let t = s;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

export const HEX = "0123456789abcdef";
const B62 = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz";

export const pick = (r: () => number, alphabet: string, n: number) => Array.from({ length: n }, () => alphabet[Math.floor(r() * alphabet.length)]).join("");

/** A bare Claude session id (a UUID v4); its unwind name is `claude:` before it. */
export const claudeUuid = (r: () => number) => `${pick(r, HEX, 8)}-${pick(r, HEX, 4)}-4${pick(r, HEX, 3)}-a${pick(r, HEX, 3)}-${pick(r, HEX, 12)}`;
export const claudeCall = (r: () => number) => `toolu_01${pick(r, B62, 22)}`;
