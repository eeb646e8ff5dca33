import { readdirSync, readFileSync } from "node:fs";
import { dirname, join, normalize, relative } from "node:path";
import { describe, expect, it } from "vitest";

// The layout is part of the design (docs/design.md, "Layout"): each folder of
// src/ imports only from the folders below it, so a reader can follow a
// capture down to the disk and an undo up to the command line without
// meeting a cycle, and the pure code stays pure. This test reads the import
// graph from the sources themselves.

/** Top to bottom. A folder may import its own files and any folder after it. */
const LAYERS = ["index.ts", "cli", "mcp", "ui", "hook", "ops", "scope", "plan", "apply", "capture", "watch", "store", "repo", "git", "sys", "domain"];

/** Code that decides without touching the disk, git or the clock: plain data in, plain data out. */
const PURE = ["domain/", "scope/fold/", "plan/planner.ts"];
const EFFECTS = /^node:(fs|child_process|net|os|worker_threads|fs\/promises)$/;

const SRC = join(import.meta.dirname, "..", "..", "src");

function sources(dir = SRC): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) => (e.isDirectory() ? sources(join(dir, e.name)) : e.name.endsWith(".ts") ? [join(dir, e.name)] : []));
}

/** Every module a file names: static and dynamic imports, re-exports, `require` and `typeof import`. */
function specifiers(text: string): { spec: string; typeOnly: boolean }[] {
  const found: { spec: string; typeOnly: boolean }[] = [];
  for (const m of text.matchAll(/(^(?:import|export) type\b[^;]*?)?(?:\bfrom\s*|\bimport\s*\(\s*|\brequire\s*\(\s*|^import\s+)"([^"]+)"/gm)) {
    found.push({ spec: m[2]!, typeOnly: m[1] !== undefined });
  }
  return found;
}

interface Edge {
  from: string;
  to: string;
  /** `import type`: no code runs, so it cannot bring an effect into pure code (it still counts for layers and cycles). */
  typeOnly?: boolean;
}

function graph(): { edges: Edge[]; builtins: Edge[] } {
  const edges: Edge[] = [];
  const builtins: Edge[] = [];
  for (const file of sources()) {
    const from = relative(SRC, file);
    for (const { spec, typeOnly } of specifiers(readFileSync(file, "utf8"))) {
      if (spec.startsWith("node:")) builtins.push({ from, to: spec, typeOnly });
      else if (spec.startsWith(".")) {
        const to = relative(SRC, normalize(join(dirname(file), spec))).replace(/\.js$/, ".ts");
        // bin/unwind loads the bundles by file name; a `require("./hook.cjs")` names dist/, not src/.
        if (!to.endsWith(".cjs")) edges.push({ from, to, typeOnly });
      }
    }
  }
  return { edges, builtins };
}

const layerOf = (file: string): string => (file.includes("/") ? file.slice(0, file.indexOf("/")) : file);

describe("layout", () => {
  const { edges, builtins } = graph();

  it("reads a real graph (a control: the parser finds the imports it must judge)", () => {
    expect(edges.length).toBeGreaterThan(100);
    expect(edges).toContainEqual({ from: "ops/take-back.ts", to: "plan/planner.ts", typeOnly: false });
    for (const e of edges) expect(LAYERS, `${e.from} -> ${e.to}: a folder the layout does not name`).toContain(layerOf(e.to));
  });

  it("each folder imports only the folders below it", () => {
    const upward = edges.filter((e) => LAYERS.indexOf(layerOf(e.to)) < LAYERS.indexOf(layerOf(e.from))).map((e) => `${e.from} -> ${e.to}`);
    expect(upward).toEqual([]);
  });

  it("no cycle between files", () => {
    const next = new Map<string, string[]>();
    for (const e of edges) next.set(e.from, [...(next.get(e.from) ?? []), e.to]);
    const cycles: string[] = [];
    const state = new Map<string, "open" | "done">();
    const visit = (f: string, trail: string[]): void => {
      if (state.get(f) === "done") return;
      if (state.get(f) === "open") {
        cycles.push([...trail.slice(trail.indexOf(f)), f].join(" -> "));
        return;
      }
      state.set(f, "open");
      for (const t of next.get(f) ?? []) visit(t, [...trail, f]);
      state.set(f, "done");
    };
    for (const f of next.keys()) visit(f, []);
    expect(cycles).toEqual([]);
  });

  it("the pure code imports no effects, and the domain nothing of ours but itself", () => {
    const pure = (f: string) => PURE.some((p) => f.startsWith(p));
    const bad = [...builtins.filter((e) => pure(e.from) && !e.typeOnly && EFFECTS.test(e.to)), ...edges.filter((e) => pure(e.from) && !e.typeOnly && !pure(e.to))].map((e) => `${e.from} -> ${e.to}`);
    expect(bad).toEqual([]);
  });

  it("no two files share a name for different things", () => {
    // A command (cli/commands/undo.ts), its operation (ops/undo.ts) and its tool are one thing at three heights: they share a name on purpose.
    const clients = /^(cli|mcp|ui|ops)\//;
    const byName = new Map<string, string[]>();
    for (const f of sources()
      .map((f) => relative(SRC, f))
      .filter((f) => !clients.test(f))) {
      const name = f.slice(f.lastIndexOf("/") + 1);
      // index.ts and a folder's entry may repeat: they are named by their folder
      if (name !== "index.ts") byName.set(name, [...(byName.get(name) ?? []), f]);
    }
    expect([...byName.values()].filter((fs) => fs.length > 1)).toEqual([]);
  });

  it("the rules are not vacuous: an upward import or a cycle would be seen", () => {
    const fake: Edge[] = [{ from: "store/cas.ts", to: "capture/snapshot.ts" }];
    expect(fake.filter((e) => LAYERS.indexOf(layerOf(e.to)) < LAYERS.indexOf(layerOf(e.from)))).toHaveLength(1);
    expect(specifiers('import { a } from "./x.js";\nimport type { T } from "./t.js";\nconst h = require("./y.js") as typeof import("../z.js");')).toEqual([
      { spec: "./x.js", typeOnly: false },
      { spec: "./t.js", typeOnly: true },
      { spec: "./y.js", typeOnly: false },
      { spec: "../z.js", typeOnly: false },
    ]);
  });
});
