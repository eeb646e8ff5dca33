import { UnwindError, usage } from "../../domain/errors.js";
import type { Globals } from "../globals.js";
import type { Output } from "../render.js";

/**
 * `unwind ui`: serves the web app until Ctrl-C (src/ui/server.ts). The
 * server is a bundle of its own (dist/ui.cjs, beside this one), loaded only
 * here, so no other command (and never the hook) pays for it. The URL,
 * with its token, is the one line on stdout.
 */
export async function ui(globals: Globals, opts: { port?: number; open?: boolean }): Promise<Output> {
  if (globals.json) throw usage("--json does not apply to unwind ui", "it prints one line, its URL; the page's API answers with the --json documents");
  const { serveUi } = require("./ui.cjs") as typeof import("../../ui/server.js");
  await serveUi({
    root: globals.root,
    port: opts.port ?? 0,
    openBrowser: opts.open !== false,
    onUrl: (running) => {
      process.stdout.write(`${running.url}\n`);
      process.stderr.write("unwind ui: serving on 127.0.0.1 only; Ctrl-C stops it\n");
    },
  }).catch((e: unknown) => {
    // The server's bundle has its own copy of the error class: its refusals are still unwind's (exit 2 for a port in use).
    if (e instanceof Error && e.name === "UnwindError" && !(e instanceof UnwindError)) {
      const u = e as UnwindError;
      throw new UnwindError(u.code, u.message, { ...(u.hint === undefined ? {} : { hint: u.hint }), exit: u.exit });
    }
    throw e;
  });
  return { json: null, human: "", exit: 0 };
}
