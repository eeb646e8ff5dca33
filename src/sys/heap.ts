import { getHeapStatistics, setFlagsFromString } from "node:v8";
import { runInNewContext } from "node:vm";

/**
 * How the command line keeps its resident memory near what it holds live
 * (issue "Undo at the speed of git checkout": an undo of 10,000 paths under
 * 128 MiB). Two things of V8's, measured in docs/design.md ("Memory"):
 *
 * - The young generation doubles (to 16 MiB a semi-space, 48 MiB in all)
 *   whenever most of what it holds survives, and a plan's items all survive.
 *   Growth factor 1 keeps it at its first size; the few objects that live
 *   long are promoted a little sooner. The flag is read each time V8 would
 *   grow the space, so setting it after start-up works (a maximum size is
 *   fixed at start-up, and setting one here would do nothing).
 * - The old generation is collected when it has grown to about twice what
 *   was live at the last collection: a plan's and an apply's per-path
 *   garbage ride up to that limit, which at 100,000 paths is hundreds of
 *   MiB. `collectAsGrown` lets a long loop collect once the heap holds
 *   `SLACK` more than was live after the last collection: the slack stays
 *   the same at any size, and a collection (a quarter second with 250 MiB
 *   live) is paid per `SLACK` of garbage, not per so many paths.
 *
 * For the command line only: a library must not change its host's heap.
 */
let gc: (() => void) | null | undefined = null;

export function tightenHeap(): void {
  try {
    setFlagsFromString("--semi-space-growth-factor=1");
    setFlagsFromString("--expose-gc");
    gc = undefined; // fetched when first wanted: the context that hands it over costs ~6 ms
  } catch {
    gc = null; // a runtime without these flags: memory as V8 would have it, nothing else changes
  }
}

/** What may pile up before `collectAsGrown` collects it. */
const SLACK = 16 * 1024 * 1024;
/** The heap in use after the last collection made here. */
let live = 0;
/** Calls to `collectAsGrown` since it last looked at the heap. */
let calls = 0;

/**
 * Collects garbage when the heap has grown by `SLACK` since the last
 * collection; for a loop over many paths to call at each one (it looks at
 * the heap every 256th call, at a microsecond a look).
 */
export function collectAsGrown(): void {
  if (gc === null || ++calls < 256) return;
  calls = 0;
  collectIfGrown();
}

/** `collectAsGrown`'s look, now: a small command's heap never grew that much, and pays nothing. */
export function collectIfGrown(): void {
  if (gc !== null && getHeapStatistics().used_heap_size > live + SLACK) collectGarbage();
}

/** Collects garbage now, where `tightenHeap` made that possible. */
export function collectGarbage(): void {
  if (gc === undefined) {
    try {
      // `gc` is defined in contexts made after the flag: a new one hands it over.
      gc = runInNewContext("gc") as () => void;
    } catch {
      gc = null;
    }
  }
  if (!gc) return;
  gc();
  live = getHeapStatistics().used_heap_size;
}
