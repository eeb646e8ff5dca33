// Bundles the CLI into dist/. Code splitting keeps `unwind hook` from loading
// commander and the command modules: the entry routes before importing them.
import { build } from "esbuild";

await build({
  entryPoints: { unwind: "src/cli/main.ts" },
  outdir: "dist",
  bundle: true,
  splitting: true,
  format: "esm",
  platform: "node",
  target: "node20",
  sourcemap: "linked",
  chunkNames: "chunks/[name]-[hash]",
  banner: {
    js: 'import { createRequire as __unwindCreateRequire } from "node:module"; const require = __unwindCreateRequire(import.meta.url);',
  },
  logLevel: "warning",
});
