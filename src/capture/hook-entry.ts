/**
 * `unwind hook claude|codex|gemini`. Not built yet: the session journal
 * (hook adapters, content capture) is its own piece of work. Until then the
 * command says so and exits non-zero, and `unwind init` installs no hooks,
 * so no agent ever runs this.
 */
export async function runHook(args: string[]): Promise<number> {
  process.stderr.write(`unwind hook ${args[0] ?? ""}: not built yet (hook capture comes with the session journal)\n`);
  return 2;
}
