/**
 * Bytes kept for reuse within one operation, up to a budget: what a plan
 * read is not read again when it is applied, and a large restore never
 * holds every blob at once. Oldest first out; a single buffer over
 * `maxItem` (a quarter of the budget unless said) is never kept: it is read
 * again where needed.
 */
export class ByteCache {
  private readonly map = new Map<string, { data: Buffer; at: number }>();
  private bytes = 0;
  /**
   * Keys in the order they were set, each with the `at` it was set under
   * (one set again since, or deleted, no longer matches): the oldest goes
   * first. The map's own order would do, but every look at its first entry
   * walks past the slots its deletions left, until V8 rehashes it: 200,000
   * entries through a full cache took 2.8 s, a fifth of that at 100,000.
   */
  private keys: string[] = [];
  private ats: number[] = [];
  private head = 0;
  private clock = 0;

  /**
   * `perEntry`: what holding one entry costs besides its bytes (the key, the
   * Buffer object, the map's slot), counted against the budget. Without it,
   * 100,000 source files of 80 bytes "fit" a 32 MiB budget and hold 80 MiB.
   */
  constructor(
    readonly budget: number,
    readonly maxItem = budget / 4,
    readonly perEntry = 0,
  ) {}

  get(key: string): Buffer | undefined {
    return this.map.get(key)?.data;
  }

  has(key: string): boolean {
    return this.map.has(key);
  }

  set(key: string, data: Buffer): void {
    if (data.length > this.maxItem) return;
    this.delete(key);
    while (this.head < this.keys.length && this.bytes + data.length + (this.map.size + 1) * this.perEntry > this.budget) {
      const k = this.keys[this.head]!;
      const e = this.map.get(k);
      if (e !== undefined && e.at === this.ats[this.head]) {
        this.map.delete(k);
        this.bytes -= e.data.length;
      }
      this.keys[this.head++] = ""; // its key string goes with its entry, not when the order is next cut
    }
    // What is behind the head is let go once it is half the order (the keys of 300,000 entries, held, were 27 MB);
    // stale keys ahead of it (taken out, set again) once they outnumber the live ones.
    if (this.head > 1024 && this.head * 2 > this.keys.length) {
      this.keys = this.keys.slice(this.head);
      this.ats = this.ats.slice(this.head);
      this.head = 0;
    } else if (this.keys.length - this.head > 2 * this.map.size + 1024) {
      this.keys = [...this.map.keys()];
      this.ats = [...this.map.values()].map((e) => e.at);
      this.head = 0;
    }
    const at = ++this.clock;
    this.map.set(key, { data, at });
    this.keys.push(key);
    this.ats.push(at);
    this.bytes += data.length;
  }

  delete(key: string): void {
    const old = this.map.get(key);
    if (old === undefined) return;
    this.map.delete(key);
    this.bytes -= old.data.length;
  }

  /** Lets every entry go: for an operation past the last read the cache could serve. */
  clear(): void {
    this.map.clear();
    this.keys = [];
    this.ats = [];
    this.head = 0;
    this.bytes = 0;
  }

  /** Bytes held now. */
  get size(): number {
    return this.bytes;
  }
}

/**
 * What one operation may keep in memory for reuse: the bytes of files it
 * read while planning, and of blobs it will write. 10,000 source files fit
 * (so an apply reads nothing twice); 1,000 files of 5 MiB do not, and are
 * read as they are written.
 */
export const REUSE_BUDGET = 16 * 1024 * 1024;

/**
 * The largest buffer kept for reuse. Source files are far smaller; a few
 * large files would only push them out, and would be held (and garbage)
 * in memory for a reuse that saves a fraction of their write's time.
 */
export const REUSE_MAX_ITEM = 1024 * 1024;

/**
 * What an entry of the reuse cache costs besides its bytes, measured in a
 * heap snapshot of a 30,000-path undo: a key of 60-100 bytes, a Buffer
 * object of about 90 and its backing store's header, the map's slot.
 */
export const REUSE_PER_ENTRY = 256;
