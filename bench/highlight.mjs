// Which syntax highlighter the web app bundles (docs/ui.md): each
// candidate's minified bundle size with the languages the UI highlights,
// and the median time to highlight both sides of a 5,000-line diff (a
// TypeScript file of 5,000 lines before and after, every tenth line
// changed), as the app does it: whole texts, once per side.
//
//   node bench/highlight.mjs
//
// @speed-highlight/core is a devDependency (the app bundles it); the other
// two are not, so they are measured when present:
//   npm install --no-save prismjs@1.30.0 highlight.js@11.12.0
import { build } from "esbuild";
import { readFileSync } from "node:fs";
import { createRequire } from "node:module";

const require = createRequire(import.meta.url);
const REPS = Number(process.env.BENCH_REPS ?? 7);

const PRISM_LANGS = ["clike", "javascript", "typescript", "json", "css", "markup", "python", "bash", "yaml", "markdown", "go", "rust", "java", "c", "cpp", "diff"];
const HLJS_LANGS = ["javascript", "typescript", "json", "css", "xml", "python", "bash", "yaml", "markdown", "go", "rust", "java", "c", "cpp", "diff"];
const SPEED_LANGS = ["js", "ts", "json", "css", "html", "py", "bash", "yaml", "md", "go", "rs", "java", "c", "diff"];

const candidates = [
  {
    name: "prismjs",
    pkg: "prismjs",
    entry: `import Prism from "prismjs/components/prism-core";\n${PRISM_LANGS.map((l) => `import "prismjs/components/prism-${l}";`).join("\n")}\nglobalThis.out = Prism;`,
    load: async () => {
      globalThis.Prism = { manual: true, disableWorkerMessageHandler: true };
      const Prism = require("prismjs/components/prism-core");
      globalThis.Prism = Prism;
      for (const l of PRISM_LANGS) require(`prismjs/components/prism-${l}`);
      return (text) => Prism.highlight(text, Prism.languages.typescript, "typescript");
    },
  },
  {
    name: "highlight.js",
    pkg: "highlight.js",
    entry: `import hljs from "highlight.js/lib/core";\n${HLJS_LANGS.map((l, i) => `import l${i} from "highlight.js/lib/languages/${l}"; hljs.registerLanguage("${l}", l${i});`).join("\n")}\nglobalThis.out = hljs;`,
    load: async () => {
      const hljs = require("highlight.js/lib/core");
      for (const l of HLJS_LANGS) hljs.registerLanguage(l, require(`highlight.js/lib/languages/${l}`));
      return (text) => hljs.highlight(text, { language: "typescript" }).value;
    },
  },
  {
    name: "@speed-highlight/core",
    pkg: "@speed-highlight/core",
    entry: `import { highlightHTML } from "@speed-highlight/core";\n${SPEED_LANGS.map((l, i) => `import * as l${i} from "@speed-highlight/core/languages/${l}.js"; globalThis.l${i} = l${i};`).join("\n")}\nglobalThis.out = highlightHTML;`,
    load: async () => {
      const { highlightHTML } = await import("@speed-highlight/core");
      return (text) => highlightHTML(text, "ts");
    },
  },
];

function source(lines, changed) {
  const out = [];
  for (let i = 0; i < lines; i++) {
    const v = changed && i % 10 === 0 ? i * 7 : i;
    if (i % 25 === 0) out.push(`/** Block ${i}: a doc comment with \`code\` and a link to https://example.com/${i}. */`);
    else if (i % 5 === 0) out.push(`export function f${i}(a: number, b: string): Record<string, number> { return { [b]: a + ${v} }; }`);
    else out.push(`  const value${i}: Array<number> = [${v}, ${v + 1}, 0x${v.toString(16)}]; // "str ${i}" 'x' \${y}`);
  }
  return `${out.join("\n")}\n`;
}

const before = source(5000, false);
const after = source(5000, true);

const rows = [];
for (const c of candidates) {
  try {
    require.resolve(c.pkg);
  } catch {
    rows.push({ name: c.name, note: "not installed (see the header of this script)" });
    continue;
  }
  // Read from disk: not every package exports its package.json.
  const version = JSON.parse(readFileSync(new URL(`../node_modules/${c.pkg}/package.json`, import.meta.url), "utf8")).version;
  const bundled = await build({
    stdin: { contents: c.entry, resolveDir: process.cwd(), loader: "js" },
    bundle: true,
    minify: true,
    write: false,
    format: "iife",
    platform: "browser",
    logLevel: "silent",
  });
  const size = bundled.outputFiles[0].contents.length;
  const highlight = await c.load();
  await highlight(before); // warm-up
  const times = [];
  for (let r = 0; r < REPS; r++) {
    const t0 = performance.now();
    await highlight(before);
    await highlight(after);
    times.push(performance.now() - t0);
  }
  times.sort((a, b) => a - b);
  rows.push({ name: `${c.name}@${version}`, size, ms: times[Math.floor(times.length / 2)] });
}

console.log(`highlighting both sides of a 5,000-line TypeScript diff, median of ${REPS} (node ${process.version})`);
for (const r of rows) {
  if (r.note) console.log(`  ${r.name.padEnd(30)} ${r.note}`);
  else console.log(`  ${r.name.padEnd(30)} ${(r.size / 1024).toFixed(1).padStart(6)} KiB min  ${r.ms.toFixed(0).padStart(5)} ms`);
}
