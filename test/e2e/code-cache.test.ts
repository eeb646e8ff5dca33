import { spawnSync } from "node:child_process";
import { copyFileSync, mkdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import { tempDir } from "../helpers.js";

/*
 * The code caches of the hot bundles (bin/load.cjs, scripts/code-cache.cjs):
 * used when they are the bundle's own, and never when they are not, since
 * V8 checks only a source's length and would run the old code.
 */

const REPO = resolve(fileURLToPath(new URL(".", import.meta.url)), "..", "..");

/** Loads dist/<name>.cjs from `root` through bin/load.cjs in a fresh Node: what the cache did, and the module's `v` if any. */
function load(root: string, name: string, env: Record<string, string> = {}): { cache: string; v?: string; keys: string[] } {
  const script = `const l = require(${JSON.stringify(join(root, "bin", "load.cjs"))}); const m = l.loadBundle(${JSON.stringify(name)}); console.log(JSON.stringify({ cache: l.lastCacheUse(), v: m.v, keys: Object.keys(m) }));`;
  const r = spawnSync(process.execPath, ["-e", script], { encoding: "utf8", env: { ...process.env, NODE_OPTIONS: "", UNWIND_NO_CODE_CACHE: "", ...env } });
  expect(r.status, r.stderr).toBe(0);
  return JSON.parse(r.stdout);
}

/** A copy of bin/load.cjs and scripts/code-cache.cjs beside a one-line bundle dist/x.cjs, its cache made. */
function fixture(body: string): string {
  const root = tempDir();
  for (const d of ["bin", "dist", "scripts"]) mkdirSync(join(root, d));
  copyFileSync(join(REPO, "bin", "load.cjs"), join(root, "bin", "load.cjs"));
  copyFileSync(join(REPO, "scripts", "code-cache.cjs"), join(root, "scripts", "code-cache.cjs"));
  writeFileSync(join(root, "dist", "x.cjs"), body);
  const made = spawnSync(process.execPath, [join(root, "scripts", "code-cache.cjs"), "x"], { encoding: "utf8", env: { ...process.env, NODE_OPTIONS: "" } });
  expect(made.status, made.stderr).toBe(0);
  return root;
}

describe("the code caches of the hot bundles", () => {
  it("the build leaves one for hook, early and early-finish, and each is used", () => {
    for (const name of ["hook", "early", "early-finish"]) {
      const got = load(REPO, name);
      expect(got.cache, name).toBe("used");
      expect(got.keys.length, name).toBeGreaterThan(0);
    }
    expect(load(REPO, "hook").keys).toContain("runHook");
  });

  it("UNWIND_NO_CODE_CACHE=1 loads the bundle from source", () => {
    const got = load(REPO, "hook", { UNWIND_NO_CODE_CACHE: "1" });
    expect(got).toMatchObject({ cache: "off" });
    expect(got.keys).toContain("runHook");
  });

  it("a bundle changed since its cache was made runs its new code, even at the same length", () => {
    const root = fixture('module.exports = { v: "aaaa" };\n');
    expect(load(root, "x")).toMatchObject({ cache: "used", v: "aaaa" }); // control: the cache is the bundle's own
    writeFileSync(join(root, "dist", "x.cjs"), 'module.exports = { v: "bbbb" };\n');
    expect(load(root, "x")).toMatchObject({ cache: "stale", v: "bbbb" });

    // Why the header: V8 alone takes the old cache for the new source of the same length, and runs the old code.
    const check = `
      const vm = require("vm"), Module = require("module"), fs = require("fs");
      const src = fs.readFileSync(${JSON.stringify(join(root, "dist", "x.cjs"))}, "utf8");
      const data = fs.readFileSync(${JSON.stringify(join(root, "dist", "x.cjs.v8cache"))}).subarray(32);
      const s = new vm.Script(Module.wrap(src), { filename: "x.cjs", cachedData: data });
      const m = { exports: {} };
      s.runInThisContext()(m.exports, require, m, "x.cjs", ".");
      console.log(JSON.stringify({ rejected: s.cachedDataRejected, v: m.exports.v }));`;
    const r = spawnSync(process.execPath, ["-e", check], { encoding: "utf8", env: { ...process.env, NODE_OPTIONS: "" } });
    expect(JSON.parse(r.stdout)).toEqual({ rejected: false, v: "aaaa" });
  });

  it("a cache V8 will not take, or none at all, leaves the bundle compiled from source", () => {
    const root = fixture('module.exports = { v: "aaaa" };\n');
    const file = join(root, "dist", "x.cjs.v8cache");
    const good = readFileSync(file);
    writeFileSync(file, Buffer.concat([good.subarray(0, 32), Buffer.alloc(good.length - 32, 7)]));
    expect(load(root, "x")).toMatchObject({ cache: "rejected", v: "aaaa" });
    writeFileSync(file, good);
    expect(load(root, "x")).toMatchObject({ cache: "used", v: "aaaa" }); // control
    writeFileSync(join(root, "dist", "x.cjs.v8cache"), "");
    expect(load(root, "x")).toMatchObject({ cache: "stale", v: "aaaa" });
    rmSync(file);
    expect(load(root, "x")).toMatchObject({ cache: "absent", v: "aaaa" });
  });
});
