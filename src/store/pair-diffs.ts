import { appendFileSync, readFileSync, statSync } from "node:fs";
import { sha256 } from "../domain/hash.js";
import { isGitignore } from "../domain/paths.js";
import { storePath } from "../domain/store-layout.js";
import { mkdirPrivate } from "../sys/files.js";

/**
 * Git's raw diff of a pair of snapshot commits, kept once asked for:
 * `<store>/cache/pair-diffs.jsonl`. Commits are content-addressed, so a
 * pair's diff never changes and the cache cannot go stale; gc drops it
 * with the snapshots it may name. Each line is one pair, `<sum> <json>`
 * (sum: the first 16 hex of the JSON's SHA-256), appended in one write: a
 * torn or edited line fails its sum and is asked of git again. A cache,
 * never a record: nothing is lost with it.
 */
export function pairDiffsFile(store: string): string {
  return storePath(store, "cache", "pair-diffs.jsonl");
}

/** Past this size the file is not read (git is asked), and gc's next run drops it. */
const MAX_BYTES = 256 * 1024 * 1024;

/**
 * The paths a fold wants of one pair's diff (`has`), and, where they are few,
 * the list of them (`few`): a kept line that names none of those is not
 * parsed. A `.gitignore` is always wanted: whether any changed decides how
 * the pair's other paths are read (src/scope/visibility.ts).
 */
export interface PathsWanted {
  has(path: string): boolean;
  few?: readonly string[];
}

/** A pair's diff fields (`:meta`, path, ...) for the paths `want` has; all of them without `want`. */
export function fieldsFor(fields: readonly string[], want: PathsWanted | null): string[] {
  if (!want) return fields as string[];
  const out: string[] = [];
  for (let i = 0; i + 1 < fields.length; i += 2) if (want.has(fields[i + 1]!) || isGitignore(fields[i + 1]!)) out.push(fields[i]!, fields[i + 1]!);
  return out;
}

/**
 * The kept pair diffs as one fold reads them: the file read and its lines
 * found once (where each pair's lines are), however many times the fold
 * asks (a timeline asks for its scope's own windows, then for the rest).
 * `read` gives the kept diff fields (as `git diff-tree -z` gives them,
 * header left out) of the pairs `want` names by `"<to> <from>"`, each
 * narrowed to the paths it wants (null: every path); only those lines are
 * checked and parsed.
 */
export class PairDiffsRead {
  /** Where each pair's lines are: [start, end] of each, in file order. Null: no file, or one too big. */
  private lines: Map<string, [number, number][]> | null | undefined;
  private bytes: Buffer = Buffer.alloc(0);

  constructor(private readonly store: string) {}

  read(want: ReadonlyMap<string, PathsWanted | null>): Map<string, string[]> {
    const out = new Map<string, string[]>();
    const lines = this.found();
    if (!lines) return out;
    const bytes = this.bytes;
    // The few paths as their lines spell them (JSON strings, UTF-8), encoded once, not once a line.
    const needles = new Map<PathsWanted, Buffer[]>();
    const needlesOf = (w: PathsWanted, few: readonly string[]) => {
      let n = needles.get(w);
      if (!n) needles.set(w, (n = [Buffer.from('.gitignore"'), ...few.map((p) => Buffer.from(JSON.stringify(p)))]));
      return n;
    };
    for (const [key, only] of want) {
      for (const [start, nl] of lines.get(key) ?? []) {
        const body = bytes.subarray(start + 17, nl);
        if (sha256(body).slice(0, 16) !== bytes.toString("latin1", start, start + 16)) continue;
        if (only?.few && !needlesOf(only, only.few).some((n) => body.indexOf(n) >= 0)) {
          out.set(key, []);
          break;
        }
        try {
          const [k, fields] = JSON.parse(body.toString("utf8")) as [string, string[]];
          if (k === key && Array.isArray(fields)) {
            out.set(key, fieldsFor(fields, only));
            break;
          }
        } catch {
          /* a damaged line: the next of this pair, or asked of git again */
        }
      }
    }
    return out;
  }

  /** Appends what git was asked since: kept for the next fold, not read by this one. */
  keep(pairs: ReadonlyMap<string, readonly string[]>): void {
    appendPairDiffs(this.store, pairs);
  }

  private found(): Map<string, [number, number][]> | null {
    if (this.lines !== undefined) return this.lines;
    this.lines = null;
    try {
      if (statSync(pairDiffsFile(this.store)).size > MAX_BYTES) return null;
      this.bytes = readFileSync(pairDiffsFile(this.store));
    } catch {
      return null;
    }
    // Read as bytes: a fold wants some of the file's lines, and the rest are never made into strings.
    const bytes = this.bytes;
    const lines = new Map<string, [number, number][]>();
    let at = 0;
    while (at < bytes.length) {
      const start = at;
      let nl = bytes.indexOf(10, at);
      if (nl < 0) nl = bytes.length;
      at = nl + 1;
      // `<sum> ["<to> <from>",[...]]`: the key is read before anything is checked or parsed.
      if (nl - start < 20 || bytes[start + 16] !== 0x20 || bytes[start + 17] !== 0x5b || bytes[start + 18] !== 0x22) continue;
      const quote = bytes.indexOf(0x22, start + 19);
      if (quote < 0 || quote > nl) continue;
      const key = bytes.toString("latin1", start + 19, quote);
      const list = lines.get(key);
      if (list) list.push([start, nl]);
      else lines.set(key, [[start, nl]]);
    }
    this.lines = lines;
    return lines;
  }
}

/** Appends the pairs' diffs, one write; a store that cannot be written (read-only, full) just goes without. */
export function appendPairDiffs(store: string, pairs: ReadonlyMap<string, readonly string[]>): void {
  if (pairs.size === 0) return;
  let text = "";
  for (const [key, fields] of pairs) {
    const body = JSON.stringify([key, fields]);
    text += `${sha256(body).slice(0, 16)} ${body}\n`;
  }
  try {
    mkdirPrivate(storePath(store, "cache"));
    appendFileSync(pairDiffsFile(store), text, { mode: 0o600 });
  } catch {
    /* a cache */
  }
}
