import { randomBytes } from 'node:crypto';
import { Readable } from 'node:stream';
import { StreamableFile } from '@nestjs/common';

/** Input bytes per piece of Base64 output (a multiple of 3, so the pieces join into one valid text). */
const PIECE = 48 * 1024;
/** An answer of at most this many bytes is made whole and written at once (a stream's pieces cost more than they save). */
const WHOLE_MAX = 256 * 1024;

/** Bytes a JSON answer carries as a Base64 string (the expand reply's image, an OpenAI image's `b64_json`). */
export class Base64Bytes {
  constructor(readonly bytes: Buffer) {}
}


/**
 * A JSON answer with large Base64 fields, written as a stream: the JSON around them, then each one's bytes
 * encoded piece by piece, so their megabytes of text never exist whole and JSON.stringify never scans
 * them (it took about 45 ms for a 3 MB image on this project's machine); an answer of at most WHOLE_MAX
 * bytes is made whole instead, one buffer written at once. Byte for byte what JSON.stringify gives with
 * each Base64Bytes replaced by its bytes' Base64 text.
 */
export class Base64Json extends StreamableFile {
  constructor(value: unknown) {
    const fields: Buffer[] = [];
    // where each Base64Bytes stands in the small JSON text: a string no value holds (a NUL and a nonce)
    const nonce = randomBytes(8).toString('hex');
    const text = JSON.stringify(value, (_key, v: unknown) => (v instanceof Base64Bytes ? `\u0000${nonce}:${fields.push(v.bytes) - 1}` : v));
    const marker = new RegExp(`\\\\u0000${nonce}:(\\d+)`, 'g');
    const parts: (Buffer | number)[] = [];
    let from = 0;
    for (const match of text.matchAll(marker)) {
      parts.push(Buffer.from(text.slice(from, match.index)), Number(match[1]));
      from = match.index + match[0].length;
    }
    parts.push(Buffer.from(text.slice(from)));
    const length = parts.reduce<number>((sum, p) => sum + (typeof p === 'number' ? 4 * Math.ceil(fields[p].length / 3) : p.length), 0);
    const type = 'application/json; charset=utf-8';
    if (length <= WHOLE_MAX) {
      const whole = Buffer.allocUnsafe(length);
      let at = 0;
      for (const part of parts) at += typeof part === 'number' ? whole.write(fields[part].toString('base64'), at, 'latin1') : part.copy(whole, at);
      super(whole, { type, length });
      return;
    }
    async function* pieces(): AsyncGenerator<Buffer> {
      for (const part of parts) {
        if (typeof part !== 'number') yield part;
        // Base64's alphabet needs no JSON escape: the text is written as it is made
        else for (let at = 0, bytes = fields[part]; at < bytes.length; at += PIECE) yield Buffer.from(bytes.toString('base64', at, Math.min(bytes.length, at + PIECE)), 'latin1');
      }
    }
    super(Readable.from(pieces(), { objectMode: false }), { type, length });
  }
}
