import { Readable } from 'node:stream';
import { StreamableFile } from '@nestjs/common';

/** Input bytes per piece of Base64 output (a multiple of 3, so the pieces join into one valid text). */
const PIECE = 48 * 1024;

/**
 * A JSON answer with one large Base64 field (the expand reply echoes its image), written as a stream:
 * the JSON around it, then the bytes encoded piece by piece, so the 13 MB text never exists whole.
 * Byte for byte what JSON.stringify({ ...value, [field]: bytes.toString('base64') }) would give,
 * with the field last.
 */
export class Base64Json extends StreamableFile {
  constructor(value: object, field: string, bytes: Buffer) {
    const head = Buffer.from(`${JSON.stringify(value).slice(0, -1)}${Object.keys(value).length > 0 ? ',' : ''}${JSON.stringify(field)}:"`);
    const tail = Buffer.from('"}');
    const encodedLength = 4 * Math.ceil(bytes.length / 3);
    async function* pieces(): AsyncGenerator<Buffer> {
      yield head;
      for (let at = 0; at < bytes.length; at += PIECE) yield Buffer.from(bytes.toString('base64', at, Math.min(bytes.length, at + PIECE)), 'latin1');
      yield tail;
    }
    super(Readable.from(pieces(), { objectMode: false }), { type: 'application/json; charset=utf-8', length: head.length + encodedLength + tail.length });
  }
}
