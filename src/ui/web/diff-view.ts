import { diffWordsWithSpace, structuredPatch } from "diff";
import { h } from "./dom.js";
import { highlightLines, type Piece } from "./highlight.js";

export type DiffMode = "unified" | "split";

/** One hunk as the engine numbers it (src/domain/hunks.ts; `changes --patch`, `undo --hunk`). */
export interface HunkLike {
  n: number;
  oldStart: number;
  oldLines: number;
  newStart: number;
  newLines: number;
  lines: string[];
}

export interface Line {
  op: " " | "-" | "+";
  text: string;
  old: number | null;
  new: number | null;
  /** Character ranges this line changed against its partner line (word-level), when it has one. */
  marks?: [number, number][];
}

export interface DiffOptions {
  /** The engine's hunks of this change (so a hunk's number is the one `undo --hunk` takes); computed here, the same way, when absent. */
  hunks?: HunkLike[] | null;
  /** The highlighter's language (highlight.ts), or null for plain text. */
  lang?: string | null;
  /** Adds a "Take back this hunk" button to each hunk's header. */
  takeBack?: (n: number, button: HTMLButtonElement) => void;
}

/** Hunks of a text change, three lines of context, as the engine makes them (the same jsdiff call). */
export function hunksOf(before: string, after: string): HunkLike[] {
  return structuredPatch("a", "b", before, after, "", "", { context: 3 }).hunks.map((x, i) => ({ n: i + 1, ...x }));
}

const splitLines = (t: string) => {
  const l = t.split("\n");
  if (l[l.length - 1] === "") l.pop();
  return l;
};

/** A line shorter than this, and changed by less than this share, gets word-level marks; past that the marks are noise. */
const WORD_LINE = 1000;
const WORD_SHARE = 0.6;

/** Marks what changed inside each deleted line and the added line across from it. */
function markWords(dels: Line[], adds: Line[]): void {
  const pairs = Math.min(dels.length, adds.length);
  for (let k = 0; k < pairs; k++) {
    const d = dels[k]!;
    const a = adds[k]!;
    if (d.text.length > WORD_LINE || a.text.length > WORD_LINE) continue;
    const dm: [number, number][] = [];
    const am: [number, number][] = [];
    let di = 0;
    let ai = 0;
    let same = 0;
    for (const part of diffWordsWithSpace(d.text, a.text)) {
      const n = part.value.length;
      if (part.removed) dm.push([di, (di += n)]);
      else if (part.added) am.push([ai, (ai += n)]);
      else {
        di += n;
        ai += n;
        same += n;
      }
    }
    const longest = Math.max(d.text.length, a.text.length, 1);
    if (1 - same / longest > WORD_SHARE) continue;
    d.marks = dm;
    a.marks = am;
  }
}

/** A line's cells: its syntax pieces, with the word-level changes wrapped in <mark>. */
function codeNodes(text: string, pieces: Piece[] | null, marks: [number, number][] | undefined): Node[] {
  const src = pieces && pieces.map((p) => p.text).join("") === text ? pieces : [{ text, type: "" }];
  const cuts = new Set<number>([0, text.length]);
  let at = 0;
  for (const p of src) cuts.add((at += p.text.length));
  for (const [s, e] of marks ?? []) cuts.add(s).add(e);
  const points = [...cuts].sort((x, y) => x - y);
  const typeAt = (pos: number) => {
    let a = 0;
    for (const p of src) {
      if (pos < a + p.text.length) return p.type;
      a += p.text.length;
    }
    return "";
  };
  const marked = (pos: number) => (marks ?? []).some(([s, e]) => pos >= s && pos < e);
  const out: Node[] = [];
  for (let i = 0; i + 1 < points.length; i++) {
    const s = points[i]!;
    const e = points[i + 1]!;
    if (e <= s) continue;
    const piece = text.slice(s, e);
    const type = typeAt(s);
    const node: Node = type ? h("span", { class: `tok-${type}` }, piece) : document.createTextNode(piece);
    out.push(marked(s) ? h("mark", { class: "wd" }, node) : node);
  }
  return out;
}

