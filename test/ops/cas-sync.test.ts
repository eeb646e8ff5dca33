/**
 * How the store makes a batch of blobs durable before an apply overwrites
 * the files they hold: one flush of the file system (`sync -f`, syncfs) for
 * a batch, an fsync per blob for a few, and the per-blob way whenever the
 * flush cannot be had. A `sync` on PATH that logs its calls shows which way
 * was taken; what a power cut leaves cannot be tested here.
 */
import { chmodSync, existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { Cas } from "../../src/store/cas.js";
import { tempNameFor } from "../../src/sys/atomic.js";
import { tempDir, writeFiles } from "../helpers.js";

const PATH = process.env.PATH;
afterEach(() => {
  process.env.PATH = PATH;
});

/** A `sync` first on PATH that logs its arguments, then runs the real one (or fails, with `fail`). */
function loggingSync(fail = false): string {
  const dir = tempDir();
  const log = join(dir, "calls.log");
  writeFiles(dir, { "bin/sync": `#!/bin/sh\necho "$@" >> '${log}'\n${fail ? "exit 1" : 'PATH="$REAL_PATH" exec sync "$@"'}\n` });
  chmodSync(join(dir, "bin/sync"), 0o755);
  process.env.REAL_PATH = PATH;
  process.env.PATH = `${join(dir, "bin")}:${PATH}`;
  return log;
}

function writeBlobs(cas: Cas, n: number): string[] {
  return Array.from({ length: n }, (_, i) => cas.put(Buffer.from(`blob ${i} ${Math.random()}\n`), { sync: false }));
}

describe("making a batch of blobs durable", () => {
  it("a batch is one flush of the file system that holds the store", () => {
    const log = loggingSync();
    const cas = new Cas(join(tempDir(), "cas"));
    const shas = writeBlobs(cas, 40);
    cas.syncWritten();
    expect(readFileSync(log, "utf8")).toBe(`-f ${cas.dir}\n`);
    for (const sha of shas) expect(cas.status(sha)).toBe("ok");
    cas.syncWritten(); // nothing left to sync: no second flush
    expect(readFileSync(log, "utf8")).toBe(`-f ${cas.dir}\n`);
  });

  it("control: a few blobs are fsynced one by one, with no flush of the whole file system", () => {
    const log = loggingSync();
    const cas = new Cas(join(tempDir(), "cas"));
    writeBlobs(cas, 5);
    cas.syncWritten();
    expect(existsSync(log)).toBe(false);
  });

  it("a flush that fails falls back to an fsync per blob, and the blobs are all there", () => {
    const log = loggingSync(true);
    const cas = new Cas(join(tempDir(), "cas"));
    const shas = writeBlobs(cas, 40);
    expect(() => cas.syncWritten()).not.toThrow();
    expect(readFileSync(log, "utf8")).toBe(`-f ${cas.dir}\n`);
    for (const sha of shas) expect(cas.status(sha)).toBe("ok");
  });
});

describe("temp names", () => {
  it("differ call after call in one process, and name the file they stand for", () => {
    const names = new Set(Array.from({ length: 1000 }, () => tempNameFor("/x/dir/file.txt")));
    expect(names.size).toBe(1000);
    for (const n of names) expect(n).toMatch(/^\/x\/dir\/\.file\.txt\.unwind-[0-9a-z]+-[0-9a-z]+\.tmp$/);
  });
});
