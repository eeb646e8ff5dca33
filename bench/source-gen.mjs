// Reproducible, realistic-looking TypeScript source for the store benchmark:
// modules assembled from a vocabulary of words and statement templates by a
// seeded PRNG. Each file has its own small set of identifiers that it reuses
// (as real modules do), plus shared imports, types and prose comments, so it
// compresses roughly like real code rather than like repeated boilerplate.

import { prng } from "./lib.mjs";

const WORDS = (
  "account action adapter address agent alert amount anchor archive array asset audit author backup " +
  "balance batch binding block branch bucket buffer build bundle cache call capture change channel " +
  "check chunk client clock code column command commit config context count cursor data date delta " +
  "device digest entry error event export field file filter flag folder format frame graph group hash " +
  "handler header hook index input item job journal key label layer limit link list loader lock log " +
  "manifest message meta mode model module node offset option order output owner packet page parent " +
  "patch path payload peer plan policy pool port prefix profile project queue range reader receipt " +
  "record ref region remote report request resource result retry revision role root route rule runner " +
  "sample scope score segment session shard signal size slot snapshot source span stage state status " +
  "store stream summary table tag target task template tenant thread ticket timer token tool trace " +
  "tree trigger user value version view window worker writer"
).split(" ");
const VERBS = (
  "add apply build check clear collect compute create decode delete encode ensure fetch find flush " +
  "format get handle load lookup merge normalize open parse prepare read refresh register release " +
  "remove render resolve restore save schedule select send serialize set sort split start stop sync " +
  "track transform update validate verify watch write"
).split(" ");
const ADJ = "active cached current default empty final first last local max min next old pending previous raw remote stale total".split(" ");
const TYPES = ["string", "number", "boolean", "Date", "Buffer", "unknown", "string[]", "number[]", "Record<string, string>", "Map<string, number>", "Set<string>"];
const PROSE = (
  "the a this that every each one no when if unless before after while until because so then only also never always " +
  "returns keeps reads writes checks skips drops sorts merges holds takes gives finds moves counts stores loads " +
  "caller result entry value list file record state cache lock store path tree call session reader writer " +
  "is are was be must may can should will would first last next same other whole empty missing stale fresh"
).split(" ");

const cap = (s) => s[0].toUpperCase() + s.slice(1);

