// Every command README.md and docs/*.md show is run: each tour's `sh` blocks in a scratch directory of its own,
// with the built CLI on PATH, its output checked against the lines the doc shows (test/docs-tours.ts says how).
// The tours run at the same time, one shell each: they wait on git and Node's start-up more than they compute.
import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { brokenLinks, extract, missingLine, REPO, runTour, type Tour, type TourResult } from "../docs-tours.js";
import { tempDir } from "../helpers.js";

const FILES = [
  "README.md",
  ...readdirSync(join(REPO, "docs"))
    .filter((f) => f.endsWith(".md"))
    .sort()
    .map((f) => `docs/${f}`),
];
const EXTRACTED = FILES.map((f) => extract(f, readFileSync(join(REPO, f), "utf8")));
const TOURS = EXTRACTED.flatMap((e) => e.tours);

function tourOf(markdown: string): Tour {
  const e = extract("control.md", markdown);
  expect(e.errors).toEqual([]);
  return e.tours[0]!;
}

const fence = "```";
const SETUP = `<!-- tour: control -->\n${fence}sh\ngit init -q p && cd p\necho one > a.txt && git add -A && git commit -qm init\nunwind snapshot --label start\n${fence}\n`;

describe("the docs' tours", () => {
  it("every sh block is in a tour or says why it is not run, and every $ transcript is an sh block", () => {
    expect(EXTRACTED.flatMap((e) => e.errors)).toEqual([]);
    // The README's own tour is the one a new user follows first.
    expect(TOURS.filter((t) => t.file === "README.md").length).toBeGreaterThan(0);
  });

  it("every relative link of README.md and docs/*.md leads to a file that exists (a section moved is a link to fix)", () => {
    expect(FILES.flatMap((f) => brokenLinks(f, readFileSync(join(REPO, f), "utf8")))).toEqual([]);
    // Control: the same check finds a link to a guide that is not there.
    expect(brokenLinks("README.md", "[a](docs/sessions.md) [b](docs/nope.md#x) [c](https://example.com) [d](#top)")).toEqual(["README.md: docs/nope.md#x"]);
  });

  it.concurrent.each(TOURS.map((t) => [`${t.file} '${t.name}'`, t] as const))(
    "%s runs as the doc shows",
    async (_, tour) => {
      const r = await runTour(tour, tempDir("unwind-docs-"));
      if (!r.ok) throw new Error(`\n${r.report}`);
    },
    150_000,
  );

  it("negative control: a broken command, or a line its output lacks, fails the tour and shows the output to paste", async () => {
    const good = tourOf(`${SETUP}${fence}sh\n$ unwind snapshots\n…  start\n$ unwind restore nope   # exit 3\nunwind: no snapshot nope…\n${fence}\n`);
    const broken = tourOf(`${SETUP}${fence}sh\n$ unwind snapshots --no-such-flag\n…  start\n${fence}\n`);
    const wrongExit = tourOf(`${SETUP}${fence}sh\n$ unwind restore nope\n${fence}\n`);
    const wrongLine = tourOf(`${SETUP}${fence}sh\n$ unwind snapshots\n…  a label it never had\n${fence}\n`);
    const brokenScript = tourOf(`${SETUP}${fence}sh\nunwind snapshto\necho never\n${fence}\n${fence}sh\n$ unwind snapshots\n${fence}\n`);
    const [g, b, e, w, s] = (await Promise.all([good, broken, wrongExit, wrongLine, brokenScript].map((t) => runTour(t, tempDir("unwind-docs-"))))) as [
      TourResult,
      TourResult,
      TourResult,
      TourResult,
      TourResult,
    ];
    expect(g).toEqual({ ok: true, report: "" });
    expect(b.ok).toBe(false);
    expect(b.report).toContain("$ unwind snapshots --no-such-flag\n  exit 2, the doc says 0");
    expect(b.report).toContain("unknown option '--no-such-flag'");
    expect(e.ok).toBe(false);
    expect(e.report).toContain("exit 3, the doc says 0");
    // Ready to paste: the command with its real exit code and output.
    expect(e.report).toContain("ready to paste:\n$ unwind restore nope   # exit 3\nunwind: no snapshot nope");
    expect(w.ok).toBe(false);
    expect(w.report).toContain("this line is not in its output (in order): …  a label it never had");
    expect(w.report).toMatch(/ready to paste:\n\$ unwind snapshots\nID .*\n[0-9a-f]{6,} .* start/);
    expect(s.ok).toBe(false);
    expect(s.report).toContain("the script block stopped");
    expect(s.report).toContain("unknown command 'snapshto'");
    expect(s.report.split("--- its output:")[1]).not.toContain("never"); // set -e stopped the block at its broken line
  });

  it("the extractor refuses an unmarked sh block, a transcript outside sh and a bash fence, and skips a marked one", () => {
    const e = extract(
      "x.md",
      `${fence}sh\nls\n${fence}\n\n${fence}\n$ unwind status\n${fence}\n\n<!-- not a tour: installs from npm -->\n${fence}sh\nnpm i -g unwind\n${fence}\n<!-- tour: t -->\n${fence}bash\nls\n${fence}\n`,
    );
    expect(e.errors).toEqual([
      "x.md:1: an `sh` block outside any tour: put <!-- tour: NAME --> before it, or <!-- not a tour: REASON --> right above it",
      "x.md:5: a `$ ` transcript in a `plain` fence: make it `sh` (a tour, or marked not a tour)",
      "x.md:14: a `bash` fence: make it `sh` (a tour, or marked not a tour)",
      "x.md:13: tour 't' has no `sh` block",
    ]);
    expect(e.skipped).toEqual([{ file: "x.md", line: 10, reason: "installs from npm" }]);
  });

  it("output lines match in order, whole, with … for any text and any run of spaces for one", () => {
    const out = "RUN  WHEN\nagent-1  0s ago\nr-2026-abc  done\n";
    expect(missingLine(["agent-1 0s ago", "r-… done"], out)).toBeUndefined();
    expect(missingLine(["r-… done", "agent-1 0s ago"], out)).toBe("agent-1 0s ago");
    expect(missingLine(["agent-1"], out)).toBe("agent-1");
  });
});
