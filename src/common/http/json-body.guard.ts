import { isUtf8 } from 'node:buffer';
import type { IncomingMessage } from 'node:http';
import type { Readable } from 'node:stream';
import { createBrotliDecompress, createGunzip, createInflate } from 'node:zlib';
import { type CanActivate, type ExecutionContext, Injectable, SetMetadata } from '@nestjs/common';
import { Reflector } from '@nestjs/core';
import express, { type Request, type RequestHandler, type Response } from 'express';
import multer from 'multer';
import { AppConfig } from '../../infra/config/app-config.js';
import { AppError } from '../errors/app-error.js';
import { assertUtf8Query } from '../validation/app-validation.pipe.js';
import { markMultipart } from '../validation/body-fields.js';
import { assertStorableStrings } from '../validation/storable-strings.js';
import { Base64FieldReader, NotAnObject } from './base64-field-reader.js';

/** The body limit of every route that does not say otherwise (BodyLimit). */
export const DEFAULT_BODY_LIMIT_BYTES = 100 * 1024;

/** Objects and arrays nested deeper than this are refused before the body is parsed (validation recurses). */
export const MAX_JSON_DEPTH = 64;

/**
 * The output chunk of the inflate streams of a large-body route. Each chunk is a round trip through the
 * threadpool and the event loop: with zlib's default (16 kB), a body that inflates to the 20 MB limit takes
 * 1,280 event-loop turns, which under load (a few ms to tens of ms each) delays its answer by seconds to
 * tens of seconds; 1 MB chunks take 20.
 */
const INFLATE_CHUNK_BYTES = 1024 * 1024;

/** Seconds a client refused for overload should wait. */
const OVERLOAD_RETRY_AFTER_S = 2;

const BODY_LIMIT = Symbol('body-limit');

/** A route that takes a bigger JSON body than DEFAULT_BODY_LIMIT_BYTES. */
export const BodyLimit = (bytes: number) => SetMetadata(BODY_LIMIT, bytes);

const IGNORED_BODY = Symbol('ignored-body');

/** A route that never reads its body, whatever it is (an upstream's callback: only its URL counts); it is dropped after the answer. */
export const IgnoresBody = () => SetMetadata(IGNORED_BODY, true);

const STREAMED_FIELD = Symbol('streamed-base64-field');
interface StreamedField {
  field: string;
  maxDecodedBytes: number;
}

/**
 * A route whose body may carry a large Base64 file in the top-level string `field`: a body bigger than
 * DEFAULT_BODY_LIMIT_BYTES, or compressed, is read with Base64FieldReader, which decodes the field as it
 * streams in (the parsed body holds DECODED_MARKER there, and the bytes under DECODED), so the text is
 * never held whole.
 */
export const StreamedBase64Field = (field: string, maxDecodedBytes: number) => SetMetadata(STREAMED_FIELD, { field, maxDecodedBytes } satisfies StreamedField);

const MULTIPART = Symbol('multipart-body');
interface MultipartSpec {
  /** The one file part's name; or, with `parts`, how the parts are named in messages. */
  file: string;
  maxFileBytes: number;
  /** Several file parts: each name and how many of it (OpenAI's image edits: `image`, `image[]`, `mask`). */
  parts?: { name: string; maxCount: number }[];
  /** The whole body's limit, with `parts`. */
  maxTotalBytes?: number;
}
/** Fields of a multipart body besides its file: their count and each one's size. */
const MULTIPART_FIELDS = { fields: 32, fieldSize: 64 * 1024 };

/**
 * A route that also takes multipart/form-data (OpenAI's SDKs send every create so), with at most one file,
 * in the part `file`: the text parts become the body (bracketed names as nested objects:
 * `input_reference[image_url]`), the file `req.file` (in memory, at most `maxFileBytes`).
 */
export const MultipartBody = (file: string, maxFileBytes: number) => SetMetadata(MULTIPART, { file, maxFileBytes } satisfies MultipartSpec);

/**
 * A route that takes multipart/form-data with several file parts (`parts`: each name and how many), each at
 * most `maxFileBytes`, the whole body at most `maxTotalBytes`: the files are `req.files` by part name.
 */
export const MultipartFiles = (parts: { name: string; maxCount: number }[], maxFileBytes: number, maxTotalBytes: number) =>
  SetMetadata(MULTIPART, { file: parts.map((p) => p.name).join(', '), parts, maxFileBytes, maxTotalBytes } satisfies MultipartSpec);

