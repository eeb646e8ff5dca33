/**
 * Entry point of the CLI bundle (dist/unwind.cjs). `bin/unwind` routes
 * `unwind hook` to the hook bundle before this file is even loaded; this
 * routes it there too, so `node dist/unwind.cjs hook ...` behaves the same.
 */
import { runCli } from "./program.js";
import type { EarlyStart } from "./early-start.js";

/** `early`: the `git status` of `unwind snapshot`, which bin/unwind starts before this bundle loads. */
export function main(argv: string[], early: EarlyStart | null = null): void {
  if (argv[0] === "hook") {
    const { runHook } = require("./hook.cjs") as typeof import("../hook/entry.js");
    void runHook(argv.slice(1)).then((code) => {
      process.exitCode = code;
    });
    return;
  }
  // Loaded only when there is an early start, so other commands pay nothing for it.
  const handoff = early ? (require("./early.js") as typeof import("./early.js")) : null;
  handoff?.adoptEarly(early);
  void runCli(argv)
    .then(async (code) => {
      await handoff?.abandonEarlySnapshot();
      return code;
    })
    .then((code) => {
      process.exitCode = code;
    });
}
