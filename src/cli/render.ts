import { decodePath, hasRawBytes } from "../domain/path-bytes.js";
import type { ExitCode } from "../domain/errors.js";

/** What every command returns: the operation's data, its human form, and the exit code. The one renderer prints it. */
export interface Output {
  json: unknown;
  human: string;
  /** A command's exit code; `unwind run` passes its command's own through. */
  exit: ExitCode | number;
  /** "stderr": print there, JSON included (stdout belongs to `unwind run`'s command). */
  stream?: "stderr";
}

export type ColorMode = "auto" | "always" | "never";

let colorMode: ColorMode = "auto";

/** `--color`: set once by the command line before any output. */
export function setColorMode(mode: ColorMode): void {
  colorMode = mode;
}

/**
 * Colour only for a person: `--color always|never` first; then NO_COLOR
 * (any non-empty value) turns it off and FORCE_COLOR (non-empty, not "0")
 * turns it on; otherwise a terminal that is not `TERM=dumb`.
 */
export function useColor(stream: NodeJS.WriteStream = process.stdout, env: NodeJS.ProcessEnv = process.env): boolean {
  if (colorMode !== "auto") return colorMode === "always";
  if (env.NO_COLOR) return false;
  if (env.FORCE_COLOR !== undefined && env.FORCE_COLOR !== "" && env.FORCE_COLOR !== "0") return true;
  return Boolean(stream.isTTY) && env.TERM !== "dumb";
}

const codes = { red: 31, green: 32, yellow: 33, dim: 2, bold: 1, cyan: 36 } as const;
export type Color = keyof typeof codes;

export function paint(s: string, c: Color, on = useColor()): string {
  return on ? `\u001b[${codes[c]}m${s}\u001b[0m` : s;
}

/** The width tables fit: the terminal's, or 100 columns when output is not a terminal. */
export function width(): number {
  return process.stdout.isTTY && process.stdout.columns ? process.stdout.columns : 100;
}

const len = (s: string) => [...s].length;

/**
 * Prose folded at spaces to `cols` columns (80: what a message is read at),
 * the lines after the first indented by `indent` spaces. A word longer than
 * a line (a path, a command) is kept whole on a line of its own.
 */
export function fold(text: string, indent: number, cols = 80): string[] {
  const lead = /^ */.exec(text)![0];
  const out: string[] = [];
  let line: string | null = null;
  for (const word of text.slice(lead.length).split(" ")) {
    const next: string = line === null ? word : `${line} ${word}`;
    if (line !== null && len(next) > cols - (out.length ? indent : lead.length)) {
      out.push(line);
      line = word;
    } else line = next;
  }
  out.push(line ?? "");
  return out.map((l, i) => (i === 0 ? lead : " ".repeat(indent)) + l);
}

function cut(s: string, n: number): string {
  const cs = [...s];
  return cs.length <= n ? s : cs.slice(0, Math.max(1, n - 1)).join("") + "…";
}

/**
 * Aligned columns; the last column is not padded. `colors` paints whole
 * cells after padding. Only the columns named in `fit` (free text: labels,
 * counts) are ever cut (with "…"), widest first, until the rows fit `max`;
 * paths, ids and reasons are shown whole, however wide.
 */
export function table(rows: string[][], colors: (Color | null)[] = [], opts: { fit?: readonly number[]; max?: number } = {}): string {
  if (rows.length === 0) return "";
  const max = opts.max ?? width();
  const fit = new Set(opts.fit ?? []);
  const widths: number[] = [];
  for (const r of rows) {
    r.forEach((c, i) => {
      widths[i] = Math.max(widths[i] ?? 0, len(c));
    });
  }
  const total = () => widths.reduce((a, b) => a + b, 0) + 2 * (widths.length - 1);
  while (total() > max) {
    const cuttable = [...fit].filter((i) => (widths[i] ?? 0) > 8);
    if (cuttable.length === 0) break;
    const widest = cuttable.reduce((a, b) => (widths[b]! > widths[a]! ? b : a));
    widths[widest] = Math.max(8, widths[widest]! - (total() - max));
  }
  return rows
    .map((r) =>
      r
        .map((c, i) => {
          const text = fit.has(i) ? cut(c, widths[i]!) : c;
          const cell = i === r.length - 1 ? text : text + " ".repeat(Math.max(0, widths[i]! - len(text)));
          const color = colors[i];
          return color ? paint(cell, color) : cell;
        })
        .join("  ")
        .trimEnd(),
    )
    .join("\n");
}

