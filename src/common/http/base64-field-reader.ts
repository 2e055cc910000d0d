import { OUTSIDE_BASE64 } from '../validation/validators.js';
/**
 * Reads a JSON object body in which one top-level string field carries a large Base64 file (an expand
 * image), decoding that field into bytes while the body streams in. The Base64 text is never held whole:
 * not as the raw body, not as a JS string, not as a parsed field. What remains of the JSON (every other
 * field, with a marker string in place of the decoded one) is small and parsed by JSON.parse as usual.
 *
 * The scanner follows JSON's strings and nesting only as far as it must to find the field: keys and
 * values at depth 1, string escapes (including \/ and \uXXXX, which some encoders use for '/' and '+').
 * A value that does not look like Base64 (a URL, a data: URI, anything with other characters) is left in
 * the JSON as it is, for the usual validation to judge.
 */

/** What the field holds after reading: the decoded bytes, and what the text said about them. */
export class DecodedBase64 {
  constructor(
    readonly bytes: Buffer,
    /** How many bytes the text decodes to (also when it was too large to keep: then `bytes` is empty). */
    readonly decodedLength: number,
    /** Why the text is not Base64, if it is not. */
    readonly problem?: string,
  ) {}
}

/** The string the field holds in the parsed body; the bytes are under the DECODED symbol of the body. */
export const DECODED_MARKER = 'mgw:decoded-base64';
export const DECODED = Symbol('decoded-base64');

export type BodyWithDecoded = Record<string, unknown> & { [DECODED]?: DecodedBase64 };

const QUOTE = 0x22;
/** The UTF-8 byte order mark. */
const BOM = [0xef, 0xbb, 0xbf];
const BACKSLASH = 0x5c;
/** Base64 text is decoded in runs of this many characters (a multiple of 4). */
const RUN = 64 * 1024;

