/**
 * Entry point of the CLI bundle (dist/unwind.cjs). `bin/unwind` routes
 * `unwind hook` to the hook bundle before this file is even loaded; this
 * routes it there too, so `node dist/unwind.cjs hook ...` behaves the same.
 */
export function main(argv: string[]): void {
  if (argv[0] === "hook") {
    const { runHook } = require("./hook.cjs") as typeof import("../capture/hook-entry.js");
    void runHook(argv.slice(1)).then((code) => {
      process.exitCode = code;
    });
    return;
  }
  // Loaded (synchronously) only for `unwind snapshot`, so other commands pay nothing for it.
  const early = argv.includes("snapshot") ? (require("./early.js") as typeof import("./early.js")) : null;
  early?.startEarlySnapshot(argv);
  // Required here, not imported: commander and the command line initialise
  // after status is already running.
  const { runCli } = require("./program.js") as typeof import("./program.js");
  void runCli(argv)
    .then(async (code) => {
      await early?.abandonEarlySnapshot();
      return code;
    })
    .then((code) => {
      process.exitCode = code;
    });
}