/** "showing 50 of 120" when a list was cut, so a person knows there is more. */
export function more(shown: number, total: number, what: string): string[] {
  return total > shown ? [paint(`showing ${shown} of ${total} ${what} (--limit/-n N for more, --since to narrow)`, "dim")] : [];
}

/**
 * Shows a path the way git does when it must: quoted with C escapes if it
 * holds control characters, quotes or bytes that are not UTF-8 (as octal).
 */
export function showPath(p: string): string {
  const raw = hasRawBytes(p);
  if (!raw && !/[\u0000-\u001f"\\\u007f]/.test(p)) return p;
  if (!raw) return JSON.stringify(p);
  let out = "";
  for (const ch of p) {
    const c = ch.charCodeAt(0);
    if (ch.length === 1 && c >= 0xdc80 && c <= 0xdcff) out += "\\" + (c - 0xdc00).toString(8).padStart(3, "0");
    else out += JSON.stringify(ch).slice(1, -1);
  }
  return `"${out}"`;
}

/** A path from JSON data (`path` plus `pathBytes` where it is not UTF-8), shown as `showPath` shows it. */
export function showJsonPath(e: { path: string; pathBytes?: string | undefined }): string {
  return showPath(e.pathBytes ? decodePath(Buffer.from(e.pathBytes, "base64")) : e.path);
}

export function short(oid: string | undefined | null): string {
  return oid ? oid.slice(0, 8) : "-";
}

export function bytes(n: number): string {
  if (n < 1024) return `${n} B`;
  const units = ["KiB", "MiB", "GiB", "TiB"];
  let v = n / 1024;
  let i = 0;
  while (v >= 1024 && i < units.length - 1) {
    v /= 1024;
    i++;
  }
  return `${v.toFixed(1)} ${units[i]}`;
}

/** A time for a person: how long ago within a week ("3m ago"), the local date and time before that. */
export function when(iso: string, nowMs = Date.now()): string {
  const t = Date.parse(iso);
  if (Number.isNaN(t)) return iso;
  const s = Math.round((nowMs - t) / 1000);
  if (s < 0) return local(t);
  if (s < 60) return `${s}s ago`;
  if (s < 3600) return `${Math.floor(s / 60)}m ago`;
  if (s < 86400) return `${Math.floor(s / 3600)}h ago`;
  if (s < 7 * 86400) return `${Math.floor(s / 86400)}d ago`;
  return local(t);
}

function local(t: number): string {
  const d = new Date(t);
  const p = (n: number) => String(n).padStart(2, "0");
  return `${d.getFullYear()}-${p(d.getMonth() + 1)}-${p(d.getDate())} ${p(d.getHours())}:${p(d.getMinutes())}`;
}

/** A progress line (see `progress`): `tick` says how far the work is, `done` clears the line. */
export interface ProgressLine {
  tick(done: number, total: number): void;
  done(): void;
}

/**
 * A progress line on stderr for work that takes more than a second: the
 * label, then counts and a rate once the work reports them (`tick`); only on
 * a terminal, so pipes and --json consumers never see it.
 */
export function progress(label: string, stream: NodeJS.WriteStream = process.stderr): ProgressLine {
  if (!stream.isTTY) return { tick: () => {}, done: () => {} };
  const start = Date.now();
  let shown = false;
  let last = 0;
  let counts = "";
  const draw = () => {
    shown = true;
    stream.write(`\u001b[2K${label}${counts || "…"}\r`);
  };
  const timer = setTimeout(draw, 1000);
  return {
    tick(done, total) {
      const now = Date.now();
      const rate = done / Math.max(0.001, (now - start) / 1000);
      counts = ` ${done}/${total} paths (${Math.round(rate)}/s)`;
      if (now - start >= 1000 && (now - last >= 100 || done === total)) {
        last = now;
        draw();
      }
    },
    done() {
      clearTimeout(timer);
      if (shown) stream.write("\u001b[2K");
    },
  };
}
