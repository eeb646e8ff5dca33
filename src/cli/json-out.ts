/**
 * The command line's `--json` output, written a part at a time. A dry
 * run's report of 100,000 paths is 62 MB of indented text: made whole by
 * `JSON.stringify` and then written, it and its bytes put the run's peak
 * at 405 MiB, against 225 with `-q` (docs/design.md, "Under 256 MiB"). The text is exactly `JSON.stringify(value, null,
 * indent)`'s; the outer two levels are laid out here, and each value
 * below them is `JSON.stringify`'s own, indented to where it stands.
 */

/** Levels laid out here; below them, each value is stringified whole (one small string, not one a key). */
const LAID_OUT = 2;
/** Text gathered before each write: small enough that its parts die young. */
const CHUNK = 64 * 1024;

/** `JSON.stringify(value, null, indent)`, in parts whose concatenation is that text. */
export function* jsonParts(value: unknown, indent: number): Generator<string> {
  const text = part(value, " ".repeat(indent), "", 0);
  if (text === undefined) return;
  yield* text;
}

/**
 * Writes `JSON.stringify(value, null, indent)` and a newline to `out`,
 * some 64 KiB at a time, waiting for `out` to drain whenever it asks: to a
 * pipe, Node queues what the reader has not taken yet, and without the
 * wait every part would be queued at once (346 MiB for that dry run into
 * a pipe, against 225 to a file).
 */
export async function writeJson(out: NodeJS.WritableStream, value: unknown, indent: number): Promise<void> {
  // Joined, not appended: a chunk grown by `+=` is a tree of its parts that lives until it is written.
  let parts: string[] = [];
  let length = 0;
  const flush = async (text: string) => {
    if (!out.write(text)) await new Promise<void>((resolve) => out.once("drain", resolve));
  };
  for (const p of jsonParts(value, indent)) {
    parts.push(p);
    length += p.length;
    if (length >= CHUNK) {
      await flush(parts.join(""));
      parts = [];
      length = 0;
    }
  }
  parts.push("\n");
  await flush(parts.join(""));
}

/** A plain object or array, which `JSON.stringify` lays out by its own keys (nothing of the value's own says how). */
function laidOut(v: unknown): v is Record<string, unknown> | unknown[] {
  if (v === null || typeof v !== "object" || typeof (v as { toJSON?: unknown }).toJSON === "function") return false;
  if (Array.isArray(v)) return true;
  const proto = Object.getPrototypeOf(v);
  return proto === Object.prototype || proto === null;
}

/** The parts of one value at `pad`, or undefined where `JSON.stringify` leaves it out (undefined, a function, a symbol). */
function part(v: unknown, gap: string, pad: string, depth: number): Iterable<string> | undefined {
  if (depth >= LAID_OUT || !laidOut(v)) {
    const s = JSON.stringify(v, null, gap) as string | undefined;
    if (s === undefined) return undefined;
    // A string value holds no raw newline (JSON escapes it): every newline is the layout's.
    return [gap && pad ? s.replaceAll("\n", `\n${pad}`) : s];
  }
  return container(v, gap, pad, depth);
}

function* container(v: Record<string, unknown> | unknown[], gap: string, pad: string, depth: number): Generator<string> {
  const inner = pad + gap;
  const open = Array.isArray(v) ? "[" : "{";
  const close = Array.isArray(v) ? "]" : "}";
  const colon = gap ? ": " : ":";
  let first = true;
  const lead = () => {
    const s = first ? (gap ? `${open}\n${inner}` : open) : gap ? `,\n${inner}` : ",";
    first = false;
    return s;
  };
  if (Array.isArray(v)) {
    for (const item of v) {
      yield lead();
      yield* part(item, gap, inner, depth + 1) ?? ["null"];
    }
  } else {
    for (const key of Object.keys(v)) {
      const p = part(v[key], gap, inner, depth + 1);
      if (p === undefined) continue;
      yield lead() + JSON.stringify(key) + colon;
      yield* p;
    }
  }
  yield first ? open + close : gap ? `\n${pad}${close}` : close;
}
