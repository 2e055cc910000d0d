import { FirstFieldParser } from '../../src/infra/prisma/bytea-copy.js';

// PostgreSQL's binary COPY of one bytea column: signature, flags, header extension, rows, trailer.
function binaryCopy(value: Buffer | null | 'no row', extension = Buffer.alloc(0)): Buffer {
  const header = Buffer.concat([Buffer.from('PGCOPY\n\xff\r\n\0', 'latin1'), Buffer.alloc(4), u32(extension.length), extension]);
  const trailer = Buffer.from([0xff, 0xff]);
  if (value === 'no row') return Buffer.concat([header, trailer]);
  const field = value === null ? Buffer.from([0, 1, 0xff, 0xff, 0xff, 0xff]) : Buffer.concat([Buffer.from([0, 1]), u32(value.length), value]);
  return Buffer.concat([header, field, trailer]);
}

function u32(n: number): Buffer {
  const b = Buffer.alloc(4);
  b.writeUInt32BE(n);
  return b;
}

async function run(chunks: Buffer[]): Promise<{ size: number | null; out: Buffer }> {
  const parser = new FirstFieldParser();
  const parts = chunks.map((chunk) => parser.feed(chunk));
  parser.end();
  return { size: parser.size, out: Buffer.concat(parts) };
}

describe('FirstFieldParser (a binary COPY, parsed as it streams)', () => {
  const value = Buffer.from('the bytes of an image, and nothing around them');

  it('passes on exactly the value, wherever the chunks split the stream (header, length, value, trailer)', async () => {
    const copy = binaryCopy(value, Buffer.from('ext'));
    for (let a = 0; a <= copy.length; a++) {
      for (const b of [a, Math.min(copy.length, a + 1), Math.min(copy.length, a + 7)]) {
        const { size, out } = await run([copy.subarray(0, a), copy.subarray(a, b), copy.subarray(b)].filter((c) => c.length > 0));
        expect([size, out.toString()]).toEqual([value.length, value.toString()]);
      }
    }
  });

  it('passes on an empty value as empty, and answers null for NULL and for no row', async () => {
    expect(await run([binaryCopy(Buffer.alloc(0))])).toEqual({ size: 0, out: Buffer.alloc(0) });
    expect((await run([binaryCopy(null)])).size).toBeNull();
    expect((await run([binaryCopy('no row')])).size).toBeNull();
  });

  it('fails on a stream that is not a binary COPY, or ends inside the value', async () => {
    await expect(run([Buffer.from('not a binary copy at all, no')])).rejects.toThrow(/not a binary COPY/);
    const copy = binaryCopy(value);
    await expect(run([copy.subarray(0, copy.length - 10)])).rejects.toThrow(/ended inside its value/);
  });
});
