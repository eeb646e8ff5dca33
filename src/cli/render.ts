import { hasRawBytes } from "../domain/path-bytes.js";
import type { ExitCode } from "../domain/errors.js";

/** What every command handler returns; one renderer prints it. */
export interface Output {
  json: unknown;
  human: string;
  exit: ExitCode;
}

export function useColor(stream: NodeJS.WriteStream = process.stdout): boolean {
  return Boolean(stream.isTTY) && !("NO_COLOR" in process.env && process.env.NO_COLOR !== "");
}

const codes = { red: 31, green: 32, yellow: 33, dim: 2, bold: 1, cyan: 36 } as const;
export type Color = keyof typeof codes;

export function paint(s: string, c: Color, on = useColor()): string {
  return on ? `\u001b[${codes[c]}m${s}\u001b[0m` : s;
}

/** Aligned columns; the last column is not padded. `colors` paints whole cells after padding. */
export function table(rows: string[][], colors: (Color | null)[] = []): string {
  if (rows.length === 0) return "";
  const widths: number[] = [];
  for (const r of rows) r.forEach((c, i) => (widths[i] = Math.max(widths[i] ?? 0, [...c].length)));
  return rows
    .map((r) =>
      r
        .map((c, i) => {
          const cell = i === r.length - 1 ? c : c + " ".repeat(widths[i]! - [...c].length);
          const color = colors[i];
          return color ? paint(cell, color) : cell;
        })
        .join("  ")
        .trimEnd(),
    )
    .join("\n");
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

/**
 * A progress line on stderr for work that takes more than a second; only on
 * a terminal, so pipes and --json consumers never see it.
 */
export function progress(label: string): () => void {
  if (!process.stderr.isTTY) return () => {};
  let shown = false;
  const timer = setTimeout(() => {
    shown = true;
    process.stderr.write(`${label}…\r`);
  }, 1000);
  return () => {
    clearTimeout(timer);
    if (shown) process.stderr.write("\u001b[2K");
  };
}
