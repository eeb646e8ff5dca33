/**
 * Bytes kept for reuse within one operation, up to a budget: what a plan
 * read is not read again when it is applied, and a large restore never
 * holds every blob at once. Oldest first out; a single buffer over a
 * quarter of the budget is never kept (it is read again where needed).
 */
export class ByteCache {
  private readonly map = new Map<string, Buffer>();
  private bytes = 0;

  constructor(readonly budget: number) {}

  get(key: string): Buffer | undefined {
    return this.map.get(key);
  }

  has(key: string): boolean {
    return this.map.has(key);
  }

  set(key: string, data: Buffer): void {
    if (data.length > this.budget / 4) return;
    this.delete(key);
    for (const [k, v] of this.map) {
      if (this.bytes + data.length <= this.budget) break;
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
export const REUSE_BUDGET = 32 * 1024 * 1024;
