import { isUtf8 } from "node:buffer";

/**
 * Names are bytes (SPEC section 2): a path that is not valid UTF-8 is kept
 * as a string whose invalid bytes are lone surrogates U+DC80-U+DCFF (one per
 * byte, as Python's "surrogateescape" does), so it survives JSON, maps and
 * sorting, and turns back into exactly its bytes for git and the file system.
 */
export const RAW_BYTE = /(?<![\uD800-\uDBFF])[\uDC80-\uDCFF]/;

/** A path's bytes (from git's `-z` output, a directory listing) as a path string, losslessly. */
export function decodePath(buf: Buffer): string {
  if (isUtf8(buf)) return buf.toString("utf8");
  let out = "";
  let i = 0;
  while (i < buf.length) {
    // The UTF-8 sequence starting here (its lead byte fixes its length), else one raw byte.
    let taken = 0;
    for (const n of [1, 2, 3, 4]) {
      if (i + n <= buf.length && isUtf8(buf.subarray(i, i + n))) {
        taken = n;
        break;
      }
    }
    if (taken > 0) {
      out += buf.toString("utf8", i, i + taken);
      i += taken;
    } else out += String.fromCharCode(0xdc00 + buf[i++]!);
  }
  return out;
}

/** The exact bytes of a path string (`decodePath`'s inverse). */
export function encodePath(s: string): Buffer {
  if (!RAW_BYTE.test(s)) return Buffer.from(s, "utf8");
  const parts: Buffer[] = [];
  let run = "";
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    const lone = c >= 0xdc80 && c <= 0xdcff && !(i > 0 && s.charCodeAt(i - 1) >= 0xd800 && s.charCodeAt(i - 1) <= 0xdbff);
    if (!lone) {
      run += s[i];
      continue;
    }
    parts.push(Buffer.from(run, "utf8"), Buffer.from([c - 0xdc00]));
    run = "";
  }
  parts.push(Buffer.from(run, "utf8"));
  return Buffer.concat(parts);
}

/** Whether a path holds bytes that are not UTF-8. */
export const hasRawBytes = (s: string): boolean => RAW_BYTE.test(s);

/** A path as the file system takes it: the string, or its exact bytes where it is not UTF-8. */
export function fsPath(s: string): string | Buffer {
  return hasRawBytes(s) ? encodePath(s) : s;
}
