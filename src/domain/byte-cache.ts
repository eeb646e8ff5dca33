/**
 * Bytes kept for reuse within one operation, up to a budget: what a plan
 * read is not read again when it is applied, and a large restore never
 * holds every blob at once. Oldest first out; a single buffer over
 * `maxItem` (a quarter of the budget unless said) is never kept: it is read
 * again where needed.
 */
export class ByteCache {
  private readonly map = new Map<string, Buffer>();
  private bytes = 0;

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
    return this.map.get(key);
  }

  has(key: string): boolean {
    return this.map.has(key);
  }

  set(key: string, data: Buffer): void {
    if (data.length > this.maxItem) return;
    this.delete(key);
    for (const [k, v] of this.map) {
      if (this.bytes + data.length + (this.map.size + 1) * this.perEntry <= this.budget) break;
      this.map.delete(k);
      this.bytes -= v.length;
    }
    this.map.set(key, data);
    this.bytes += data.length;
  }

  delete(key: string): void {
    const old = this.map.get(key);
    if (old === undefined) return;
    this.map.delete(key);
    this.bytes -= old.length;
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
