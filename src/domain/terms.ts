/**
 * The library's messages name what to do in the command line's words
 * (`--force`, `--path P`, `unwind changes ... --patch`): most are read in a
 * terminal. An agent over MCP and a person in the web UI read the same
 * errors where no flag exists, so their servers say them in their own
 * words: an MCP tool and its arguments, a UI button or checkbox. One table
 * per place, each entry a phrase the library writes and what it means there.
 */

type Table = readonly (readonly [RegExp, string])[];

/** Whole phrases first (a command line to run), then single flags. */
const MCP: Table = [
  [/ \(--dry-run; undo_preview or restore_preview over MCP\)/g, " (undo_preview or restore_preview)"],
  [/unwind changes SCOPE --path P --patch/g, "the changes tool with paths: [P] and patch: true"],
  [/globs are relative to the current directory; list the paths with: unwind changes/g, "globs are relative to the work tree's root; the changes tool lists the paths"],
  [/unwind undo --session (\S+?)(,|$| )/g, "the undo tool with session: $1$2"],
  [/, unwind undo --run R/g, ", run by run (unwind undo --run R, on the command line)"],
  [/list them with: unwind (sessions|log|snapshots)\b/g, "the $1 tool lists them"],
  [/, or pass --any-worktree to write it here/g, " (over MCP, only a snapshot or receipt of this work tree)"],
  [/e\.g\. --hunk 2 or --hunk 1,3/g, "e.g. hunks: [2] or hunks: [1, 3]"],
  [/--path P\b/g, "paths: [P]"],
  [/without --hunk/g, "without hunks"],
  [/give the digest a dry run printed/g, 'give the "plan" digest the preview returned'],
  [/--dry-run\b/g, "the preview tool"],
  [/--expect\b/g, "plan"],
  [/--force\b/g, "force: true"],
  [/--merge\b/g, "merge: true"],
  [/--last\b/g, "last: true"],
  [/--hunk\b/g, "hunks"],
  [/--path\b/g, "paths"],
  [/--from-call\b/g, "fromCall"],
  [/--(session|call|task|snapshot|to|since|run|baseline)\b/g, "$1"],
];

/** The web UI: its buttons (Preview undo, Preview restore, Preview again, Apply this plan) and checkboxes (Force, Merge). */
const UI: Table = [
  [/ \(--dry-run; undo_preview or restore_preview over MCP\), check it, and apply with the new digest/g, " (Preview again), check it, and apply it"],
  [/unwind changes SCOPE --path P --patch/g, "the changes listed under the preview"],
  [/globs are relative to the current directory; list the paths with: unwind changes/g, "the change set lists the paths"],
  [/, or pass --any-worktree to write it here/g, " (the UI writes only this work tree's own)"],
  [/give the digest a dry run printed \(its first 12\+ hex digits\)/g, "preview it again (Preview undo or Preview restore) and apply that plan"],
  [/name one of --session, --call, --from-call, --task, --snapshot, --run or --baseline/g, "pick a session, call, task, run or snapshot in the timeline"],
  [/--dry-run\b/g, "a preview (Preview undo or Preview restore)"],
  [/--force\b/g, "the Force checkbox"],
  [/--merge\b/g, "the Merge checkbox"],
  [/--expect\b/g, "the plan"],
  [/--from-call\b/g, "fromCall"],
  [/--(session|call|task|snapshot|to|since|run|baseline|path)\b/g, "$1"],
];

/** `text`, a library message or hint, as it reads over MCP or in the web UI. */
export function inTermsOf(place: "mcp" | "ui", text: string): string {
  let out = text;
  for (const [from, to] of place === "mcp" ? MCP : UI) out = out.replace(from, to);
  return out;
}