function formatBytes(bytes: number): string {
  return bytes >= 1024 * 1024 ? `${Math.round((bytes / (1024 * 1024)) * 10) / 10} MB` : `${Math.round(bytes / 1024)} kB`;
}

/**
 * Reads JSON bodies: a guard registered after ApiKeyGuard (so a caller without a valid key, or over its
 * rate limit, never makes the service read a body), before the pipes, with the route's limit (BodyLimit), and turns
 * every failure into an AppError: 413 for an oversized body, 415 for a non-JSON Content-Type, 400 for
 * malformed JSON (bytes that are not UTF-8 included) or JSON nested deeper than MAX_JSON_DEPTH, and 400
 * INVALID_PARAMETER for a string or key PostgreSQL could not store as sent (a lone surrogate, NUL; see
 * assertStorableStrings): every body of every route, with a DTO or not, is checked here, once. A missing
 * Content-Type is read as JSON, since the spec marks it optional, and so is a JSON object sent as
 * application/x-www-form-urlencoded (what `curl -d` sends by default).
 *
 * Large bodies (on routes whose limit is above the default) are admitted under BODY_INFLIGHT_MAX_BYTES:
 * the declared size is reserved before a byte is read and given back when the answer is sent, so a
 * burst of big images is answered 503 with Retry-After instead of exhausting memory or the database pool.
 */
@Injectable()
export class JsonBodyGuard implements CanActivate {
  private readonly parsers = new Map<number, RequestHandler>();
  private inflightBytes = 0;

  constructor(
    private readonly reflector: Reflector,
    private readonly config: AppConfig,
  ) {}

  /** A guard rather than an interceptor: no observable pipeline per request. It never refuses; a bad body throws. */
  async canActivate(context: ExecutionContext): Promise<boolean> {
    if (context.getType() === 'http') {
      const req = context.switchToHttp().getRequest<Request>();
      assertUtf8Query(req.originalUrl);
      const handler = context.getHandler();
      const multipart = this.reflector.get<MultipartSpec>(MULTIPART, handler);
      if (multipart && hasBody(req) && req.is('multipart/form-data')) {
        await this.readMultipart(req, context.switchToHttp().getResponse<Response>(), multipart);
        assertStorableStrings(req.body);
      } else if (hasBody(req) && !this.reflector.get<boolean>(IGNORED_BODY, handler)) {
        await this.read(req, context.switchToHttp().getResponse<Response>(), this.reflector.get<number>(BODY_LIMIT, handler) ?? DEFAULT_BODY_LIMIT_BYTES, this.reflector.get<StreamedField>(STREAMED_FIELD, handler));
        assertStorableStrings(req.body);
      }
    }
    return true;
  }

  private async read(req: Request, res: Response, limit: number, streamed?: StreamedField): Promise<void> {
    const contentType = req.headers['content-type'];
    // curl -d sends form-urlencoded by default; a JSON body under that type is read as JSON.
    const formType = contentType !== undefined && req.is('application/x-www-form-urlencoded') !== false;
    if (contentType !== undefined && !formType && !req.is(['application/json', 'application/*+json'])) {
      throw unsupportedType(contentType);
    }
    // JSON between systems is UTF-8 (RFC 8259 §8.1): a body declared in another encoding (UTF-16, UTF-32 …) is refused as
    // one in Latin-1 is, rather than read in it
    const charset = charsetOf(contentType);
    if (charset !== undefined && !UTF8_LABELS.has(charset)) throw toAppError(Object.assign(new Error('unsupported charset'), { type: 'charset.unsupported', charset }), limit);
    // another label of UTF-8 (`utf8`) is read as UTF-8: body-parser takes only `utf-…` names
    if (charset !== undefined && charset !== 'utf-8') req.headers['content-type'] = contentType!.replace(CHARSET_PARAM, '; charset=utf-8');
    if (limit > DEFAULT_BODY_LIMIT_BYTES) this.admit(req, res, limit);
    const declared = Number(req.headers['content-length']);
    // refused before a byte is read (body-parser would read it all first); settleUnreadBody deals with the rest
    if (declared > limit && identityEncoded(req)) throw toAppError(Object.assign(new Error('request entity too large'), { type: 'entity.too.large' }), limit);
    // A compressed body may inflate to the route's limit whatever its declared size: every route's is read
    // here, inflated in large chunks (body-parser's 16 kB ones take a trip through the thread pool each: a bomb
    // on image2video's 28 MB limit was 1,800 of them, and under load its answer came after 30 s). A large
    // identity body on a route with a streamed field is read here too, the field decoded as it streams in.
    if (!identityEncoded(req) || (streamed && !(declared <= DEFAULT_BODY_LIMIT_BYTES))) {
      await readStreamed(req, limit, streamed, formType ? contentType : undefined);
      return;
    }
    await new Promise<void>((resolve, reject) => {
      this.parserFor(limit)(req, res, (err?: unknown) => {
        if (!err) return resolve();
        reject(formType && (err as { type?: string }).type === 'entity.parse.failed' ? unsupportedType(contentType!) : toAppError(err, limit));
      });
    });
  }

