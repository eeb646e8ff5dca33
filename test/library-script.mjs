// unwind as a library, used exactly as a user's script would: no CLI, only
// `import { open } from "unwind"` (the package's exports map -> dist/lib).
// Usage: node test/library-script.mjs <repo>
// Takes a snapshot, writes into the repo, restores the snapshot and prints
// one JSON line with what it saw.
import { existsSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { open } from "unwind";

const repo = process.argv[2];
if (!repo) {
  process.stderr.write("usage: node test/library-script.mjs <repo>\n");
  process.exit(2);
}

const u = await open({ root: repo });
const snap = await u.snapshot({ label: "library-script" });

writeFileSync(join(u.root, "created.txt"), "made by the script\n");
writeFileSync(join(u.root, "edited.txt"), "changed by the script\n");
const afterWrite = { created: existsSync(join(u.root, "created.txt")), edited: readFileSync(join(u.root, "edited.txt"), "utf8") };

const r = await u.restore(snap.id);

process.stdout.write(
  JSON.stringify({
    module: fileURLToPath(import.meta.resolve("unwind")),
    root: u.root,
    snapshot: snap.id,
    afterWrite,
    receipt: r.receipt,
    dryRun: r.dryRun,
    items: r.items.map((i) => [i.path, i.action, i.reason]),
    counts: r.counts,
  }) + "\n",
);
