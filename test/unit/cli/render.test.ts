import { afterEach, describe, expect, it, vi } from "vitest";
import { fold, progress, table, when } from "../../../src/cli/render.js";

/** A stream that records what is written, and says whether it is a terminal. */
function stream(isTTY: boolean) {
  const out: string[] = [];
  return { out, s: { isTTY, write: (t: string) => out.push(t) > 0 } as unknown as NodeJS.WriteStream };
}

afterEach(() => {
  vi.useRealTimers();
});

describe("progress line", () => {
  it("on a terminal: nothing for the first second, then counts and a rate; cleared at the end", () => {
    vi.useFakeTimers();
    const { out, s } = stream(true);
    const line = progress("restoring", s);
    line.tick(10, 3000);
    expect(out).toEqual([]); // work under a second shows nothing
    vi.advanceTimersByTime(1000);
    line.tick(1500, 3000);
    expect(out.at(-1)).toMatch(/restoring 1500\/3000 paths \(\d+\/s\)\r$/);
    line.tick(3000, 3000);
    expect(out.at(-1)).toMatch(/3000\/3000 paths/);
    line.done();
    expect(out.at(-1)).toBe("\u001b[2K");
  });

  it("control: not a terminal, nothing is ever written", () => {
    vi.useFakeTimers();
    const { out, s } = stream(false);
    const line = progress("restoring", s);
    vi.advanceTimersByTime(5000);
    line.tick(3000, 3000);
    line.done();
    expect(out).toEqual([]);
  });
});

describe("tables and times", () => {
  it("cuts only the free-text columns it may, to fit; paths and ids stay whole", () => {
    const t = table([["a", "x".repeat(200)]], [], { fit: [1], max: 40 });
    expect([...t].length).toBeLessThanOrEqual(40);
    expect(t.startsWith("a  ")).toBe(true);
    expect(t.endsWith("…")).toBe(true);
    expect(table([["a", "short"]], [], { fit: [1], max: 40 })).toBe("a  short"); // control: what fits is not cut
    const path = `src/${"deep/".repeat(30)}file.ts`;
    expect(table([["restore", path]], [], { max: 40 })).toBe(`restore  ${path}`); // a path is never cut
  });

  it("relative times within a week, the local date after", () => {
    const now = Date.parse("2026-12-01T12:00:00Z");
    expect(when("2026-12-01T11:59:30Z", now)).toBe("30s ago");
    expect(when("2026-12-01T11:57:00Z", now)).toBe("3m ago");
    expect(when("2026-11-30T12:00:00Z", now)).toBe("1d ago");
    expect(when("2026-11-01T12:00:00Z", now)).toMatch(/^2026-11-0[12] \d\d:\d\d$/);
  });
});

describe("fold: prose at 80 columns", () => {
  it("folds at spaces, indents the lines after the first, and keeps a first line's own indentation", () => {
    const text = `           next: ${"word ".repeat(30).trim()}`;
    const lines = fold(text, 17);
    expect(lines.length).toBeGreaterThan(1);
    expect(lines.every((l) => l.length <= 80)).toBe(true);
    expect(lines[0]!.startsWith("           next: word")).toBe(true);
    expect(lines.slice(1).every((l) => /^ {17}word/.test(l))).toBe(true);
    // Nothing lost or added: the words are the same, in order.
    expect(lines.join(" ").split(/ +/).filter(Boolean)).toEqual(text.split(/ +/).filter(Boolean));
  });

  it("leaves a line within 80 columns as it is, inner spacing too (the control)", () => {
    const line = "updated    .codex/hooks.json  (+PreToolUse, +PostToolUse)";
    expect(fold(line, 11)).toEqual([line]);
  });

  it("keeps a word longer than a line whole, on a line of its own", () => {
    const path = `/${"p".repeat(100)}`;
    expect(fold(`see ${path} now`, 2)).toEqual(["see", `  ${path}`, "  now"]);
  });
});