  /** A multipart body, with multer (memory storage), every failure a 400 or 413 naming the part and the rule. */
  private async readMultipart(req: Request, res: Response, spec: MultipartSpec): Promise<void> {
    const limit = (spec.maxTotalBytes ?? spec.maxFileBytes) + MULTIPART_FIELDS.fields * MULTIPART_FIELDS.fieldSize;
    this.admit(req, res, limit);
    if (Number(req.headers['content-length']) > limit && identityEncoded(req)) throw toAppError(Object.assign(new Error('request entity too large'), { type: 'entity.too.large' }), limit);
    const files = spec.parts ? spec.parts.reduce((sum, p) => sum + p.maxCount, 0) : 1;
    const reader = multer({ storage: multer.memoryStorage(), limits: { fileSize: spec.maxFileBytes, files, ...MULTIPART_FIELDS } });
    const upload = spec.parts ? reader.fields(spec.parts) : reader.single(spec.file);
    await new Promise<void>((resolve, reject) => upload(req, res, (err?: unknown) => (err ? reject(multipartError(err, spec)) : resolve())));
    req.body ??= {};
    refuseReplacedText(req.body);
    markMultipart(req.body);
  }

  /** Reserves the body's declared size (the route's limit when it is not declared, or compressed) until the answer is sent. */
  private admit(req: Request, res: Response, limit: number): void {
    const declared = Number(req.headers['content-length']);
    if (Number.isFinite(declared) && declared > limit) return; // answered 413 without reading it
    // a compressed body may inflate to the route's limit: that is what it is held to
    const bytes = Number.isFinite(declared) && declared > 0 && identityEncoded(req) ? declared : limit;
    if (this.inflightBytes > 0 && this.inflightBytes + bytes > this.config.bodyInflightMaxBytes) {
      // the body is not read: settleUnreadBody drops it after the answer, or closes the connection
      throw new AppError('UNAVAILABLE', `The service is busy reading other large requests (${formatBytes(this.inflightBytes)} in flight); retry in ${OVERLOAD_RETRY_AFTER_S} s`, OVERLOAD_RETRY_AFTER_S);
    }
    this.inflightBytes += bytes;
    res.once('close', () => (this.inflightBytes -= bytes));
  }

  private parserFor(limit: number): RequestHandler {
    let parser = this.parsers.get(limit);
    if (!parser) {
      parser = express.json({ limit, strict: true, type: () => true, verify: checkRawBody });
      this.parsers.set(limit, parser);
    }
    return parser;
  }
}

/** The names of UTF-8 a client may declare (the WHATWG Encoding Standard's labels: some clients send `utf8`). */
const UTF8_LABELS = new Set(['utf-8', 'utf8', 'unicode-1-1-utf-8', 'unicode11utf8', 'unicode20utf8', 'x-unicode20utf8']);

/** A Content-Type's declared charset, lower case (quoted or not), if it declares one. */
function charsetOf(contentType: string | undefined): string | undefined {
  return CHARSET_PARAM.exec(contentType ?? '')?.[2]?.trim().toLowerCase();
}
const CHARSET_PARAM = /;\s*charset=("?)([^";]+)\1/i;

/**
 * The streamed counterpart of body-parser's json parser (same limits, charsets, encodings and errors):
 * reads `req`, inflated in chunks of up to INFLATE_CHUNK_BYTES, through Base64FieldReader (which decodes the
 * route's streamed field, if it has one, and refuses a body that is not a JSON object or array at its first
 * byte). On an error it stops reading and answers at once; what is left of the body is settleUnreadBody's
 * (dropped after the answer, or the connection closed with a linger), so a client sending 1 GB is not read
 * to its end first.
 */
