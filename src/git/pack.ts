import { createHash, randomBytes } from "node:crypto";
import { closeSync, fchmodSync, mkdirSync, openSync, readSync, renameSync, rmSync, statSync, writeSync } from "node:fs";
import { join } from "node:path";
import { crc32, deflateSync } from "node:zlib";
import { deflateOptions, type ObjectType } from "./objects.js";

const TYPE_CODE: Record<ObjectType, number> = { commit: 1, tree: 2, blob: 3 };
const CHUNK = 1 << 20;

/**
 * Writes many git objects as one pack (and its version 2 index) rather than
 * a loose file each: what `git add` does for a large change (bulk check-in).
 *
 * Why: a shell call that rewrote 10,000 files cost its post snapshot 10,000
 * loose objects, each a temp file created, written and renamed into a
 * fan-out directory: 4.7 s of a 5.9 s capture, 2.6 s of it in `open`
 * (`node --cpu-prof`, docs/design.md "A shell call over a whole
 * monorepo"). Here every object is appended to one temp file and the pack
 * appears under its name, index last, as git writes packs: git finds a
 * pack by its index, so a reader sees all of it or none.
 *
 * Objects are undeltified, each deflated at level 1 as loose objects are;
 * `git gc` deltifies them later. No object is looked up first: a copy of
 * one the repository has already holds the same bytes, and git reads
 * either.
 */
export class PackWriter {
  private fd: number | null = null;
  private readonly temp: string;
  private readonly buf = Buffer.allocUnsafe(CHUNK);
  private fill = 0;
  private offset = 0;
  private readonly oids: string[] = [];
  private readonly offsets: number[] = [];
  private readonly crcs: number[] = [];
  private readonly seen = new Set<string>();

  constructor(
    private readonly objectsDir: string,
    private readonly format: "sha1" | "sha256",
  ) {
    const dir = join(objectsDir, "pack");
    mkdirSync(dir, { recursive: true, mode: statSync(objectsDir).mode & 0o777 });
    this.temp = join(dir, `tmp_pack_unwind_${process.pid}_${randomBytes(4).toString("hex")}`);
    this.fd = openSync(this.temp, "wx+", 0o444);
    // The header, its count written at the end.
    this.put(Buffer.from([0x50, 0x41, 0x43, 0x4b, 0, 0, 0, 2, 0, 0, 0, 0]));
  }

  /** How many objects the pack holds so far. */
  get count(): number {
    return this.oids.length;
  }

  /** Adds one object; returns its id. */
  add(type: ObjectType, body: Buffer): string {
    const oid = createHash(this.format).update(`${type} ${body.length}\0`).update(body).digest("hex");
    if (this.seen.has(oid)) return oid;
    this.seen.add(oid);
    const head: number[] = [];
    let size = body.length;
    let byte = (TYPE_CODE[type] << 4) | (size & 15);
    size = Math.floor(size / 16);
    while (size > 0) {
      head.push(byte | 0x80);
      byte = size & 0x7f;
      size = Math.floor(size / 128);
    }
    head.push(byte);
    const header = Buffer.from(head);
    const data = deflateSync(body, deflateOptions(body.length));
    this.oids.push(oid);
    this.offsets.push(this.offset);
    this.crcs.push(crc32(data, crc32(header)));
    this.put(header);
    this.put(data);
    return oid;
  }

  /**
   * Puts the pack in place (nothing when it holds no object) and returns its
   * name; the objects are readable by git from then on.
   */
  finish(): string | null {
    const fd = this.fd!;
    try {
      this.flush();
      if (this.oids.length === 0) {
        this.abort();
        return null;
      }
      const count = Buffer.alloc(4);
      count.writeUInt32BE(this.oids.length);
      writeSync(fd, count, 0, 4, 8);
      // The trailer: the hash of everything before it, read back (the page cache has it).
      const h = createHash(this.format);
      for (let pos = 0; pos < this.offset; ) {
        const n = readSync(fd, this.buf, 0, Math.min(CHUNK, this.offset - pos), pos);
        if (n === 0) throw new Error("pack file shorter than written");
        h.update(this.buf.subarray(0, n));
        pos += n;
      }
      const sum = h.digest();
      writeSync(fd, sum, 0, sum.length, this.offset);
      const name = sum.toString("hex");
      const dir = join(this.objectsDir, "pack");
      const idxTemp = `${this.temp}.idx`;
      const ifd = openSync(idxTemp, "wx", 0o444);
      try {
        writeAll(ifd, this.index(sum));
        fchmodSync(ifd, 0o444);
      } finally {
        closeSync(ifd);
      }
      closeSync(fd);
      this.fd = null;
      renameSync(this.temp, join(dir, `pack-${name}.pack`));
      renameSync(idxTemp, join(dir, `pack-${name}.idx`));
      return name;
    } catch (e) {
      this.abort();
      throw e;
    }
  }

  /** Drops the pack under way (its temp files). */
  abort(): void {
    if (this.fd !== null) closeSync(this.fd);
    this.fd = null;
    rmSync(this.temp, { force: true });
    rmSync(`${this.temp}.idx`, { force: true });
  }

  /** The version 2 index: fan-out, sorted ids, CRC-32s, offsets (large ones in a table of their own), checksums. */
  private index(packSum: Buffer): Buffer {
    const n = this.oids.length;
    const order = [...this.oids.keys()].sort((a, b) => (this.oids[a]! < this.oids[b]! ? -1 : 1));
    const width = this.format === "sha256" ? 32 : 20;
    const large = order.filter((i) => this.offsets[i]! >= 0x80000000).length;
    const out = Buffer.alloc(8 + 1024 + n * (width + 8) + large * 8 + 2 * width);
    out.writeUInt32BE(0xff744f63, 0);
    out.writeUInt32BE(2, 4);
    const fan = new Uint32Array(256);
    for (const oid of this.oids) fan[Number.parseInt(oid.slice(0, 2), 16)]!++;
    let sum = 0;
    for (let b = 0; b < 256; b++) {
      sum += fan[b]!;
      out.writeUInt32BE(sum, 8 + b * 4);
    }
    let at = 8 + 1024;
    for (const i of order) at += out.write(this.oids[i]!, at, "hex");
    for (const i of order) at = out.writeUInt32BE(this.crcs[i]!, at);
    let big = 0;
    const bigAt = at + n * 4;
    for (const i of order) {
      const off = this.offsets[i]!;
      if (off < 0x80000000) at = out.writeUInt32BE(off, at);
      else {
        at = out.writeUInt32BE((0x80000000 | big) >>> 0, at);
        out.writeBigUInt64BE(BigInt(off), bigAt + big * 8);
        big++;
      }
    }
    at = bigAt + big * 8;
    at += packSum.copy(out, at);
    createHash(this.format).update(out.subarray(0, at)).digest().copy(out, at);
    return out;
  }

  private put(b: Buffer): void {
    this.offset += b.length;
    if (b.length >= CHUNK) {
      this.flush();
      writeAll(this.fd!, b);
      return;
    }
    if (this.fill + b.length > CHUNK) this.flush();
    b.copy(this.buf, this.fill);
    this.fill += b.length;
  }

  private flush(): void {
    if (this.fill > 0) writeAll(this.fd!, this.buf.subarray(0, this.fill));
    this.fill = 0;
  }
}

function writeAll(fd: number, b: Buffer): void {
  for (let done = 0; done < b.length; ) done += writeSync(fd, b, done, b.length - done);
}
