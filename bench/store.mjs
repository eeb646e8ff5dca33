// Benchmark: store bytes. 1,000 source files (varied TypeScript-like content,
// 1-20 KB, reproducible from a fixed seed) are captured through the real
// path, one `unwind hook claude` Write PreToolUse per file (the file exists,
// so its pre state goes into the CAS); then the store's cas/ and journal/
// are summed (file sizes, i.e. apparent bytes) against the files' raw total.
//
//   (cas + journal) / raw bytes                       target <= 0.5x

import { spawn } from "node:child_process";
import { existsSync, mkdirSync, readdirSync, readFileSync, statSync, writeFileSync } from "node:fs";
import os from "node:os";
import { join } from "node:path";
import { deflateSync } from "node:zlib";
import { BASE_ENV, GIT, ROOT, UNWIND, dirBytes, fmtBytes, gitConfig, intEnv, prng, run, standalone, tempDir, verdict } from "./lib.mjs";
import { makeSource } from "./source-gen.mjs";

const COUNT = intEnv("BENCH_STORE_FILES", 1000);
const TARGET_RATIO = 0.5;
const MIN_BYTES = 1024;
const MAX_BYTES = 20 * 1024 - 256; // a file ends at the first line end after its target size

/** Runs `node bin/unwind hook claude` with `input` on stdin; resolves when it exits 0. */
function hook(cwd, input) {
  return new Promise((resolve, reject) => {
    const child = spawn("node", [UNWIND, "hook", "claude"], { cwd, env: BASE_ENV, stdio: ["pipe", "ignore", "pipe"] });
    let err = "";
    child.stderr.on("data", (b) => (err += b));
    child.on("error", reject);
    child.on("close", (code) => (code === 0 ? resolve() : reject(new Error(`unwind hook exited ${code}: ${err.trim()}`))));
    child.stdin.end(input);
  });
}

/** Like the Source directory mix of a mid-size TypeScript project. */
function layout(i, r) {
  const top = r.pick(["src", "src", "src", "test", "packages/core/src", "packages/web/src"]);
  const sub = r.pick(["api", "cli", "core", "db", "lib", "model", "server", "ui", "util", "worker"]);
  return `${top}/${sub}/m${String(i).padStart(4, "0")}.ts`;
}

/** Per-file deflate ratio of this repository's own src/**\/*.ts, for comparison with the generated corpus. */
function referenceRatio() {
  let raw = 0;
  let z = 0;
  const walk = (d) => {
    for (const e of readdirSync(d, { withFileTypes: true })) {
      const p = join(d, e.name);
      if (e.isDirectory()) walk(p);
      else if (p.endsWith(".ts")) {
        const b = readFileSync(p);
        raw += b.length;
        z += deflateSync(b, { level: 6 }).length;
      }
    }
  };
  walk(join(ROOT, "src"));
  return raw ? z / raw : NaN;
}

