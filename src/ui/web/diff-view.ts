import { diffLines } from "diff";
import { h } from "./dom.js";

export type DiffMode = "unified" | "split";

interface Line {
  op: " " | "-" | "+";
  text: string;
  old: number | null;
  new: number | null;
}

/** Unchanged lines kept around each change; longer unchanged runs fold into one "N unchanged lines" row. */
const CONTEXT = 3;

/** The lines of a two-sided text diff (jsdiff's Myers diff), numbered on each side. */
export function diffRows(before: string, after: string): Line[] {
  const out: Line[] = [];
  let o = 1;
  let n = 1;
  for (const part of diffLines(before, after)) {
    const lines = part.value.split("\n");
    if (lines[lines.length - 1] === "") lines.pop();
    for (const text of lines) {
      if (part.added) out.push({ op: "+", text, old: null, new: n++ });
      else if (part.removed) out.push({ op: "-", text, old: o++, new: null });
      else out.push({ op: " ", text, old: o++, new: n++ });
    }
  }
  return out;
}

/** Lines to show, with the unchanged runs far from any change replaced by the count of lines they hold. */
function folded(lines: Line[]): (Line | { fold: number })[] {
  const near = new Array<boolean>(lines.length).fill(false);
  lines.forEach((l, i) => {
    if (l.op === " ") return;
    for (let k = Math.max(0, i - CONTEXT); k <= Math.min(lines.length - 1, i + CONTEXT); k++) near[k] = true;
  });
  const out: (Line | { fold: number })[] = [];
  let run = 0;
  lines.forEach((l, i) => {
    if (near[i]) {
      if (run) out.push({ fold: run });
      run = 0;
      out.push(l);
    } else run++;
  });
  if (run) out.push({ fold: run });
  return out;
}

const num = (v: number | null) => h("td", { class: "num" }, v === null ? "" : String(v));
const code = (l: Line | null, side: string) => h("td", { class: `code ${l ? opClass(l.op) : "empty"} ${side}` }, l ? l.text : "");
const opClass = (op: Line["op"]) => (op === "+" ? "add" : op === "-" ? "del" : "ctx");

/** A diff as a table: unified (one column, - and + lines) or split (before on the left, after on the right). */
export function renderDiff(before: string, after: string, mode: DiffMode): HTMLElement {
  const lines = diffRows(before, after);
  const added = lines.filter((l) => l.op === "+").length;
  const deleted = lines.filter((l) => l.op === "-").length;
  const table = h("table", { class: `diff ${mode}` });
  // A fixed table takes its column widths from its first row; where that is a folded run (one cell across all columns)
  // it split the width evenly and squeezed the code into a third. The columns say their widths themselves.
  const cols = mode === "unified" ? ["num", "num", "code"] : ["num", "code", "num", "code"];
  table.append(h("colgroup", {}, ...cols.map((c) => h("col", { class: `col-${c}` }))));
  const body = h("tbody");
  table.append(body);
  const rows = folded(lines);
  if (mode === "unified") {
    for (const r of rows) {
      if ("fold" in r) body.append(h("tr", { class: "fold" }, h("td", { colspan: 3 }, `⋯ ${r.fold} unchanged line${r.fold === 1 ? "" : "s"}`)));
      else body.append(h("tr", { class: opClass(r.op) }, num(r.old), num(r.new), h("td", { class: `code ${opClass(r.op)}` }, h("span", { class: "op" }, r.op), r.text)));
    }
  } else {
    // A run of deletions beside the run of additions that follows it: a changed line sits across from what replaced it.
    let i = 0;
    while (i < rows.length) {
      const r = rows[i]!;
      if ("fold" in r) {
        body.append(h("tr", { class: "fold" }, h("td", { colspan: 4 }, `⋯ ${r.fold} unchanged line${r.fold === 1 ? "" : "s"}`)));
        i++;
        continue;
      }
      if (r.op === " ") {
        body.append(h("tr", {}, num(r.old), code(r, "left"), num(r.new), code(r, "right")));
        i++;
        continue;
      }
      const dels: Line[] = [];
      const adds: Line[] = [];
      while (i < rows.length && !("fold" in rows[i]!) && (rows[i] as Line).op === "-") dels.push(rows[i++] as Line);
      while (i < rows.length && !("fold" in rows[i]!) && (rows[i] as Line).op === "+") adds.push(rows[i++] as Line);
      for (let k = 0; k < Math.max(dels.length, adds.length); k++) {
        const d = dels[k] ?? null;
        const a = adds[k] ?? null;
        body.append(h("tr", {}, num(d?.old ?? null), code(d, "left"), num(a?.new ?? null), code(a, "right")));
      }
    }
  }
  if (lines.length === 0) body.append(h("tr", { class: "fold" }, h("td", { colspan: 4 }, "(empty on both sides)")));
  return h("div", { class: "diffwrap" }, h("div", { class: "diffstat" }, h("span", { class: "add" }, `+${added}`), " ", h("span", { class: "del" }, `−${deleted}`)), table);
}