async function readStreamed(req: Request, limit: number, streamed: StreamedField | undefined, formType?: string): Promise<void> {
  const charset = charsetOf(req.headers['content-type']) ?? 'utf-8';
  if (!UTF8_LABELS.has(charset)) throw toAppError(Object.assign(new Error('unsupported charset'), { type: 'charset.unsupported', charset }), limit);
  const encoding = (req.headers['content-encoding'] ?? 'identity').toLowerCase();
  const declared = encoding === 'identity' ? Number(req.headers['content-length']) : NaN;
  let stream: Readable = req;
  // a small route's body needs no 1 MB output buffer
  const chunkSize = Math.min(INFLATE_CHUNK_BYTES, Math.max(16 * 1024, limit + 1));
  switch (encoding) {
    case 'identity':
      break;
    case 'gzip':
    case 'x-gzip':
      stream = req.pipe(createGunzip({ chunkSize }));
      break;
    case 'deflate':
      stream = req.pipe(createInflate({ chunkSize }));
      break;
    case 'br':
      stream = req.pipe(createBrotliDecompress({ chunkSize }));
      break;
    default:
      throw toAppError(Object.assign(new Error('unsupported content encoding'), { type: 'encoding.unsupported', encoding }), limit);
  }
  const reader = new Base64FieldReader(streamed?.field ?? null, streamed?.maxDecodedBytes ?? 0, Number.isFinite(declared) ? declared : undefined);
  try {
    if (declared > limit) throw Object.assign(new Error('request entity too large'), { type: 'entity.too.large' });
    let received = 0;
    await consume(stream, (chunk) => {
      received += chunk.length;
      if (received > limit) throw Object.assign(new Error('request entity too large'), { type: 'entity.too.large' });
      reader.write(chunk);
    });
  } catch (err) {
    if (stream !== req) {
      req.unpipe();
      stream.on('error', () => undefined); // a late inflate error of the stream given up
      stream.destroy();
    }
    // the reader refuses a body that is not a JSON object or array from its first bytes
    if (err instanceof NotAnObject && !formType) throw new AppError('INVALID_REQUEST', `Request body must be a JSON object; it begins with ${JSON.stringify(err.first)}`);
    if (err instanceof SyntaxError) throw formType ? unsupportedType(formType) : new AppError('INVALID_REQUEST', `Request body is not valid JSON: ${jsonErrorDetail(err.message)}`);
    throw toAppError(err, limit);
  }
  const rest = reader.restBytes();
  if (nestingDepthExceeds(rest, MAX_JSON_DEPTH)) {
    throw new AppError('INVALID_REQUEST', `Request body is nested too deeply: at most ${MAX_JSON_DEPTH} levels of objects and arrays`);
  }
  // the Base64 field itself is checked byte by byte (a byte outside its alphabet makes it invalid)
  if (!isUtf8(rest)) throw toAppError(notUtf8(), limit);
  try {
    req.body = reader.finish();
  } catch (err) {
    if (formType) throw unsupportedType(formType);
    throw new AppError('INVALID_REQUEST', `Request body is not valid JSON: ${jsonErrorDetail((err as Error).message)}`);
  }
}

/**
 * The parser's words without the piece of the body V8 quotes after them (`Unexpected token 'S', "…" is not
 * valid JSON`): a body may hold secrets (a channel's credentials), and errors are answered and logged.
 */
