// Preloaded into a measured command (`node -r bench/rss.cjs bin/unwind ...`):
// at exit, prints the process's peak resident set size to stderr, the one
// figure a wall-clock timer cannot give. Kilobytes, as getrusage(2) reports.
"use strict";
process.on("exit", () => {
  require("node:fs").writeSync(2, `\nunwind-bench-maxrss ${process.resourceUsage().maxRSS}\n`);
});
