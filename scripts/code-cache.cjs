// Writes dist/<name>.cjs.v8cache for each bundle named on the command line:
// the sha256 of the bundle's bytes, then V8's code cache of it with every
// function compiled, not only the top level V8 compiles up front. bin/load.cjs
// reads it. Run by build.mjs, with Node's default flags.
//
// Every function: V8 compiles a function lazily, on its first call, and a
// cache made right after compiling holds only what was compiled by then, which
// measured no faster than no cache. `--no-lazy` compiles everything; it is set
// back before the cache is made because V8 stamps a cache with the flags in
// force when it is made and rejects it under others.
"use strict";
const { createHash } = require("node:crypto");
const { readFileSync, renameSync, writeFileSync } = require("node:fs");
const Module = require("node:module");
const { setFlagsFromString } = require("node:v8");
const { Script } = require("node:vm");
const { cacheFile } = require("../bin/load.cjs");

for (const name of process.argv.slice(2)) {
  const file = require.resolve(`../dist/${name}.cjs`);
  const source = readFileSync(file);
  setFlagsFromString("--no-lazy");
  const script = new Script(Module.wrap(source.toString("utf8")), { filename: file });
  setFlagsFromString("--lazy");
  const data = script.createCachedData();
  const check = new Script(Module.wrap(source.toString("utf8")), { filename: file, cachedData: data });
  if (check.cachedDataRejected) {
    console.error(`code cache of dist/${name}.cjs: V8 rejects it under the flags it was made for; not written`);
    continue;
  }
  const out = cacheFile(name);
  writeFileSync(`${out}.tmp`, Buffer.concat([createHash("sha256").update(source).digest(), data]));
  renameSync(`${out}.tmp`, out);
}
