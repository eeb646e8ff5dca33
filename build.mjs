// Bundles the CLI into dist/. Two outputs:
// - dist/unwind.js (ESM, code-split): the command line; each command module
//   loads only when invoked.
// - dist/hook.cjs (one CommonJS file): `unwind hook`, which runs inside every
//   tool call of an agent. CommonJS because Node's ESM loader costs a
//   measurable share of a short process's life (see docs/design.md); its
//   tree-snapshot code and child_process load only for shell tools.
import { build } from "esbuild";
import { rmSync } from "node:fs";

// Stale chunks from earlier builds would pile up beside the new ones.
rmSync("dist", { recursive: true, force: true });

const common = { bundle: true, platform: "node", target: "node20", sourcemap: "linked", logLevel: "warning" };

await build({
  ...common,
  entryPoints: { unwind: "src/cli/main.ts" },
  outdir: "dist",
  splitting: true,
  format: "esm",
  chunkNames: "chunks/[name]-[hash]",
  external: ["./hook.cjs"],
  banner: {
    js: 'import { createRequire as __unwindCreateRequire } from "node:module"; const require = __unwindCreateRequire(import.meta.url);',
  },
});

await build({
  ...common,
  entryPoints: ["src/capture/hook-entry.ts"],
  outfile: "dist/hook.cjs",
  format: "cjs",
});
