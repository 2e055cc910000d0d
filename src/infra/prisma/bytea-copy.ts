import { type FileHandle, open, rm } from 'node:fs/promises';
import type pg from 'pg';
import { to as copyTo } from 'pg-copy-streams';

const SIGNATURE = Buffer.from('PGCOPY\n\xff\r\n\0', 'latin1');
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** The value's bytes gathered before one write: a few dozen of the socket's 64 kB chunks. */
const WRITE_BATCH_BYTES = 1 << 20;

/**
 * One bytea value, written to `file` as it arrives, read with `COPY … TO STDOUT (FORMAT binary)`:
 * PostgreSQL sends the stored bytes as they are. A plain SELECT sends bytea as text (hex, or Base64
 * through encode()), which the server encodes and this process decodes: for a 2.8 MB image that was
 * ~30 ms of CPU on both sides against ~10. (node-postgres' binary results pass through a UTF-8 string,
 * which would corrupt the bytes.) The value passes through in the socket's chunks, so no buffer of the
 * whole of it is held: a multi-megabyte buffer that outlives a few young-generation collections is what
 * makes V8 run full collections of the whole heap, one every couple of tasks.
 * The chunks are gathered up to WRITE_BATCH_BYTES and written with one writev: piping them through a
 * Transform into a WriteStream (one write per chunk) cost twice the CPU (measured on a 2.7 MB value:
 * 6-8 ms of the event loop and 4-6 ms of the thread pool, against 3-3.5 and 1.5-2).
 * COPY takes no parameters, so the key must be a UUID, checked here; table and columns are constants.
 * Answers the value's size, or null when there is no row or the value is NULL (the file is then absent).
 */
export async function copyByteaToFile(pool: pg.Pool, source: { table: string; column: string; key: string }, id: string, file: string): Promise<number | null> {
  if (!UUID.test(id)) throw new Error(`not a UUID: ${JSON.stringify(id).slice(0, 60)}`);
  const sql = `COPY (SELECT "${source.column}" FROM "${source.table}" WHERE "${source.key}" = '${id}'::uuid LIMIT 1) TO STDOUT (FORMAT binary)`;
  const client = await pool.connect();
  // A checked-out client has no 'error' listener of the pool's. When the server ends the connection just after
  // the copy (a shutdown's FATAL in the same packet as ReadyForQuery), pg emits that error on the client, not
  // the copy (which pg no longer counts as running), from inside pg-copy-streams' hand-back of the connection:
  // unheard, the emit threw there, the copy never ended, and this function (a task's step with it) waited
  // forever. Heard here, the copy ends as it should and the broken connection is discarded on release. An
  // error while the copy runs reaches the copy itself, through pg.
  let broken: Error | undefined;
  const onError = (err: Error) => (broken ??= err);
  client.on('error', onError);
  const value = new FirstFieldParser();
  let handle: FileHandle | undefined;
  try {
    handle = await open(file, 'w');
    let batch: Buffer[] = [];
    let batched = 0;
    for await (const chunk of client.query(copyTo(sql)) as AsyncIterable<Buffer>) {
      const part = value.feed(chunk);
      if (part.length === 0) continue;
      batch.push(part);
      batched += part.length;
      if (batched >= WRITE_BATCH_BYTES) {
        await handle.writev(batch);
        [batch, batched] = [[], 0];
      }
    }
    value.end();
    if (batch.length > 0) await handle.writev(batch);
    await handle.close();
    client.off('error', onError);
    client.release(broken);
  } catch (err) {
    client.off('error', onError);
    client.release(err as Error);
    await handle?.close().catch(() => undefined);
    await rm(file, { force: true });
    throw err;
  }
  if (value.size === null) await rm(file, { force: true });
  return value.size;
}

/** Picks the bytes of the first field of the first row out of a binary COPY, fed chunk by chunk. */
export class FirstFieldParser {
  /** The value's length once the header is read; null for no row or NULL. */
  size: number | null = null;
  /** The start of the stream, until the value's length is known (a few dozen bytes). */
  private head: Buffer | null = Buffer.alloc(0);
  private remaining = 0;

  /** The part of `chunk` that belongs to the value (often empty, often all of it). */
  feed(chunk: Buffer): Buffer {
    if (this.head) {
      this.head = Buffer.concat([this.head, chunk]);
      const start = valueStart(this.head);
      if (start === 'more') return EMPTY;
      chunk = start ? this.head.subarray(start.at) : EMPTY;
      this.size = start?.length ?? null;
      this.remaining = start?.length ?? 0;
      this.head = null;
    }
    if (this.remaining === 0 || chunk.length === 0) return EMPTY;
    const part = chunk.length <= this.remaining ? chunk : chunk.subarray(0, this.remaining);
    this.remaining -= part.length;
    return part;
  }

  /** Fails when the stream ended before the value did. */
  end(): void {
    if (this.head || this.remaining > 0) throw new Error('a binary COPY ended inside its value');
  }
}

const EMPTY = Buffer.alloc(0);

/** Where the first field's bytes start and how many there are; null for no row or NULL; 'more' to wait for more bytes. */
function valueStart(head: Buffer): { at: number; length: number } | null | 'more' {
  if (head.length < SIGNATURE.length + 8) return 'more';
  if (!head.subarray(0, SIGNATURE.length).equals(SIGNATURE)) throw new Error('not a binary COPY');
  const at = SIGNATURE.length + 8 + head.readUInt32BE(SIGNATURE.length + 4); // flags, then the header extension
  if (head.length < at + 2) return 'more';
  if (head.readInt16BE(at) === -1) return null; // the trailer: no row
  if (head.length < at + 6) return 'more';
  const length = head.readInt32BE(at + 2);
  return length < 0 ? null : { at: at + 6, length };
}
