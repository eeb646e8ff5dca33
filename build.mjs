// Bundles the CLI into dist/, as two CommonJS files:
// - dist/unwind.cjs: the command line. Each command module is wrapped to
//   initialise only when invoked, so start-up pays only for what runs.
// - dist/hook.cjs: `unwind hook`, which runs inside every tool call of an
//   agent: the smallest bundle that captures a file edit; its tree-snapshot
//   code and child_process initialise only for shell tools.
// - dist/mcp.cjs: `unwind mcp`, the MCP server and the SDK it is built on,
//   loaded by that command alone (in dist/unwind.cjs it would cost every
//   command's start-up ~15 ms).
// - dist/ui.cjs: `unwind ui`, the web app's server, loaded by that command
//   alone; dist/ui/ holds the page, its script and its stylesheet.
// - dist/early.cjs: what `unwind snapshot` runs before dist/unwind.cjs loads,
//   to start its git status sooner (src/cli/early-start.ts).
// - dist/early-finish.cjs: with a watcher running, what finishes a plain
//   `unwind snapshot` without loading dist/unwind.cjs (src/cli/early-finish.ts).
// - dist/watch.cjs: the watcher daemon `unwind watch start` spawns (src/watch/).
// - dist/<bundle>.cjs.v8cache: the code caches of hook, early and early-finish (scripts/code-cache.cjs).
// - dist/unwind.1: the man page, made from the command table (src/cli/describe.ts).
// - dist/lib/index.js: the library (`import { open } from "unwind"`, SPEC
//   section 11), an ES module, with its types in dist/types/ (tsc).
// The command line bundles are CommonJS, not ESM: Node's ESM loader costs a measurable share of a short
// process's life (docs/design.md has the figures).
import { build } from "esbuild";
import { createHash } from "node:crypto";
import { copyFileSync, mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { createRequire } from "node:module";
import { spawnSync } from "node:child_process";

// Stale output from earlier builds would pile up beside the new files.
rmSync("dist", { recursive: true, force: true });

// Packages' ESM entries first: jsonc-parser's UMD entry loads its parts through a dynamic require a bundle cannot follow.
// A hash of the sources: what a kept change set was folded by (src/store/changeset-cache.ts).
const code = createHash("sha256");
for (const f of readdirSync("src", { recursive: true }).sort()) if (/\.ts$/.test(f)) code.update(`${f}\0`).update(readFileSync(`src/${f}`));
const define = { __UNWIND_CODE__: JSON.stringify(code.digest("hex").slice(0, 16)) };
const common = { define, bundle: true, platform: "node", target: "node20", format: "cjs", sourcemap: "linked", logLevel: "warning", mainFields: ["module", "main"] };

await build({ ...common, entryPoints: ["src/cli/main.ts"], outfile: "dist/unwind.cjs", external: ["./hook.cjs", "./mcp.cjs", "./watch.cjs", "./ui.cjs"] });
// The man page, from the command table of the bundle just built (src/cli/describe.ts); package.json's `man` ships it.
writeFileSync("dist/unwind.1", createRequire(import.meta.url)("./dist/unwind.cjs").manPageText());
await build({ ...common, entryPoints: ["src/hook/entry.ts"], outfile: "dist/hook.cjs" });
await build({ ...common, entryPoints: ["src/cli/early-start.ts"], outfile: "dist/early.cjs" });
await build({ ...common, entryPoints: ["src/cli/early-finish.ts"], outfile: "dist/early-finish.cjs" });
await build({ ...common, entryPoints: ["src/mcp/server.ts"], outfile: "dist/mcp.cjs" });
await build({ ...common, entryPoints: ["src/watch/daemon-main.ts"], outfile: "dist/watch.cjs" });
await build({ ...common, entryPoints: ["src/ui/server.ts"], outfile: "dist/ui.cjs" });

// The web app's assets, served by dist/ui.cjs from dist/ui/: one script (the front end and jsdiff), one stylesheet, the page.
await build({ ...common, platform: "browser", target: "es2022", format: "iife", entryPoints: ["src/ui/web/app.ts"], outfile: "dist/ui/app.js", sourcemap: false, minify: true });
mkdirSync("dist/ui", { recursive: true });
for (const f of ["index.html", "app.css"]) copyFileSync(`src/ui/web/${f}`, `dist/ui/${f}`);

// Code caches for the bundles a short process loads on the agent's every tool call and on every
// snapshot (bin/load.cjs reads them; docs/design.md "The code cache"). Made in a process of its own with
// Node's default flags, which V8 checks the cache against, so that flags of this one cannot make it unusable.
const cached = ["hook", "early", "early-finish"];
const made = spawnSync(process.execPath, ["scripts/code-cache.cjs", ...cached], { stdio: "inherit", env: { ...process.env, NODE_OPTIONS: "" } });
if (made.status !== 0) process.exit(made.status ?? 1);

// The library: ESM for `import`; nothing of it is CommonJS, so it needs no require shim.
await build({ ...common, entryPoints: ["src/index.ts"], outfile: "dist/lib/index.js", format: "esm" });
const tsc = spawnSync(process.execPath, ["node_modules/typescript/bin/tsc", "-p", "tsconfig.lib.json"], { stdio: "inherit" });
if (tsc.status !== 0) process.exit(tsc.status ?? 1);