export function makeSource(seed, targetBytes) {
  const r = prng(seed);
  const noun = () => r.pick(WORDS);
  const camel = (...parts) => parts[0] + parts.slice(1).map(cap).join("");
  // This module's own identifiers, reused throughout.
  const types = Array.from({ length: r.int(3, 7) }, () => cap(camel(noun(), noun())));
  const fields = Array.from({ length: r.int(8, 16) }, () => (r() < 0.5 ? noun() : camel(r.pick(ADJ), noun())));
  const fns = Array.from({ length: r.int(6, 14) }, () => camel(r.pick(VERBS), noun(), ...(r() < 0.4 ? [noun()] : [])));
  const locals = Array.from({ length: r.int(8, 14) }, () => (r() < 0.6 ? noun() : camel(r.pick(ADJ), noun())));
  const consts = Array.from({ length: r.int(2, 5) }, () => `${r.pick(ADJ).toUpperCase()}_${noun().toUpperCase()}`);
  const imported = Array.from({ length: r.int(2, 6) }, () => ({
    names: Array.from({ length: r.int(1, 4) }, () => (r() < 0.5 ? cap(camel(noun(), noun())) : camel(r.pick(VERBS), noun()))),
    from: `${r.pick(["./", "../", "../../"])}${noun()}/${noun()}.js`,
  }));
  const allTypes = [...types, ...imported.flatMap((i) => i.names.filter((n) => /^[A-Z]/.test(n)))];
  const sentence = (min, max) => {
    const n = r.int(min, max);
    const ws = Array.from({ length: n }, () => (r() < 0.45 ? r.pick(PROSE) : r() < 0.6 ? noun() : r.pick(fields)));
    return cap(ws.join(" ")) + ".";
  };
  const comment = (ind) => {
    const lines = Array.from({ length: r.int(1, 3) }, () => sentence(5, 12));
    return r() < 0.5 ? lines.map((l) => `${ind}// ${l}`).join("\n") : `${ind}/**\n${lines.map((l) => `${ind} * ${l}`).join("\n")}\n${ind} */`;
  };
  const type = () => (r() < 0.35 ? r.pick(allTypes) : r.pick(TYPES));
  const num = () => (r() < 0.5 ? r.int(0, 10) : r.int(10, 100000));
  const str = () => `"${Array.from({ length: r.int(1, 4) }, () => (r() < 0.3 ? r.pick(VERBS) : noun())).join(r() < 0.5 ? " " : "-")}"`;
  const expr = (depth = 0) => {
    const k = r.int(0, depth > 1 ? 3 : 7);
    switch (k) {
      case 0:
        return r.pick(locals);
      case 1:
        return `${r.pick(locals)}.${r.pick(fields)}`;
      case 2:
        return String(num());
      case 3:
        return str();
      case 4:
        return `${r.pick(fns)}(${Array.from({ length: r.int(0, 3) }, () => expr(depth + 1)).join(", ")})`;
      case 5:
        return `${expr(depth + 1)} ${r.pick(["+", "-", "*", "===", "!==", "<", ">=", "&&", "||", "??"])} ${expr(depth + 1)}`;
      case 6:
        return `\`${noun()} \${${r.pick(locals)}} ${r.pick(PROSE)} \${${r.pick(locals)}.${r.pick(fields)}}\``;
      default:
        return `${r.pick(locals)}.${r.pick(["map", "filter", "find", "some"])}((${r.pick(["x", "e", "item", "entry"])}) => ${expr(depth + 1)})`;
    }
  };
  const stmt = (ind, depth) => {
    const k = r.int(0, depth > 2 ? 4 : 10);
    const v = r.pick(locals);
    switch (k) {
      case 0:
      case 1:
        return `${ind}const ${v} = ${expr()};`;
      case 2:
        return `${ind}${r.pick(locals)}.${r.pick(fields)} = ${expr()};`;
      case 3:
        return `${ind}${r.pick(fns)}(${expr()}, ${expr()});`;
      case 4:
        return `${ind}if (${expr()}) return ${expr()};`;
      case 5:
        return `${ind}if (${expr()}) {\n${block(ind + "  ", depth + 1)}\n${ind}}${r() < 0.3 ? ` else {\n${block(ind + "  ", depth + 1)}\n${ind}}` : ""}`;
      case 6:
        return `${ind}for (const ${v} of ${r.pick(locals)}.${r.pick(fields)}) {\n${block(ind + "  ", depth + 1)}\n${ind}}`;
      case 7:
        return `${ind}try {\n${block(ind + "  ", depth + 1)}\n${ind}} catch (e) {\n${ind}  throw new Error(\`${r.pick(VERBS)} ${noun()} failed: \${String(e)}\`);\n${ind}}`;
      case 8:
        return comment(ind);
      case 9:
        return `${ind}let ${v}: ${type()} = ${expr()};`;
      default:
        return `${ind}if (!${r.pick(locals)}) throw new Error(${str()});`;
    }
  };
  const block = (ind, depth) => Array.from({ length: r.int(1, depth > 1 ? 3 : 6) }, () => stmt(ind, depth)).join("\n");
  const param = () => `${r.pick(locals)}: ${type()}`;
  const decl = () => {
    const k = r.int(0, 9);
    const T = r.pick(types);
    switch (k) {
      case 0:
      case 1:
        return `${comment("")}\nexport interface ${T}${r() < 0.2 ? "<T>" : ""} {\n${Array.from({ length: r.int(2, 8) }, () => `  ${r() < 0.3 ? "readonly " : ""}${r.pick(fields)}${r() < 0.3 ? "?" : ""}: ${type()};`).join("\n")}\n}`;
      case 2:
        return `export type ${T} = ${Array.from({ length: r.int(2, 4) }, () => str()).join(" | ")};`;
      case 3:
        return `const ${r.pick(consts)} = ${r() < 0.5 ? num() : str()};`;
      case 4: {
        const m = r.pick(types);
        return `${comment("")}\nexport class ${m} {\n  private ${r.pick(fields)} = new Map<string, ${type()}>();\n\n  constructor(private readonly ${r.pick(locals)}: ${type()}) {}\n\n${Array.from({ length: r.int(1, 3) }, () => `  ${r.pick(fns)}(${param()}): ${type()} {\n${block("    ", 1)}\n    return ${expr()};\n  }`).join("\n\n")}\n}`;
      }
      default:
        return `${r() < 0.6 ? comment("") + "\n" : ""}${r() < 0.6 ? "export " : ""}${r() < 0.3 ? "async " : ""}function ${r.pick(fns)}(${Array.from({ length: r.int(0, 3) }, param).join(", ")}): ${type()} {\n${block("  ", 0)}\n  return ${expr()};\n}`;
    }
  };
  const parts = [];
  if (r() < 0.5) parts.push(comment(""));
  parts.push(imported.map((i) => `import ${r() < 0.2 ? "type " : ""}{ ${[...new Set(i.names)].join(", ")} } from "${i.from}";`).join("\n"));
  let size = parts.join("\n\n").length;
  while (size < targetBytes) {
    const d = decl();
    parts.push(d);
    size += d.length + 2;
  }
  let text = parts.join("\n\n") + "\n";
  // Cut at the first line end at or after the target (real files end mid-module too, while being edited).
  const cut = text.indexOf("\n", targetBytes - 1);
  if (cut > 0) text = text.slice(0, cut + 1);
  return text;
}