interface Gap {
  /** The first line of the unchanged run on each side, and how many lines it holds. */
  old: number;
  new: number;
  count: number;
}

/**
 * Where each hunk's lines sit on both sides, with word marks on changed
 * line pairs, and the unchanged runs before each hunk and after the last
 * (what a folded row stands for). Pure, for the unit tests.
 */
export function layout(oldCount: number, hunks: HunkLike[]): { hunks: { hunk: HunkLike; gap: Gap; lines: Line[] }[]; tail: Gap } {
  let oldPos = 1;
  let newPos = 1;
  const out: { hunk: HunkLike; gap: Gap; lines: Line[] }[] = [];
  for (const hk of hunks) {
    // A hunk with no old (new) lines comes only of an empty side (three lines of context): it starts where that side does.
    const oldFirst = hk.oldLines === 0 ? oldPos : hk.oldStart;
    const newFirst = hk.newLines === 0 ? newPos : hk.newStart;
    const gap = { old: oldPos, new: newPos, count: oldFirst - oldPos };
    const lines: Line[] = [];
    let o = oldFirst;
    let n = newFirst;
    for (const raw of hk.lines) {
      const op = raw[0];
      if (op === "\\") continue; // "No newline at end of file": a note of the patch format, not a line
      const text = raw.slice(1);
      if (op === "+") lines.push({ op: "+", text, old: null, new: n++ });
      else if (op === "-") lines.push({ op: "-", text, old: o++, new: null });
      else lines.push({ op: " ", text, old: o++, new: n++ });
    }
    for (let i = 0; i < lines.length; ) {
      const dels: Line[] = [];
      const adds: Line[] = [];
      while (i < lines.length && lines[i]!.op === "-") dels.push(lines[i++]!);
      while (i < lines.length && lines[i]!.op === "+") adds.push(lines[i++]!);
      if (dels.length && adds.length) markWords(dels, adds);
      if (!dels.length && !adds.length) i++;
    }
    out.push({ hunk: hk, gap, lines });
    oldPos = o;
    newPos = n;
  }
  return { hunks: out, tail: { old: oldPos, new: newPos, count: oldCount - oldPos + 1 } };
}

const num = (v: number | null) => h("td", { class: "num" }, v === null ? "" : String(v));
const opClass = (op: Line["op"]) => (op === "+" ? "add" : op === "-" ? "del" : "ctx");

/**
 * A diff as a table in the engine's hunks: unified (one column, - and +
 * lines) or split (before on the left, after on the right). Each hunk has
 * a header (its number, its range, and "Take back this hunk" where the
 * caller can); an unchanged run between hunks is one row that expands
 * into its lines; changed lines carry their syntax colours and the words
 * they changed.
 */
