import { usage } from "../../domain/errors.js";
import type { Globals } from "../globals.js";
import type { Output } from "../render.js";

/**
 * `unwind mcp`: serves the MCP tools over stdio until the client hangs up
 * (src/mcp/server.ts). The server and the SDK are a bundle of their own
 * (dist/mcp.cjs, beside this one), loaded only here: in the command line's
 * bundle they would cost every other command ~15 ms of start-up. Prints
 * nothing itself: stdout belongs to the protocol.
 */
export async function mcp(globals: Globals): Promise<Output> {
  if (globals.json) throw usage("--json does not apply to unwind mcp", "its stdout carries the protocol: every tool result is the --json document");
  const { serve } = require("./mcp.cjs") as typeof import("../../mcp/server.js");
  await serve({ root: globals.root });
  return { json: null, human: "", exit: 0 };
}
