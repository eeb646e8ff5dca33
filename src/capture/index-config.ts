import { NO_CONVERSION_CONFIG } from "./disk-form.js";

/**
 * The configuration every git call on unwind's private index runs with.
 * The index must stay a plain, self-contained file: no shared index in the
 * user's git dir, no fsmonitor token that belongs to the real index. The
 * untracked cache is ours to keep: it spares re-reading every directory for
 * new files (git 2.39 uses it with --untracked-files=all only when the
 * config says "all" too). The user's "trust stat data, never look" settings
 * must not blind snapshots. No conversion: snapshots hold bytes as they
 * are on disk (src/capture/disk-form.ts).
 */
export const INDEX_CONFIG = [
  ...NO_CONVERSION_CONFIG,
  "-c",
  "core.splitIndex=false",
  "-c",
  "core.fsmonitor=false",
  "-c",
  "core.untrackedCache=true",
  "-c",
  "status.showUntrackedFiles=all",
  "-c",
  "core.ignoreStat=false",
];

/** `git status` as snapshots run it on the private index: everything that differs from it, untracked files one by one. */
export const STATUS_ARGS = [...INDEX_CONFIG, "status", "--porcelain=v1", "-z", "--untracked-files=all", "--no-renames", "--ignore-submodules=dirty"];