/** 1 for the Base64 alphabets (standard and URL-safe), 2 for '=', 3 for whitespace, 0 for anything else. */
const CLASS = new Uint8Array(256);
for (const c of 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/-_') CLASS[c.charCodeAt(0)] = 1;
CLASS['='.charCodeAt(0)] = 2;
for (const c of ' \t\r\n') CLASS[c.charCodeAt(0)] = 3;


/** The index of the next quote or backslash in chunk from `from` on, or chunk.length. */
function nextSpecial(chunk: Buffer, from: number): number {
  const quote = chunk.indexOf(QUOTE, from);
  const backslash = chunk.indexOf(BACKSLASH, from);
  if (quote < 0) return backslash < 0 ? chunk.length : backslash;
  return backslash < 0 ? quote : Math.min(quote, backslash);
}

type Mode =
  | 'json' // outside strings
  | 'string' // inside a string that is not the field's value (copied to the rest)
  | 'key' // inside a key at depth 1 (copied, and remembered)
  | 'sniff' // at the start of the field's value: the first characters decide between Base64 and a plain string
  | 'base64'; // inside the field's value, decoding

export class Base64FieldReader {
  private mode: Mode = 'json';
  private depth = 0;
  /** Bytes written before the current chunk, and whether the top-level object or array has begun. */
  private offset = 0;
  private started = false;
  private expectKey = false;
  private escape = false;
  /** \uXXXX in progress: the hex digits seen so far. */
  private unicode: string | null = null;
  private keyBytes: number[] = [];
  private lastKey = '';
  private afterFieldKey = false;

  /** Everything but the field's Base64 text. */
  private rest: Buffer[] = [];
  private restLength = 0;
  /** The value's opening characters while sniffing (raw JSON bytes). */
  private sniffed: number[] = [];

  /** Base64 characters waiting to be decoded (always fewer than RUN). */
  private pending = Buffer.allocUnsafe(RUN);
  private pendingLength = 0;
  private chars = 0;
  private padding = 0;
  private problem?: string;
  private out = Buffer.alloc(0);
  private outLength = 0;
  private decoded?: DecodedBase64;

  constructor(
    /** null: no field is decoded (the body is only read, its shape checked from its first byte, and parsed). */
    private readonly field: string | null,
    private readonly maxDecodedBytes: number,
    /** The body's declared length, when known: the decoded bytes get room for all of it at once. */
    private readonly expectedBodyBytes?: number,
  ) {}

  /** Feeds the next chunk of the body. */
  write(chunk: Buffer): void {
    let copyFrom = 0; // start of the run of this chunk that goes to `rest`
    for (let i = 0; i < chunk.length; i++) {
      const c = chunk[i];
      switch (this.mode) {
        case 'json':
          if (this.depth === 0 && CLASS[c] !== 3) this.topLevel(c, i);
          if (c === QUOTE) {
            if (this.depth === 1 && this.expectKey) {
              this.mode = 'key';
              this.keyBytes = [];
            } else if (this.depth === 1 && this.afterFieldKey) {
              // the field's value starts: stop copying, sniff what it is
              this.pushRest(chunk, copyFrom, i);
              this.mode = 'sniff';
              this.sniffed = [QUOTE];
              copyFrom = i + 1;
            } else {
              this.mode = 'string';
            }
            this.afterFieldKey = false;
          } else if (c === 0x7b || c === 0x5b) {
            this.depth++;
            this.expectKey = this.depth === 1 && c === 0x7b;
            this.afterFieldKey = false;
          } else if (c === 0x7d || c === 0x5d) {
            this.depth--;
            this.afterFieldKey = false;
          } else if (c === 0x2c && this.depth === 1) {
            this.expectKey = true;
            this.afterFieldKey = false;
          } else if (c === 0x3a && this.depth === 1) {
            this.afterFieldKey = this.lastKey === this.field;
          } else if (CLASS[c] !== 3) {
            this.afterFieldKey = false;
          }
          break;
        case 'key':
          if (this.escape) {
            this.escape = false;
            this.keyBytes.push(c);
          } else if (c === BACKSLASH) {
            this.escape = true;
            this.keyBytes.push(c);
          } else if (c === QUOTE) {
            this.mode = 'json';
            this.expectKey = false;
            this.lastKey = keyText(this.keyBytes);
          } else if (this.keyBytes.length < 256) {
            this.keyBytes.push(c);
          }
          break;
        case 'string':
          if (this.escape) this.escape = false;
          else if (c === BACKSLASH) this.escape = true;
          else if (c === QUOTE) this.mode = 'json';
          else i = nextSpecial(chunk, i) - 1; // the string's plain run, skipped with one native search
          break;
        case 'sniff': {
          this.sniffed.push(c);
          copyFrom = i + 1;
          const verdict = this.sniff();
          if (verdict === 'plain') {
            // not Base64: the value goes to the rest as it is, and is read as a string
            this.pushRest(Buffer.from(this.sniffed));
            this.mode = 'string';
            this.escape = this.endsInOpenEscape();
            if (c === QUOTE && !this.escape && this.sniffed.length > 1 && !this.escapedQuote()) this.mode = 'json';
          } else if (verdict === 'base64') {
            this.mode = 'base64';
            this.startDecoding();
            for (const s of this.sniffed.slice(1)) this.base64Byte(s);
          }
          break;
        }
        case 'base64': {
          if (this.escape || this.unicode !== null || c === QUOTE || c === BACKSLASH) {
            this.base64Byte(c);
          } else {
            // the common case: a run of plain Base64 characters up to the next quote or backslash, checked
            // with one native search and copied in bulk
            const end = nextSpecial(chunk, i);
            if (this.padding === 0 && !OUTSIDE_BASE64.test(chunk.toString('latin1', i, end))) {
              this.base64Run(chunk, i, end);
            } else {
              for (let j = i; j < end; j++) this.base64Byte(chunk[j]);
            }
            i = end - 1;
          }
          copyFrom = i + 1;
          break;
        }
      }
    }
    if (this.mode !== 'sniff' && this.mode !== 'base64') this.pushRest(chunk, copyFrom, chunk.length);
    this.offset += chunk.length;
  }

  /**
   * A byte outside the top-level value: the body must be one object or array (as body-parser's strict mode
   * wants), so anything else is refused at once rather than after the whole body (a compressed body of
   * zeros inflates to the route's limit), with JSON.parse's words. A UTF-8 byte order mark may precede it.
   */
  private topLevel(c: number, i: number): void {
    const at = this.offset + i;
    if (!this.started && (c === 0x7b || c === 0x5b)) {
      this.started = true;
      return;
    }
    if (!this.started && at < 3 && c === BOM[at]) return;
    if (this.started) throw new SyntaxError(`Unexpected non-whitespace character after JSON at position ${at}`);
    if (scalarStartingWith(c)) throw new NotAnObject(String.fromCharCode(c));
    throw new SyntaxError(`Unexpected token ${JSON.stringify(String.fromCharCode(c))} at position ${at}: the body must be a JSON object`);
  }

  /** The parsed body: the field holds DECODED_MARKER, and the bytes are under DECODED. Throws SyntaxError like JSON.parse. */
  finish(): unknown {
    if (this.mode === 'sniff') this.pushRest(Buffer.from(this.sniffed)); // unterminated: JSON.parse reports it
    const text = Buffer.concat(this.rest, this.restLength).toString('utf8').replace(/^\uFEFF/, '');
    const body = JSON.parse(text) as unknown;
    if (this.decoded && this.field !== null && typeof body === 'object' && body !== null && !Array.isArray(body) && (body as Record<string, unknown>)[this.field] === DECODED_MARKER) {
      (body as BodyWithDecoded)[DECODED] = this.decoded;
    }
    return body;
  }

  /** The raw JSON left once the field's text is taken out (for checks that scan the body, such as nesting). */
  restBytes(): Buffer {
    return Buffer.concat(this.rest, this.restLength);
  }

  private pushRest(chunk: Buffer, from = 0, to = chunk.length): void {
    if (to <= from) return;
    const part = from === 0 && to === chunk.length ? chunk : chunk.subarray(from, to);
    this.rest.push(part);
    this.restLength += part.length;
  }

  /** Decides from the opening characters whether the value is Base64 text; undefined: not yet known. */
  private sniff(): 'base64' | 'plain' | undefined {
    const text = Buffer.from(this.sniffed.slice(1)).toString('latin1');
    const closed = this.sniffed.length > 1 && this.sniffed[this.sniffed.length - 1] === QUOTE && !this.escapedQuote();
    // URLs and data: URIs are plain strings for the usual validation (their first characters include ':')
    if (/^[a-z][a-z0-9+.-]*:/i.test(text) || /[^A-Za-z0-9+/=_\-\\ ]/.test(text.replace(/\\u[0-9a-fA-F]{0,4}|\\./g, ''))) return 'plain';
    if (closed) return 'plain'; // a short value: no need to stream it
    if (text.length >= 64) return 'base64';
    return undefined;
  }

  private escapedQuote(): boolean {
    let backslashes = 0;
    for (let i = this.sniffed.length - 2; i >= 1 && this.sniffed[i] === BACKSLASH; i--) backslashes++;
    return backslashes % 2 === 1;
  }

  private endsInOpenEscape(): boolean {
    let backslashes = 0;
    for (let i = this.sniffed.length - 1; i >= 1 && this.sniffed[i] === BACKSLASH; i--) backslashes++;
    return backslashes % 2 === 1;
  }

  private startDecoding(): void {
    const capacity = this.expectedBodyBytes ? Math.min(this.maxDecodedBytes, Math.ceil((this.expectedBodyBytes * 3) / 4)) : RUN;
    this.out = Buffer.allocUnsafe(Math.max(capacity, 1024));
    this.pushRest(Buffer.from(`"${DECODED_MARKER}`));
    this.pendingLength = 0;
    this.chars = 0;
    this.padding = 0;
    this.problem = undefined;
    this.outLength = 0;
    this.escape = false;
    this.unicode = null;
  }

  /** One raw byte of the field's JSON string. */
  private base64Byte(c: number): void {
    if (this.unicode !== null) {
      this.unicode += String.fromCharCode(c);
      if (this.unicode.length === 4) {
        const code = /^[0-9a-fA-F]{4}$/.test(this.unicode) ? parseInt(this.unicode, 16) : -1;
        this.unicode = null;
        if (code < 0 || code > 0xff) this.invalid('image must be Base64: it has an escape that is not a Base64 character');
        else this.base64Char(code);
      }
      return;
    }
    if (this.escape) {
      this.escape = false;
      switch (c) {
        case 0x2f: // \/
          this.base64Char(c);
          return;
        case 0x6e: // \n
        case 0x72: // \r
        case 0x74: // \t
          return;
        case 0x75: // \uXXXX
          this.unicode = '';
          return;
        default:
          this.invalid('image must be Base64: it has an escape that is not a Base64 character');
          return;
      }
    }
    if (c === BACKSLASH) {
      this.escape = true;
    } else if (c === QUOTE) {
      this.endOfValue();
    } else {
      this.base64Char(c);
    }
  }

  /** Base64 alphabet characters chunk[from..to), all checked. */
  private base64Run(chunk: Buffer, from: number, to: number): void {
    this.chars += to - from;
    while (from < to) {
      const n = Math.min(to - from, RUN - this.pendingLength);
      chunk.copy(this.pending, this.pendingLength, from, from + n);
      this.pendingLength += n;
      from += n;
      if (this.pendingLength === RUN) this.decodePending();
    }
  }

  private base64Char(c: number): void {
    switch (CLASS[c]) {
      case 1:
        if (this.padding > 0) return this.invalid('image must be Base64: "=" may only end it');
        this.chars++;
        this.pending[this.pendingLength++] = c;
        if (this.pendingLength === RUN) this.decodePending();
        return;
      case 2:
        this.padding++;
        if (this.padding > 2) this.invalid('image must be Base64: at most two "=" at its end');
        return;
      case 3:
        return; // whitespace inside Base64 is ignored
      default:
        this.invalid('image must be an http(s) URL or Base64 (standard or URL-safe alphabet) of a JPEG or PNG file');
    }
  }

  private invalid(problem: string): void {
    this.problem ??= problem;
  }

  private decodePending(): void {
    if (this.pendingLength === 0) return;
    const decodedLength = Math.floor((this.pendingLength * 3) / 4);
    if (this.outLength + decodedLength <= this.maxDecodedBytes && !this.problem) {
      if (this.out.length < this.outLength + decodedLength) {
        const grown = Buffer.allocUnsafe(Math.min(this.maxDecodedBytes, Math.max(this.out.length * 2, this.outLength + decodedLength)));
        this.out.copy(grown, 0, 0, this.outLength);
        this.out = grown;
      }
      this.outLength += this.out.write(this.pending.toString('latin1', 0, this.pendingLength), this.outLength, 'base64');
    } else {
      this.outLength += decodedLength; // too large (or invalid): count, keep nothing more
    }
    this.pendingLength = 0;
  }

  private endOfValue(): void {
    if (this.padding > 0 && (this.chars + this.padding) % 4 !== 0) this.invalid('image must be Base64: its length with "=" padding is not a multiple of 4');
    this.decodePending();
    const tooLarge = this.outLength > this.maxDecodedBytes;
    const keep = !this.problem && !tooLarge;
    // trailing partial characters (a length of 4k+1) decode to nothing, as Buffer.from does
    this.decoded = new DecodedBase64(keep ? this.out.subarray(0, this.outLength) : Buffer.alloc(0), this.outLength, this.problem);
    this.out = Buffer.alloc(0);
    this.pushRest(Buffer.from('"'));
    this.mode = 'json';
    this.afterFieldKey = false;
  }
}

function keyText(bytes: number[]): string {
  const raw = Buffer.from(bytes).toString('utf8');
  if (!raw.includes('\\')) return raw;
  try {
    return JSON.parse(`"${raw}"`) as string;
  } catch {
    return raw;
  }
}

/**
 * A body whose first byte begins a JSON value other than an object or array (`null`, `"hi"`, `42`, or what only
 * starts like one): refused at that byte, before the rest is read, so only the byte is known, not whether the
 * rest is valid JSON.
 */
export class NotAnObject extends SyntaxError {
  constructor(readonly first: string) {
    super(`the body must be a JSON object; it begins with ${JSON.stringify(first)}`);
  }
}

/** Whether a first byte begins a JSON scalar (a string, a number, true, false, null). */
function scalarStartingWith(c: number): boolean {
  return c === 0x22 || c === 0x2d || (c >= 0x30 && c <= 0x39) || c === 0x74 || c === 0x66 || c === 0x6e;
}
