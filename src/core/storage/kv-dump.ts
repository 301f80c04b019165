/**
 * A driver-neutral dump file of a KvStore (what the PostgreSQL driver's `backup()` writes), and its loader.
 *
 * Layout (all integers big-endian):
 *   magic    11 bytes  "SNTKVDUMP1\n"
 *   header   u32 length + UTF-8 JSON {format: 'sentinel-kv-dump', version: 1, driver, namespace?, createdAtMs, buckets}
 *   entries  repeated: u8 1, u16 bucket-name length, name (UTF-8), u32 key length, key (ordered-binary bytes),
 *                      u32 value length, value (msgpack bytes)
 *   trailer  u8 0, u32 entry count high word, u32 entry count low word
 * Entries come grouped by bucket, keys ascending. `buckets` lists every bucket (empty ones included).
 * A file without its trailer, or whose count differs, is rejected as truncated.
 */
import { createWriteStream, type WriteStream } from 'node:fs';
import { open, type FileHandle } from 'node:fs/promises';
import { once } from 'node:events';
import { unpack } from 'msgpackr';
import { AppError } from '../errors.js';
import { decodeKey } from './key-codec.js';
import type { BatchOp, KvStore } from './kv-store.js';

export const DUMP_MAGIC = 'SNTKVDUMP1\n';

export interface DumpHeader {
  format: 'sentinel-kv-dump';
  version: 1;
  driver: string;
  namespace?: string;
  createdAtMs: number;
  buckets: string[];
}

function u32(n: number): Buffer {
  const b = Buffer.alloc(4);
  b.writeUInt32BE(n);
  return b;
}

export class DumpWriter {
  private entries = 0;
  private bytes = 0;
  private constructor(private readonly out: WriteStream) {}

  static async create(path: string, header: DumpHeader): Promise<DumpWriter> {
    const out = createWriteStream(path, { flags: 'wx', mode: 0o600 });
    await once(out, 'open');
    const w = new DumpWriter(out);
    const json = Buffer.from(JSON.stringify(header));
    await w.write(Buffer.concat([Buffer.from(DUMP_MAGIC), u32(json.length), json]));
    return w;
  }

  private async write(chunk: Buffer): Promise<void> {
    this.bytes += chunk.length;
    if (!this.out.write(chunk)) await once(this.out, 'drain');
  }

  async entry(bucket: string, key: Buffer, value: Buffer): Promise<void> {
    const name = Buffer.from(bucket);
    const head = Buffer.alloc(3);
    head.writeUInt8(1, 0);
    head.writeUInt16BE(name.length, 1);
    this.entries++;
    await this.write(Buffer.concat([head, name, u32(key.length), key, u32(value.length), value]));
  }

  /** Writes the trailer, flushes, fsyncs and closes; resolves the file's size in bytes. */
  async finish(): Promise<number> {
    const trailer = Buffer.alloc(9);
    trailer.writeUInt8(0, 0);
    trailer.writeUInt32BE(Math.floor(this.entries / 2 ** 32), 1);
    trailer.writeUInt32BE(this.entries % 2 ** 32, 5);
    await this.write(trailer);
    await new Promise<void>((resolve, reject) => this.out.end((err?: Error | null) => (err ? reject(err) : resolve())));
    return this.bytes;
  }

  /** Closes without a trailer (the file is then rejected as truncated by the loader). */
  abort(): void {
    this.out.destroy();
  }
}

class FileReader {
  private pos = 0;
  constructor(private readonly fh: FileHandle) {}

  async read(n: number): Promise<Buffer> {
    const buf = Buffer.alloc(n);
    let got = 0;
    while (got < n) {
      const { bytesRead } = await this.fh.read(buf, got, n - got, this.pos + got);
      if (bytesRead === 0) throw new AppError('BAD_REQUEST', 'dump file is truncated');
      got += bytesRead;
    }
    this.pos += n;
    return buf;
  }
}

/**
 * Loads a dump into any KvStore (LMDB or PostgreSQL), in batches of `batchSize` entries. Existing keys are
 * overwritten; restore into a fresh store (new directory or namespace). Resolves the header and the entry count.
 */
export async function restoreDump(
  file: string,
  target: KvStore,
  batchSize = 1000,
): Promise<{ header: DumpHeader; entries: number }> {
  const fh = await open(file, 'r');
  try {
    const r = new FileReader(fh);
    if ((await r.read(DUMP_MAGIC.length)).toString() !== DUMP_MAGIC) {
      throw new AppError('BAD_REQUEST', 'not a sentinel kv dump file');
    }
    const header = JSON.parse((await r.read((await r.read(4)).readUInt32BE())).toString()) as DumpHeader;
    for (const name of header.buckets) target.bucket(name);
    let ops: BatchOp[] = [];
    let entries = 0;
    for (;;) {
      const tag = (await r.read(1)).readUInt8();
      if (tag === 0) break;
      const bucket = (await r.read((await r.read(2)).readUInt16BE())).toString();
      const key = decodeKey(await r.read((await r.read(4)).readUInt32BE()));
      const value: unknown = unpack(await r.read((await r.read(4)).readUInt32BE()));
      ops.push({ type: 'put', bucket, key, value });
      entries++;
      if (ops.length >= batchSize) {
        await target.batch(ops);
        ops = [];
      }
    }
    if (ops.length > 0) await target.batch(ops);
    const t = await r.read(8);
    const expected = t.readUInt32BE(0) * 2 ** 32 + t.readUInt32BE(4);
    if (expected !== entries) throw new AppError('BAD_REQUEST', 'dump file entry count mismatch');
    // make sure empty buckets exist on drivers that register buckets lazily
    await target.buckets();
    return { header, entries };
  } finally {
    await fh.close();
  }
}