export function jsonErrorDetail(message: string): string {
  return message.replace(/,\s*".*$/s, '').slice(0, 200);
}

/**
 * Gives each chunk of `stream` to `take` until the stream ends. A throw from `take` stops the reading, with
 * the stream paused, not destroyed (`for await` would destroy it: the request, whose socket then stays
 * paused with the client's bytes unread, and whose keep-alive connection is never read again).
 */
function consume(stream: Readable, take: (chunk: Buffer) => void): Promise<void> {
  return new Promise((resolve, reject) => {
    const settle = (err?: unknown) => {
      stream.off('data', onData).off('end', onEnd).off('error', settle).off('close', onClose);
      if (err) reject(err);
      else resolve();
    };
    const onData = (chunk: Buffer) => {
      try {
        take(chunk);
      } catch (err) {
        stream.pause();
        settle(err);
      }
    };
    const onEnd = () => settle();
    const onClose = () => settle(new Error('the request was closed before its end'));
    stream.on('data', onData).once('end', onEnd).once('error', settle).once('close', onClose);
  });
}

function identityEncoded(req: Request): boolean {
  return (req.headers['content-encoding'] ?? 'identity').toLowerCase() === 'identity';
}

/**
 * body-parser's verify hook, on the raw bytes before they are decoded and parsed: refuses a body nested
 * too deeply (before JSON.parse and the recursive validation after it see it), and a UTF-8 body whose
 * bytes are not UTF-8 (RFC 8259 requires it), which the decoder would otherwise turn into U+FFFD: the
 * caller would not find again the value it sent. A native check (simdutf).
 */
function checkRawBody(_req: IncomingMessage, _res: unknown, body: Buffer, encoding: string): void {
  if (nestingDepthExceeds(body, MAX_JSON_DEPTH)) {
    throw Object.assign(new Error(`Request body is nested too deeply: at most ${MAX_JSON_DEPTH} levels of objects and arrays`), { type: 'entity.too.deep' });
  }
  if (encoding.toLowerCase() === 'utf-8' && !isUtf8(body)) throw notUtf8();
}

/** The error both readers throw for a body that is not UTF-8 (toAppError words it). */
function notUtf8(): Error {
  return Object.assign(new Error('its bytes are not valid UTF-8; send JSON as UTF-8, or escape characters as \\uXXXX'), { type: 'entity.not.utf8' });
}

/**
 * Whether a JSON text nests objects and arrays deeper than `max`, counted on the raw bytes without
 * parsing: string contents (a 13 MB Base64 image among them) are skipped with native searches.
 */
export function nestingDepthExceeds(body: Buffer, max: number): boolean {
  let depth = 0;
  for (let i = 0; i < body.length; i++) {
    const c = body[i];
    if (c === 0x22) {
      // a string: jump to its closing quote (one not escaped by an odd run of backslashes)
      let end = i;
      for (;;) {
        end = body.indexOf(0x22, end + 1);
        if (end === -1) return false; // unterminated: JSON.parse reports it
        let backslashes = 0;
        while (body[end - 1 - backslashes] === 0x5c) backslashes++;
        if (backslashes % 2 === 0) break;
      }
      i = end;
    } else if (c === 0x5b || c === 0x7b) {
      if (++depth > max) return true;
    } else if (c === 0x5d || c === 0x7d) {
      depth--;
    }
  }
  return false;
}

function unsupportedType(contentType: string): AppError {
  return new AppError('UNSUPPORTED_MEDIA_TYPE', `Content-Type ${quoteHeader(contentType)} is not supported; send the body as application/json`);
}

/**
 * A header value quoted for a message: Node gives bytes 0x80–0xFF of a header (obs-text) as latin1
 * characters, and control characters may be there too, so anything but printable ASCII is written \xHH
 * (the byte received), and a long value is cut: the answer stays readable and says what was sent.
 */
function quoteHeader(value: string): string {
  return `"${value.slice(0, 100).replace(/[^\x20-\x7e]|["\\]/g, escapeChar)}"${value.length > 100 ? '…' : ''}`;
}

/** One character of a quoted header value, escaped: \" and \\, a byte as \xHH, anything wider (a lowercased byte) as \uHHHH. */
function escapeChar(c: string): string {
  if (c === '"' || c === '\\') return `\\${c}`;
  const code = c.charCodeAt(0);
  return code <= 0xff ? `\\x${code.toString(16).padStart(2, '0')}` : `\\u${code.toString(16).padStart(4, '0')}`;
}

/**
 * A text part with U+FFFD refused, as a JSON body's invalid bytes are (400 1200): busboy reads a part's bytes
 * that are not UTF-8 as U+FFFD, so a prompt of broken bytes would go upstream as replacement characters. The
 * character itself (EF BF BD) cannot be told from them once read; no prompt means it.
 */
function refuseReplacedText(value: unknown, path = ''): void {
  if (typeof value === 'string') {
    if (value.includes('\uFFFD')) throw new AppError('INVALID_REQUEST', `${path}: the part is not valid UTF-8 text (text parts are read as UTF-8; it holds bytes that are not, or U+FFFD)`);
  } else if (Array.isArray(value)) {
    value.forEach((item, i) => refuseReplacedText(item, `${path}[${i}]`));
  } else if (typeof value === 'object' && value !== null) {
    // multer nests a part named a[b] as {a: {b}}: named back as the part was
    for (const [name, item] of Object.entries(value)) refuseReplacedText(item, path ? `${path}[${name}]` : name);
  }
}

/** A multer or busboy failure as the caller's error. */
function multipartError(err: unknown, spec: MultipartSpec): AppError {
  if (err instanceof multer.MulterError) {
    switch (err.code) {
      case 'LIMIT_FILE_SIZE':
        return new AppError('PAYLOAD_TOO_LARGE', `${spec.parts ? (err.field ?? spec.file) : spec.file} must be at most ${formatBytes(spec.maxFileBytes)}${spec.parts ? ' a file' : ''}`);
      case 'LIMIT_UNEXPECTED_FILE':
      case 'LIMIT_FILE_COUNT':
        if (spec.parts) {
          const part = err.field ?? spec.parts[0].name;
          // `image[]` is the field `image` sent as an array (OpenAI's param names it so)
          // past a part's maxCount multer says LIMIT_UNEXPECTED_FILE with that part's name: too many, as the total past its limit is
          const tooMany = err.code === 'LIMIT_FILE_COUNT' || spec.parts.some((p) => p.name === err.field);
          const fault = { param: part.replace(/\[\]$/, ''), rule: tooMany ? ('too_many' as const) : ('value' as const) };
          return AppError.invalidParameter(`${part}: the file parts taken are ${spec.parts.map((p) => `${p.name} (at most ${p.maxCount})`).join(', ')}${err.field ? ` (not another ${err.field})` : ''}`, fault);
        }
        return new AppError('INVALID_PARAMETER', `${spec.file}: one file part, named ${spec.file}, is taken${err.field && err.field !== spec.file ? ` (not ${err.field})` : ''}`);
      default:
        return new AppError('INVALID_REQUEST', `Request body exceeds a multipart limit (${err.message}): at most ${MULTIPART_FIELDS.fields} text parts of ${formatBytes(MULTIPART_FIELDS.fieldSize)} each`);
    }
  }
  return new AppError('INVALID_REQUEST', `Request body is not valid multipart/form-data: ${(err as Error).message ?? 'unreadable'}`);
}

function hasBody(req: Request): boolean {
  return req.headers['transfer-encoding'] !== undefined || Number(req.headers['content-length'] ?? 0) > 0;
}

/** The kind of a body that is valid JSON but a scalar (`string`, `number`, `boolean`, `null`); undefined otherwise. */
function jsonScalarKind(body: unknown): string | undefined {
  if (typeof body !== 'string') return undefined;
  try {
    const value: unknown = JSON.parse(body);
    if (value === null) return 'null';
    return typeof value === 'object' ? undefined : typeof value;
  } catch {
    return undefined;
  }
}

function toAppError(err: unknown, limit: number): AppError {
  const type = (err as { type?: string }).type;
  switch (type) {
    case 'entity.too.large':
      return new AppError('PAYLOAD_TOO_LARGE', `Request body is larger than this route's limit of ${formatBytes(limit)}`);
    case 'charset.unsupported':
      return new AppError('UNSUPPORTED_MEDIA_TYPE', `unsupported charset ${quoteHeader(String((err as { charset?: unknown }).charset))}; send UTF-8 JSON`);
    case 'encoding.unsupported':
      return new AppError('UNSUPPORTED_MEDIA_TYPE', `unsupported content encoding ${quoteHeader(String((err as { encoding?: unknown }).encoding))}; send UTF-8 JSON`);
    case 'entity.parse.failed': {
      // body-parser's strict mode refuses valid JSON that is not an object or array (`null`, `"hi"`) in JSON.parse's words
      const scalar = jsonScalarKind((err as { body?: unknown }).body);
      if (scalar) return new AppError('INVALID_REQUEST', `Request body must be a JSON object, not a JSON ${scalar}`);
      return new AppError('INVALID_REQUEST', `Request body is not valid JSON: ${jsonErrorDetail((err as Error).message)}`);
    }
    case 'entity.too.deep':
      return new AppError('INVALID_REQUEST', (err as Error).message);
    case 'entity.not.utf8':
      return new AppError('INVALID_REQUEST', `Request body is not valid JSON: ${(err as Error).message}`);
    default:
      return new AppError('INVALID_REQUEST', `Request body could not be read: ${(err as Error).message ?? 'unknown error'}`);
  }
}
