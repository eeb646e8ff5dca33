/**
 * A set of strings that answers "maybe" or "no", never a wrong "no": what a
 * kept change set remembers of the paths that bear on it (src/scope/carry.ts),
 * ten bits a path however long the path. A false "maybe" costs a fold, never
 * a wrong answer. Hashed in JavaScript (FNV-1a, twice seeded): a SHA-256 a
 * path would cost a 100,000-path fold more than the rest of keeping it.
 */
export interface Bloom {
  bits: Uint8Array;
}

const HASHES = 7;
const BITS_EACH = 10;

function hashes(s: string): [number, number] {
  let a = 0x811c9dc5;
  let b = 0x01000193 ^ s.length;
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    a = Math.imul(a ^ c, 0x01000193);
    b = Math.imul(b ^ c, 0x5bd1e995);
    b ^= b >>> 15;
  }
  // The second hash is the step: odd, so it walks every slot of a power-of-two table.
  return [a >>> 0, (b | 1) >>> 0];
}

export function bloomOfStrings(items: Iterable<string>, count: number): Bloom {
  let size = 1024;
  while (size < count * BITS_EACH) size *= 2;
  return bloomWith({ bits: new Uint8Array(size / 8) }, items);
}

export function bloomMayHold(bloom: Bloom, s: string): boolean {
  const size = bloom.bits.length * 8;
  // Not a table this code made (a power of two, at least 1,024 bits): "maybe", never a guess.
  if (size < 1024 || (size & (size - 1)) !== 0) return true;
  const [h, step] = hashes(s);
  for (let k = 0; k < HASHES; k++) {
    const slot = (h + k * step) & (size - 1);
    if ((bloom.bits[slot >> 3]! & (1 << (slot & 7))) === 0) return false;
  }
  return true;
}

/** A copy of `bloom` that also holds `items` (its size as it was: the rate of false maybes grows as it fills). */
export function bloomWith(bloom: Bloom, items: Iterable<string>): Bloom {
  const bits = new Uint8Array(bloom.bits);
  const size = bits.length * 8;
  for (const s of items) {
    const [h, step] = hashes(s);
    for (let k = 0; k < HASHES; k++) {
      const slot = (h + k * step) & (size - 1);
      bits[slot >> 3]! |= 1 << (slot & 7);
    }
  }
  return { bits };
}
