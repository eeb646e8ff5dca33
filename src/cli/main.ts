/**
 * Entry point. `unwind hook` is routed before anything heavy is imported:
 * the hook runs inside every tool call of an agent, so its start-up cost is
 * paid thousands of times a day. Everything else loads the full CLI.
 */
const argv = process.argv.slice(2);

if (argv[0] === "hook") {
  const { runHook } = await import("../capture/hook-entry.js");
  process.exitCode = await runHook(argv.slice(1));
} else {
  const { runCli } = await import("./program.js");
  process.exitCode = await runCli(argv);
}
