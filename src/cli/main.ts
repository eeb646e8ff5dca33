/**
 * Entry point of the ESM bundle. `bin/unwind` routes `unwind hook` to the
 * CommonJS hook bundle before this file is even loaded; this file routes it
 * there too, so `node dist/unwind.js hook ...` behaves the same.
 */
import { createRequire } from "node:module";

const argv = process.argv.slice(2);

if (argv[0] === "hook") {
  const { runHook } = createRequire(import.meta.url)("./hook.cjs") as typeof import("../capture/hook-entry.js");
  process.exitCode = await runHook(argv.slice(1));
} else {
  const { runCli } = await import("./program.js");
  process.exitCode = await runCli(argv);
}
