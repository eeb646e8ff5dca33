// Loads one of dist/'s bundles as `require` would, but compiled from the
// code cache the build wrote beside it (scripts/code-cache.cjs), where
// one fits: the bundle's every function compiled once at build time, so a
// short process does not compile them again on each start (docs/design.md
// "The code cache"). The cache is used only when its header names the exact
// bytes of the bundle (V8 itself checks only the source's length) and V8
// accepts it (same V8 version and flags); anything else compiles the bundle
// from source as `require` does. UNWIND_NO_CODE_CACHE=1 skips it.
"use strict";
const { createHash } = require("node:crypto");
const { readFileSync } = require("node:fs");
const Module = require("node:module");
const { dirname, join } = require("node:path");
const { Script } = require("node:vm");

const DIST = join(__dirname, "..", "dist");
const HEADER = 32; // sha256 of the bundle's bytes

/** What became of the cache on the last load, for tests: used, rejected (by V8), stale (another bundle's), absent, off. */
let lastCache = "absent";

/** The cache file of `dist/<name>.cjs`. */
function cacheFile(name) {
  return join(DIST, `${name}.cjs.v8cache`);
}

function loadBundle(name) {
  const file = join(DIST, `${name}.cjs`);
  if (process.env.UNWIND_NO_CODE_CACHE === "1") {
    lastCache = "off";
    return require(file);
  }
  if (require.cache[file]) return require.cache[file].exports;
  let cache;
  try {
    cache = readFileSync(cacheFile(name));
  } catch {
    lastCache = "absent";
    return require(file);
  }
  const source = readFileSync(file);
  if (cache.length <= HEADER || !createHash("sha256").update(source).digest().equals(cache.subarray(0, HEADER))) {
    lastCache = "stale";
    return require(file);
  }
  const script = new Script(Module.wrap(source.toString("utf8")), { filename: file, cachedData: cache.subarray(HEADER) });
  lastCache = script.cachedDataRejected ? "rejected" : "used";
  // The module as `require` makes it: in require.cache, its own require resolving from dist/.
  const m = new Module(file, module);
  m.filename = file;
  m.paths = Module._nodeModulePaths(DIST);
  require.cache[file] = m;
  const req = (id) => m.require(id);
  req.cache = require.cache;
  req.resolve = (id, o) => Module._resolveFilename(id, m, false, o);
  try {
    script.runInThisContext().call(m.exports, m.exports, req, m, file, dirname(file));
  } catch (e) {
    delete require.cache[file];
    throw e;
  }
  m.loaded = true;
  return m.exports;
}

module.exports = { loadBundle, cacheFile, HEADER, lastCacheUse: () => lastCache };