export async function bench() {
  console.log("unwind store bytes benchmark");
  const repo = tempDir("store-repo");
  const r = prng(20240601);
  const files = [];
  let raw = 0;
  let genDeflate = 0;
  for (let i = 0; i < COUNT; i++) {
    // Log-uniform sizes between 1 and 20 KB: many small modules, a few large ones, as in real projects.
    const target = Math.round(MIN_BYTES * (MAX_BYTES / MIN_BYTES) ** r());
    const rel = layout(i, r);
    const text = makeSource(100_000 + i, target);
    mkdirSync(join(repo, rel, ".."), { recursive: true });
    writeFileSync(join(repo, rel), text);
    files.push(rel);
    raw += Buffer.byteLength(text);
    genDeflate += deflateSync(text, { level: 6 }).length;
  }
  run("git", ["init", "-q", "-b", "main"], { cwd: repo });
  gitConfig(repo);
  run("git", [...GIT, "add", "-A"], { cwd: repo });
  run("git", [...GIT, "commit", "-q", "-m", "initial"], { cwd: repo });
  const sizes = files.map((f) => statSync(join(repo, f)).size).sort((a, b) => a - b);
  console.log(`  files     ${COUNT} generated TypeScript-like files, ${fmtBytes(raw)} raw (min ${sizes[0]} B, median ${sizes[sizes.length >> 1]} B, max ${sizes.at(-1)} B)`);

  // Capture: one Write PreToolUse per file, as Claude Code sends it before overwriting the file.
  const fixture = JSON.parse(readFileSync(join(ROOT, "test", "fixtures", "hooks", "claude", "write.pre.json"), "utf8"));
  const session = "bench-store-0000-0000-000000000000";
  const transcript = join(tempDir("store-home"), `${session}.jsonl`);
  const payload = (rel, k, worker) =>
    JSON.stringify({
      ...fixture,
      session_id: `${session}-${worker}`,
      transcript_path: transcript,
      cwd: repo,
      tool_input: { file_path: join(repo, rel), content: `${readFileSync(join(repo, rel), "utf8")}// edited\n` },
      tool_use_id: `toolu_01store${String(k).padStart(10, "0")}`,
    });
  // Hooks of one agent run one at a time; here as many run at once as there are CPUs, only to save
  // wall time (the store lock serialises the captures themselves). Bytes do not depend on it.
  const parallel = Math.max(1, os.cpus().length);
  const t0 = performance.now();
  let next = 0;
  // Each call's pre, then its post, as the harness sends them (the file is left as it was, so the
  // post stores no new blob); one session per worker, so no call is left open for another to close.
  await Promise.all(
    Array.from({ length: parallel }, async (_, worker) => {
      while (next < files.length) {
        const k = next++;
        const pre = payload(files[k], k, worker);
        await hook(repo, pre);
        await hook(repo, pre.replace('"PreToolUse"', '"PostToolUse"'));
      }
    }),
  );
  const secs = (performance.now() - t0) / 1000;
  console.log(`  captured  ${COUNT} calls (Write PreToolUse and PostToolUse), ${parallel} at a time, in ${secs.toFixed(1)} s\n`);

  const store = join(repo, ".git", "unwind");
  if (existsSync(join(store, "errors.jsonl"))) throw new Error(`the hook logged capture errors:\n${readFileSync(join(store, "errors.jsonl"), "utf8")}`);
  const cas = dirBytes(join(store, "cas"));
  const journal = dirBytes(join(store, "journal"));
  const all = dirBytes(store);
  const lines = readdirSync(join(store, "journal")).flatMap((f) =>
    readFileSync(join(store, "journal", f), "utf8")
      .split("\n")
      .filter(Boolean),
  );
  if (lines.length !== 2 * COUNT) throw new Error(`expected ${2 * COUNT} journal records (a pre and a post a call), found ${lines.length}`);
  if (cas.files !== COUNT) throw new Error(`expected ${COUNT} blobs in the CAS, found ${cas.files}`);

  const row = (label, b, extra = "") =>
    console.log(`  ${label.padEnd(34)} ${fmtBytes(b.bytes).padStart(11)}  ${(b.bytes / raw).toFixed(3)}x raw   (on disk ${fmtBytes(b.allocated)}, ${b.files} files)${extra}`);
  console.log(`  ${"".padEnd(34)} ${"bytes".padStart(11)}`);
  console.log(`  ${`raw source (the ${COUNT} files)`.padEnd(34)} ${fmtBytes(raw).padStart(11)}`);
  row("store cas/", cas);
  row("store journal/", journal, `, ${Math.round(journal.bytes / lines.length)} B a record`);
  row("whole store (.git/unwind)", all);
  const ratio = (cas.bytes + journal.bytes) / raw;
  console.log("\n  target");
  console.log(`  (cas + journal) / raw              ${ratio.toFixed(3).padStart(6)}x  target <= ${TARGET_RATIO}x   ${verdict(ratio <= TARGET_RATIO)}`);
  console.log(`  (on disk, allocated blocks: (cas + journal) / raw = ${((cas.allocated + journal.allocated) / raw).toFixed(3)}x; one file per blob, so small blobs round up to a block)`);
  console.log(`  (for comparison: the same files deflated one by one at level 6 = ${(genDeflate / raw).toFixed(3)}x;`);
  console.log(`   this repository's own src/**/*.ts the same way = ${referenceRatio().toFixed(3)}x, so the corpus compresses like real code)`);
  console.log(`  (check: ${lines.length} journal records, ${cas.files} blobs; no capture errors)`);
}

await standalone(import.meta.url, bench);