export function renderDiff(before: string, after: string, mode: DiffMode, opts: DiffOptions = {}): HTMLElement {
  const hunks = opts.hunks ?? hunksOf(before, after);
  const oldLines = splitLines(before);
  const newLines = splitLines(after);
  const lang = opts.lang ?? null;
  const hiOld = highlightLines(before, lang);
  const hiNew = highlightLines(after, lang);
  const cols = mode === "unified" ? ["num", "num", "code"] : ["num", "code", "num", "code"];
  const span = cols.length;
  const table = h("table", { class: `diff ${mode}` });
  // A fixed table takes its column widths from its first row; where that is a folded run (one cell across all columns)
  // it split the width evenly and squeezed the code into a third. The columns say their widths themselves.
  table.append(h("colgroup", {}, ...cols.map((c) => h("col", { class: `col-${c}` }))));
  const body = h("tbody");
  table.append(body);

  const piecesOf = (l: Line, side: "old" | "new") => {
    const n = side === "old" ? l.old : l.new;
    const hi = side === "old" ? hiOld : hiNew;
    return n !== null && hi ? (hi[n - 1] ?? null) : null;
  };
  const cell = (l: Line | null, side: "left" | "right") => {
    if (!l) return h("td", { class: `code empty ${side}` });
    return h("td", { class: `code ${opClass(l.op)} ${side}` }, codeNodes(l.text, piecesOf(l, l.op === "+" ? "new" : "old"), l.marks));
  };
  const lineRows = (lines: Line[]): HTMLElement[] => {
    const out: HTMLElement[] = [];
    if (mode === "unified") {
      for (const l of lines)
        out.push(
          h(
            "tr",
            { class: opClass(l.op) },
            num(l.old),
            num(l.new),
            h("td", { class: `code ${opClass(l.op)}` }, h("span", { class: "op" }, l.op), codeNodes(l.text, piecesOf(l, l.op === "+" ? "new" : "old"), l.marks)),
          ),
        );
      return out;
    }
    // A run of deletions beside the run of additions that follows it: a changed line sits across from what replaced it.
    let i = 0;
    while (i < lines.length) {
      const l = lines[i]!;
      if (l.op === " ") {
        out.push(h("tr", {}, num(l.old), cell(l, "left"), num(l.new), cell(l, "right")));
        i++;
        continue;
      }
      const dels: Line[] = [];
      const adds: Line[] = [];
      while (i < lines.length && lines[i]!.op === "-") dels.push(lines[i++]!);
      while (i < lines.length && lines[i]!.op === "+") adds.push(lines[i++]!);
      for (let k = 0; k < Math.max(dels.length, adds.length); k++) {
        const d = dels[k] ?? null;
        const a = adds[k] ?? null;
        out.push(h("tr", {}, num(d?.old ?? null), cell(d, "left"), num(a?.new ?? null), cell(a, "right")));
      }
    }
    return out;
  };
  /** An unchanged run, folded into one row that a click (or Enter) opens into its lines. */
  const fold = (fromOld: number, fromNew: number, count: number) => {
    if (count <= 0) return;
    const label = `⋯ ${count} unchanged line${count === 1 ? "" : "s"}`;
    const btn = h("button", { class: "expand", type: "button", title: "show these lines" }, label);
    const tr = h("tr", { class: "fold" }, h("td", { colspan: span }, btn));
    btn.addEventListener("click", () => {
      const lines: Line[] = [];
      for (let k = 0; k < count; k++) lines.push({ op: " ", text: oldLines[fromOld - 1 + k] ?? "", old: fromOld + k, new: fromNew + k });
      tr.replaceWith(...lineRows(lines));
    });
    body.append(tr);
  };

  const laid = layout(oldLines.length, hunks);
  for (const { hunk: hk, gap, lines } of laid.hunks) {
    fold(gap.old, gap.new, gap.count);
    const header = h(
      "td",
      { colspan: span },
      h("span", { class: "hunk-title" }, `Hunk ${hk.n} of ${hunks.length}`),
      h("span", { class: "hunk-range" }, ` @@ -${hk.oldStart},${hk.oldLines} +${hk.newStart},${hk.newLines} @@`),
    );
    if (opts.takeBack) {
      const b = h("button", { class: "take-back", type: "button", "data-hunk": hk.n }, "Take back this hunk");
      b.addEventListener("click", () => opts.takeBack?.(hk.n, b));
      header.append(b);
    }
    body.append(h("tr", { class: "hunk", "data-hunk": hk.n }, header));
    body.append(...lineRows(lines));
  }
  fold(laid.tail.old, laid.tail.new, laid.tail.count);
  const added = laid.hunks.reduce((k, x) => k + x.lines.filter((l) => l.op === "+").length, 0);
  const deleted = laid.hunks.reduce((k, x) => k + x.lines.filter((l) => l.op === "-").length, 0);
  if (oldLines.length === 0 && newLines.length === 0) body.append(h("tr", { class: "fold" }, h("td", { colspan: span }, "(empty on both sides)")));
  return h(
    "div",
    { class: "diffwrap" },
    h(
      "div",
      { class: "diffstat" },
      h("span", { class: "add" }, `+${added}`),
      " ",
      h("span", { class: "del" }, `−${deleted}`),
      hunks.length ? h("span", { class: "muted" }, ` · ${hunks.length} hunk${hunks.length === 1 ? "" : "s"}`) : null,
    ),
    table,
  );
}
