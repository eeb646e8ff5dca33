import { watchStart, watchStatus, watchStop, type WatchReport } from "../../ops/watch.js";
import type { Globals } from "../globals.js";
import { paint, when, type Output } from "../render.js";
import { openFor } from "./common.js";

/**
 * `unwind watch start|stop|status`. The daemon is a bundle of its own
 * (dist/watch.cjs, beside this one), started as a detached process: the
 * command line and the hook never load it.
 */
export async function watch(globals: Globals, verb: "start" | "stop" | "status"): Promise<Output> {
  const ctx = (await openFor(globals)).context;
  if (verb === "start") {
    const r = await watchStart(ctx, require.resolve("./watch.cjs"));
    const head = r.started ? `watching ${r.root} (pid ${r.pid})` : `already watching ${r.root} (pid ${r.pid}, since ${when(r.since!)})`;
    return { json: r, human: r.started ? `${head}\nthe next snapshot scans everything once; later ones look only at what changed` : head, exit: 0 };
  }
  if (verb === "stop") {
    const r = await watchStop(ctx);
    return { json: r, human: r.stopped ? `stopped watching ${r.root} (pid ${r.pid})` : `no watcher was running for ${r.root}`, exit: 0 };
  }
  const r = await watchStatus(ctx);
  return { json: r, human: describe(r), exit: 0 };
}

function describe(r: WatchReport): string {
  const lines: string[] = [];
  if (!r.running) lines.push(`not watching ${r.root}`);
  else {
    lines.push(`watching ${r.root}`);
    lines.push(`  pid        ${r.pid}`);
    lines.push(`  since      ${when(r.since!)}`);
    lines.push(`  events     ${r.events} seen; ${r.pending} ${r.pending === 1 ? "path" : "paths"} changed since the last snapshot`);
    lines.push(`  vouches    ${r.canVouch ? paint("yes", "green") : `${paint("no", "yellow")}: the next snapshot scans everything${r.trouble ? ` (${r.trouble})` : ""}`}`);
  }
  if (r.lastSnapshot) {
    const why = r.lastSnapshot.reason ? ` (${r.lastSnapshot.reason})` : "";
    const how = { full: `a full scan${why}`, watched: "told by the watcher, no git status", pathspec: `told by the watcher, git status of the changed paths${why}` }[r.lastSnapshot.scan];
    lines.push(`  last snapshot ${when(r.lastSnapshot.at)}: ${how}`);
  }
  return lines.join("\n");
}
