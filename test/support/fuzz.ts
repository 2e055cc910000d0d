import { isUtf8 } from 'node:buffer';
import { brotliCompressSync, constants as zlibConstants, deflateSync, gzipSync } from 'node:zlib';
import fc from 'fast-check';
import { type Observed, sendRaw } from './raw-http.js';

/**
 * A black-box fuzzer for the HTTP surface, generated from the service's own OpenAPI document: every
 * operation gets hostile path and query values, bodies shaped by its schema and then broken (wrong
 * types, missing and extra fields, deep nesting, NUL and huge strings, odd Unicode, prototype keys),
 * valid bodies with a lone surrogate, NUL, U+FFFE/U+FFFF or raw invalid UTF-8 bytes in any string or
 * key, accepted bodies that reuse a caller's id (external_task_id) already taken, odd Content-Types and
 * Authorization headers, other methods and unknown routes; and framing
 * errors and header values with invalid UTF-8 or latin1 bytes are sent over a raw socket. Every answer
 * must be below 500, carry X-Request-Id, and (for errors) be the JSON envelope `{code, message,
 * request_id}` with request_id equal to that header, with no stack trace in it.
 */

export interface FuzzKeys {
  api: string;
  admin: string;
}

/**
 * One request. `unicode`: the operation (`POST /path`) it carried hostile Unicode to (isHostileUnicode), if
 * it did; `path` of a raw request: where it goes, when that is a route.
 */
export type FuzzCase =
  | { kind: 'http'; method: string; path: string; headers: Record<string, string>; body?: string | Buffer; note: string; unicode?: string; chunked?: boolean; reuse?: string }
  | { kind: 'raw'; bytes: Buffer; note: string; unicode?: string; path?: string };

export interface Violation {
  /** Position in the seeded sample, to replay it (FUZZ_FROM / FUZZ_TO). */
  index: number;
  case: string;
  problem: string;
  status: number;
  body: string;
}

/** How long one request took to be answered (or to fail). */
export interface Timing {
  index: number;
  ms: number;
  status: number;
  case: string;
}

export interface FuzzReport {
  sent: number;
  statuses: Record<string, number>;
  violations: Violation[];
  seed: number;
  /** Cases that carried a lone surrogate, NUL, U+FFFE/U+FFFF or invalid UTF-8 bytes, by operation (`POST /path`). */
  hostileUnicode: Record<string, number>;
  /** The slowest answers, slowest first. */
  slowest: Timing[];
  /** Answers to bodies that reused a caller's id, by operation and status (`POST /path 409`). */
  reusedIds: Record<string, number>;
}

interface Schema {
  type?: string | string[];
  properties?: Record<string, Schema>;
  required?: string[];
  items?: Schema;
  enum?: unknown[];
  example?: unknown;
  oneOf?: Schema[];
  allOf?: Schema[];
  anyOf?: Schema[];
  $ref?: string;
}

interface Operation {
  method: string;
  path: string;
  pathParams: string[];
  queryParams: string[];
  body?: Schema;
  /** The document's example bodies (Swagger UI's, each accepted as it is). */
  examples: unknown[];
}

/** The operations of an OpenAPI document, with their parameters and JSON body schema (refs resolved). */
export function operationsOf(doc: any): Operation[] {
  const resolve = (schema: Schema | undefined, depth = 0): Schema | undefined => {
    if (!schema || depth > 8) return schema;
    if (schema.$ref) return resolve(doc.components.schemas[schema.$ref.split('/').pop()!], depth + 1);
    const out: Schema = { ...schema };
    if (schema.properties) out.properties = Object.fromEntries(Object.entries(schema.properties).map(([k, v]) => [k, resolve(v, depth + 1)!]));
    if (schema.allOf) return { ...out, ...Object.assign({}, ...schema.allOf.map((s) => resolve(s, depth + 1))) };
    return out;
  };
  return Object.entries(doc.paths).flatMap(([path, ops]: [string, any]) =>
    Object.entries(ops).map(([method, op]: [string, any]) => ({
      method: method.toUpperCase(),
      path,
      pathParams: (op.parameters ?? []).filter((p: any) => p.in === 'path').map((p: any) => p.name),
      queryParams: (op.parameters ?? []).filter((p: any) => p.in === 'query').map((p: any) => p.name),
      body: resolve(op.requestBody?.content?.['application/json']?.schema),
      examples: Object.values(op.requestBody?.content?.['application/json']?.examples ?? {}).map((e: any) => e.value),
    })),
  );
}

const HOSTILE_STRINGS = [
  '',
  ' ',
  '\u0000',
  'a\u0000b',
  '..',
  '../../etc/passwd',
  '..%2f..%2fetc%2fpasswd',
  '%00',
  '%',
  '%zz',
  '\uFEFF',
  '\u202Eevil',
  '\uD800',
  '\uDFFF',
  '\uDE42\uD83D',
  '\uFFFE\uFFFF',
  'e\u0301',
  '🙂'.repeat(40),
  'null',
  'undefined',
  'NaN',
  '-1',
  '0', // Base64 of no bytes
  'AAAA', // Base64 of three zero bytes
  '1e309',
  '0x10',
  '{}',
  '[]',
  "'; DROP TABLE api_keys; --",
  '<script>alert(1)</script>',
  '${jndi:ldap://x/a}',
  'data:image/png;base64,iVBORw0KGgo=',
  'http://169.254.169.254/latest/meta-data/',
  'http://127.0.0.1:1/x.png',
  'file:///etc/passwd',
  'javascript:alert(1)',
  'https://',
  '__proto__',
  'constructor',
  '00000000-0000-0000-0000-000000000000',
];

/**
 * Code units that JSON carries but Unicode or PostgreSQL does not (lone surrogates, high and low; a pair
 * reversed; NUL) or that are odd (the noncharacters U+FFFE and U+FFFF). JSON.stringify writes a lone
 * surrogate as "\ud800" and NUL as "\u0000": exactly what a hostile client sends.
 */
const HOSTILE_UNITS = ['\uD800', '\uDBFF', '\uDC00', '\uDFFF', '\uDE42\uD83D', '\u0000', '\uFFFE', '\uFFFF'];

/** Stands for raw invalid UTF-8 bytes in a JSON text (a private-use character, replaced once the body is encoded). */
const RAW_BYTES_MARK = '\uE000';

/** Byte sequences that are not UTF-8: a surrogate encoded (CESU-8), an overlong "/", 0xFF, a lone continuation, a cut sequence, beyond U+10FFFF, a latin1 "é". */
const INVALID_UTF8 = [[0xed, 0xa0, 0x80], [0xc0, 0xaf], [0xff], [0x80], [0xe2, 0x82], [0xf4, 0x90, 0x80, 0x80], [0xe9]].map((b) => Buffer.from(b));

type Place = 'start' | 'middle' | 'end';

/** `text` with `unit` at its start, middle or end. */
function inject(text: string, unit: string, at: Place): string {
  const i = at === 'start' ? 0 : at === 'end' ? text.length : Math.floor(text.length / 2);
  return text.slice(0, i) + unit + text.slice(i);
}

const place = fc.constantFrom<Place>('start', 'middle', 'end');

/** Whether a string carries something the service must refuse or repair (what the fuzzer counts as hostile Unicode). */
function isHostileUnicode(text: string): boolean {
  return !text.isWellFormed() || /[\u0000\uFFFE\uFFFF\uE000]/.test(text);
}

/** Whether a body carries hostile Unicode: invalid UTF-8 bytes, or in its JSON text a lone surrogate or NUL escaped (JSON.stringify escapes nothing else of the kind). */
function bodyIsHostile(body: string | Buffer): boolean {
  const text = typeof body === 'string' ? body : isUtf8(body) ? body.toString('utf8') : null;
  return text === null || isHostileUnicode(text) || /\\u(?:d[89a-f][0-9a-f]{2}|0000)/i.test(text);
}

/** A short string with one hostile unit at its start, middle or end. */
const taintedString: fc.Arbitrary<string> = fc
  .tuple(fc.oneof(fc.constantFrom('', 'x', 'order-1', 'https://example.com/a.png', 'a song'), fc.string({ maxLength: 12 })), fc.constantFrom(...HOSTILE_UNITS), place)
  .map(([text, unit, at]) => inject(text, unit, at));

const hostileString: fc.Arbitrary<string> = fc.oneof(
  { weight: 4, arbitrary: fc.constantFrom(...HOSTILE_STRINGS) },
  { weight: 2, arbitrary: taintedString },
  { weight: 3, arbitrary: fc.string({ maxLength: 40 }) },
  { weight: 3, arbitrary: fc.string({ unit: 'binary', maxLength: 40 }) },
  { weight: 1, arbitrary: fc.constantFrom(255, 256, 257, 1024, 2048, 2049, 2501, 5001, 70_000).map((n) => 'x'.repeat(n)) },
  { weight: 1, arbitrary: fc.uuid() },
);

/** Arrays nested `depth` deep, as JSON text (JSON.stringify would itself recurse). */
function nested(depth: number, open = '[', close = ']'): string {
  return `${open.repeat(depth)}${close.repeat(depth)}`;
}

const hostileValue: fc.Arbitrary<unknown> = fc.oneof(
  { weight: 4, arbitrary: hostileString },
  { weight: 2, arbitrary: fc.integer() },
  { weight: 2, arbitrary: fc.constantFrom(0, -1, 1, 2, 2.0000001, 3, 9, 10, -0, 1e308, Number.MAX_SAFE_INTEGER + 2, 0.1 + 0.2) },
  { weight: 1, arbitrary: fc.double() },
  { weight: 2, arbitrary: fc.boolean() },
  { weight: 2, arbitrary: fc.constant(null) },
  { weight: 1, arbitrary: fc.array(fc.oneof(hostileString, fc.integer()), { maxLength: 4 }) },
  { weight: 1, arbitrary: fc.dictionary(hostileString, hostileString, { maxKeys: 3 }) },
  { weight: 1, arbitrary: fc.constant({ type: 'image', url: 'https://example.com/a.png' }) },
  { weight: 1, arbitrary: fc.constant({ __proto__: { polluted: true } }) },
);

/** A value that fits the schema (its example, an enum value or a plausible one). */
function plausible(schema: Schema | undefined): unknown {
  if (!schema) return 'x';
  if (schema.example !== undefined) return schema.example;
  if (schema.enum?.length) return schema.enum[0];
  if (schema.oneOf?.length) return plausible(schema.oneOf[0]);
  // OpenAPI 3.1 writes a nullable field's type as ["number", "null"]
  switch (Array.isArray(schema.type) ? schema.type.find((t) => t !== 'null') : schema.type) {
    case 'number':
    case 'integer':
      return 1;
    case 'boolean':
      return true;
    case 'array':
      return [plausible(schema.items)];
    case 'object':
      return Object.fromEntries(Object.entries(schema.properties ?? {}).map(([k, v]) => [k, plausible(v)]));
    default:
      return 'x';
  }
}

/**
 * Where a plausible body gets its hostile unit: one of its strings or keys (counted in the order JSON
 * writes them), or every string at once; and which unit (RAW_BYTES_MARK: raw invalid UTF-8), where in it.
 */
interface Taint {
  target: number | 'every string';
  unit: string;
  at: Place;
}

const taint: fc.Arbitrary<Taint> = fc.record({
  target: fc.oneof({ weight: 4, arbitrary: fc.nat(1000) }, { weight: 1, arbitrary: fc.constant('every string' as const) }),
  unit: fc.constantFrom(...HOSTILE_UNITS, RAW_BYTES_MARK),
  at: place,
});

/** `value` with `t.unit` in the string or key `t.target` names (modulo their number), or in every string. */
function tainted(value: unknown, t: Taint): unknown {
  const slots = countSlots(value);
  let slot = 0;
  const hit = (isKey: boolean) => (t.target === 'every string' ? !isKey : slot++ === t.target % slots);
  const walk = (v: unknown): unknown => {
    if (typeof v === 'string') return hit(false) ? inject(v, t.unit, t.at) : v;
    if (Array.isArray(v)) return v.map(walk);
    if (typeof v === 'object' && v !== null) return Object.fromEntries(Object.entries(v).map(([k, item]) => [hit(true) ? inject(k, t.unit, t.at) : k, walk(item)]));
    return v;
  };
  return walk(value);
}

/** How many strings and keys `value` holds (at least 1, so a modulo is defined). */
function countSlots(value: unknown): number {
  if (typeof value === 'string') return 1;
  if (Array.isArray(value)) return Math.max(1, value.reduce((n: number, v) => n + countSlots(v), 0));
  if (typeof value === 'object' && value !== null) return Math.max(1, Object.values(value).reduce((n: number, v) => n + 1 + countSlots(v), 0));
  return 1;
}

/** The JSON text of `value`, as bytes with `raw` (invalid UTF-8) wherever RAW_BYTES_MARK was. */
function withRawBytes(value: unknown, raw: Buffer): string | Buffer {
  const text = JSON.stringify(value);
  if (!text.includes(RAW_BYTES_MARK)) return text;
  return Buffer.concat(text.split(RAW_BYTES_MARK).flatMap((part, i) => (i === 0 ? [Buffer.from(part)] : [raw, Buffer.from(part)])));
}

/**
 * A body the route accepts (one of its document's examples, else the schema's plausible values) but for
 * hostile Unicode in one of its strings or keys (or in all its strings): a 500 here is a string that
 * reached the database unchecked. A route without a schema gets two fields of its own.
 */
function taintedBody(op: Operation): fc.Arbitrary<string | Buffer> {
  const bases = op.examples.length > 0 ? op.examples : [op.body?.properties ? plausible(op.body) : { note: 'x', list: ['y'] }];
  return fc.tuple(fc.constantFrom(...bases), taint, fc.constantFrom(...INVALID_UTF8)).map(([base, t, raw]) => withRawBytes(tainted(base, t), raw));
}

/** A body for `schema`: each field kept, dropped, or broken; sometimes extra fields; sometimes not an object at all. */
function bodyFor(schema: Schema | undefined): fc.Arbitrary<string | Buffer | undefined> {
  const fields = Object.entries(schema?.properties ?? {});
  const objectBody = fc
    .tuple(
      fc.array(fc.constantFrom('keep', 'keep', 'drop', 'break', 'deep'), { minLength: fields.length, maxLength: fields.length }),
      fc.array(hostileValue, { minLength: fields.length, maxLength: fields.length }),
      fc.dictionary(hostileString, hostileValue, { maxKeys: 2 }),
      fc.integer({ min: 2, max: 3000 }),
    )
    .map(([choices, values, extra, depth]) => {
      const parts: string[] = [];
      fields.forEach(([name, fieldSchema], i) => {
        const value = choices[i] === 'keep' ? plausible(fieldSchema) : values[i];
        if (choices[i] === 'drop') return;
        parts.push(`${JSON.stringify(name)}:${choices[i] === 'deep' ? nested(depth) : JSON.stringify(value) ?? 'null'}`);
      });
      for (const [k, v] of Object.entries(extra)) parts.push(`${JSON.stringify(k)}:${JSON.stringify(v) ?? 'null'}`);
      return `{${parts.join(',')}}`;
    });
  return fc.oneof(
    { weight: 12, arbitrary: objectBody },
    { weight: 1, arbitrary: fc.constant(undefined) },
    { weight: 1, arbitrary: fc.constantFrom('', '[]', '"s"', '1', 'null', 'true', '{"a":', '{"a":1}}', '\uFEFF{}', '{"__proto__":{"admin":true}}', '{"a":1,"a":2}', 'a=1&b=2', '{\'a\':1}') },
    { weight: 1, arbitrary: fc.integer({ min: 65, max: 5000 }).map((d) => nested(d, '{"a":', '}').replace(/\}+$/, (m) => `1${m}`)) },
    { weight: 1, arbitrary: fc.integer({ min: 65, max: 100_000 }).map((d) => nested(d)) },
    { weight: 1, arbitrary: fc.uint8Array({ maxLength: 64 }).map((bytes) => Buffer.from(bytes)) },
    { weight: 1, arbitrary: fc.constantFrom(100 * 1024 + 1, 300 * 1024).map((n) => `{"prompt":"${'p'.repeat(n)}"}`) },
  );
}

/**
 * The bytes of `value` as WTF-8 (UTF-8 that encodes a lone surrogate as its three bytes, ED A0 80 for
 * U+D800), what a client that does not check its strings sends.
 */
function wtf8(value: string): Buffer {
  const parts: Buffer[] = [];
  for (const char of value) {
    const c = char.charCodeAt(0);
    parts.push(char.length === 1 && c >= 0xd800 && c <= 0xdfff ? Buffer.from([0xe0 | (c >> 12), 0x80 | ((c >> 6) & 0x3f), 0x80 | (c & 0x3f)]) : Buffer.from(char));
  }
  return Buffer.concat(parts);
}

/**
 * Percent-encodes the UTF-8 bytes of `value` (a lone surrogate becomes U+FFFD, as a real client sends it).
 * `raw`: as a careless client would, escaping only what would break the request line, so `..`, `%` and `/`
 * go as they are, and a lone surrogate as its WTF-8 bytes (%ED%A0%80).
 */
function encodeSegment(value: string, raw: boolean): string {
  const keep = raw ? /[!-~]/ : /[A-Za-z0-9\-_.~]/;
  let out = '';
  for (const byte of raw ? wtf8(value) : Buffer.from(value, 'utf8')) {
    const c = String.fromCharCode(byte);
    out += byte < 0x80 && keep.test(c) && !(raw && (c === '#' || c === '?')) ? c : `%${byte.toString(16).toUpperCase().padStart(2, '0')}`;
  }
  return out;
}

/** The operation's path with plausible parameters: an owner's name, or an id (of nothing: the route answers 404 once the body is read). */
function plausiblePath(op: Operation): string {
  return op.path.replace(/\{([^}]+)\}/g, (_, name: string) => (name === 'owner' ? 'team-fuzz' : name === 'name' ? 'clip.wav' : '00000000-0000-0000-0000-000000000000'));
}

/**
 * The HTTP cases, and a sweep: one case with hostile Unicode (see isHostileUnicode) on each operation, so
 * that every operation gets one whatever the sample's size (a sample of a few thousand had reached every
 * operation only by chance).
 */
function httpArbitraries(doc: any, keys: FuzzKeys): { cases: fc.Arbitrary<FuzzCase>; sweep: fc.Arbitrary<FuzzCase[]> } {
  const operations = operationsOf(doc);
  const authorization = fc.oneof(
    { weight: 10, arbitrary: fc.constant(`Bearer ${keys.api}`) },
    { weight: 3, arbitrary: fc.constant(`Bearer ${keys.admin}`) },
    { weight: 2, arbitrary: fc.constant(undefined) },
    {
      weight: 3,
      arbitrary: fc.constantFrom(
        'Bearer',
        'Bearer ',
        `bearer ${keys.api}`,
        `Bearer  ${keys.api}  `,
        keys.api,
        `Basic ${Buffer.from('user:pass').toString('base64')}`,
        `Bearer ${keys.api.slice(0, -1)}x`,
        'Bearer mgw_short',
        `Bearer ${'a'.repeat(6000)}`,
        `Bearer ${keys.api}, Bearer ${keys.admin}`,
        'Token abc',
      ),
    },
  );
  const contentType = fc.constantFrom(
    undefined,
    'application/json',
    'application/json',
    'application/json; charset=utf-8',
    'application/json;charset=utf-8',
    'application/json; charset=latin1',
    'application/json; charset=utf-16',
    'application/x-www-form-urlencoded',
    'text/plain',
    'multipart/form-data; boundary=x',
    'application/vnd.api+json',
    '*/*',
    'garbage',
  );
  const requestId = fc.oneof({ weight: 6, arbitrary: fc.constant(undefined) }, { weight: 1, arbitrary: fc.constantFrom('ok-123', 'x'.repeat(300), 'a b', 'é', '-leading') });
  const method = (own: string) => fc.oneof({ weight: 8, arbitrary: fc.constant(own) }, { weight: 1, arbitrary: fc.constantFrom('GET', 'POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS', 'HEAD') });
  const caseOn = (op: Operation): fc.Arbitrary<FuzzCase> =>
    fc
      .record({
        method: method(op.method),
        params: fc.array(fc.tuple(fc.oneof({ weight: 3, arbitrary: hostileString }, { weight: 2, arbitrary: fc.uuid() }), fc.boolean()), { minLength: op.pathParams.length, maxLength: op.pathParams.length }),
        query: fc.array(fc.tuple(fc.oneof(fc.constantFrom(...(op.queryParams.length ? op.queryParams : ['q'])), hostileString), hostileString), { maxLength: 4 }),
        body: bodyFor(op.body),
        auth: authorization,
        type: contentType,
        requestId,
      })
      .map(({ method, params, query, body, auth, type, requestId }) => {
        let path = op.path;
        op.pathParams.forEach((name, i) => (path = path.replace(`{${name}}`, encodeSegment(params[i][0], params[i][1]))));
        const search = query.map(([k, v]) => `${encodeSegment(k, false)}=${encodeSegment(v, false)}`).join('&');
        const headers: Record<string, string> = {};
        if (auth !== undefined) headers.authorization = auth;
        if (type !== undefined && body !== undefined) headers['content-type'] = type;
        if (requestId !== undefined) headers['x-request-id'] = requestId;
        const withBody = method !== 'GET' && method !== 'HEAD' && body !== undefined;
        const note = `${op.method} ${op.path}`;
        const hostile = [...params.map(([p]) => p), ...query.flat()].some(isHostileUnicode) || (withBody && bodyIsHostile(body));
        return { kind: 'http' as const, method, path: search ? `${path}?${search}` : path, headers, body: withBody ? body : undefined, note, unicode: hostile ? note : undefined };
      });
  const onOperation = fc.constantFrom(...operations).chain(caseOn);
  // bodies with hostile Unicode sent as a well-behaved client would (its key, JSON): they reach validation and storage
  const bodyOperations = operations.filter((op) => ['POST', 'PUT', 'PATCH'].includes(op.method));
  const taintedOn = (op: Operation): fc.Arbitrary<FuzzCase> =>
    taintedBody(op).map(
      (body): FuzzCase => ({
        kind: 'http',
        method: op.method,
        path: plausiblePath(op),
        headers: { authorization: `Bearer ${op.path.startsWith('/admin/') ? keys.admin : keys.api}`, 'content-type': 'application/json' },
        body,
        note: `${op.method} ${op.path}`,
        unicode: `${op.method} ${op.path}`,
      }),
    );
  const taintedOperation = fc.constantFrom(...bodyOperations).chain(taintedOn);
  const unknownRoute = fc.record({ path: fc.array(hostileString, { minLength: 1, maxLength: 4 }), method: fc.constantFrom('GET', 'POST', 'DELETE'), auth: authorization }).map(
    ({ path, method, auth }): FuzzCase => ({
      kind: 'http',
      method,
      path: `/${path.map((p) => encodeSegment(p, true)).join('/')}`,
      headers: auth ? { authorization: auth } : {},
      note: 'unknown route',
    }),
  );
  const hostileOn = (op: Operation): fc.Arbitrary<FuzzCase> =>
    bodyOperations.includes(op) ? taintedOn(op) : caseOn(op).filter((c) => c.unicode !== undefined);
  // a caller's own id reused (Kling's external_task_id): an accepted body of a route that takes one, with an id
  // from a small pool, so every send after the first finds it taken (409 in the door's own envelope, never a 500)
  const idOperations = bodyOperations.filter((op) => CALLER_IDS.some((field) => op.body?.properties?.[field] !== undefined));
  const reusing = (op: Operation, id: string, pick: number): FuzzCase => {
    const bases = op.examples.length > 0 ? op.examples : [plausible(op.body)];
    const field = CALLER_IDS.find((f) => op.body?.properties?.[f] !== undefined)!;
    const body = { ...(bases[pick % bases.length] as Record<string, unknown>), [field]: id };
    return { kind: 'http', method: op.method, path: plausiblePath(op), headers: { authorization: `Bearer ${keys.api}`, 'content-type': 'application/json' }, body: JSON.stringify(body), note: `${op.method} ${op.path} (${field} reused)`, reuse: `${op.method} ${op.path}` };
  };
  const reusedId = fc.tuple(fc.constantFrom(...idOperations), fc.constantFrom(...REUSED_IDS), fc.nat()).map(([op, id, pick]) => reusing(op, id, pick));
  // in every run, whatever its sample: each such route sent the same id twice
  const reusedSweep = idOperations.flatMap((op, i) => [0, 1].map(() => fc.constant(reusing(op, `fuzz-sweep-${i}`, 0))));
  return {
    cases: fc.oneof({ weight: 12, arbitrary: onOperation }, { weight: 3, arbitrary: taintedOperation }, { weight: 1, arbitrary: unknownRoute }, ...(idOperations.length > 0 ? [{ weight: 1, arbitrary: reusedId }] : [])),
    sweep: fc.tuple(...operations.map(hostileOn), ...reusedSweep),
  };
}

/** Body fields that carry the caller's own id for a task, unique among its tasks. */
const CALLER_IDS = ['external_task_id'];

/** The operations (`POST /path`) whose body takes a caller's own id. */
export function callerIdOperations(doc: any): string[] {
  return operationsOf(doc)
    .filter((op) => ['POST', 'PUT', 'PATCH'].includes(op.method) && CALLER_IDS.some((field) => op.body?.properties?.[field] !== undefined))
    .map((op) => `${op.method} ${op.path}`);
}
/** The ids the fuzzer reuses: few, so most sends find theirs taken. */
const REUSED_IDS = ['fuzz-reused-1', 'fuzz-reused-2', 'fuzz-reused-3'];

const RAW_CASES: string[] = [
  'POST /video-b/v1/generations HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n',
  'POST /video-b/v1/generations HTTP/1.1\r\nHost: x\r\nContent-Length: -1\r\n\r\n',
  'POST /video-b/v1/generations HTTP/1.1\r\nHost: x\r\nContent-Length: abc\r\n\r\n',
  'POST /video-b/v1/generations HTTP/1.1\r\nHost: x\r\nContent-Length: 3\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n',
  'POST /video-b/v1/generations HTTP/1.1\r\nHost: x\r\nContent-Length: 1\r\nContent-Length: 2\r\n\r\nab',
  'FOO / HTTP/1.1\r\nHost: x\r\n\r\n',
  'GET / HTTP/9.9\r\nHost: x\r\n\r\n',
  'GET /health\r\n\r\n',
  'CONNECT example.com:443 HTTP/1.1\r\nHost: example.com:443\r\n\r\n',
  'PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n',
  '\u0016\u0003\u0001\u0000\u00a5\u0001\u0000\u0000\u00a1\u0003\u0003',
  'GET /health HTTP/1.1\r\nHost: x\r\nBad Header\r\n\r\n',
  'GET /health HTTP/1.1\r\nHost: x\r\nX: a\u0000b\r\n\r\n',
  'GET /he alth HTTP/1.1\r\nHost: x\r\n\r\n',
  'TRACE /health HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n',
  'GET /health HTTP/1.1\r\nHost: x\r\nConnection: Upgrade\r\nUpgrade: websocket\r\n\r\n',
  'POST /video-a/v1/images/editing/expand HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n5\r\n{"a":\r\nX\r\n',
];

/** Header bytes a client may send: not UTF-8, latin1 (obs-text, which Node gives as latin1 characters), an emoji's UTF-8, DEL. */
const ODD_HEADER_BYTES = [...INVALID_UTF8, Buffer.from('🙂'), Buffer.from([0xa0]), Buffer.from([0x7f])];

/** The headers a request carries, each with the value it has unless the case makes it odd. */
const HEADER_VALUES: Record<string, (keys: FuzzKeys) => string> = {
  Authorization: (keys) => `Bearer ${keys.api}`,
  'X-Request-Id': () => 'req-1',
  'Content-Type': () => 'application/json',
  'User-Agent': () => 'fuzz/1.0',
  Host: () => 'localhost',
  Accept: () => 'application/json',
};

/**
 * A request to an operation over the raw socket (fetch refuses header values that are not a ByteString),
 * with odd bytes in one header value (at its start, middle or end), and for a body route a plausible
 * JSON body, sometimes with raw invalid UTF-8 in its strings.
 */
function rawOddBytes(doc: any, keys: FuzzKeys): fc.Arbitrary<FuzzCase> {
  return fc
    .record({
      op: fc.constantFrom(...operationsOf(doc)),
      header: fc.constantFrom(...Object.keys(HEADER_VALUES)),
      bytes: fc.constantFrom(...ODD_HEADER_BYTES),
      at: place,
      bodyBytes: fc.option(fc.constantFrom(...INVALID_UTF8), { nil: undefined }),
    })
    .map(({ op, header, bytes, at, bodyBytes }): FuzzCase => {
      const path = plausiblePath(op);
      const admin = op.path.startsWith('/admin/');
      const base = op.body?.properties ? plausible(op.body) : { note: 'x' };
      const body = op.method === 'GET' || op.method === 'HEAD' ? undefined : bodyBytes ? withRawBytes(tainted(base, { target: 'every string', unit: RAW_BYTES_MARK, at }), bodyBytes) : JSON.stringify(base);
      const lines = Object.entries(HEADER_VALUES).map(([name, value]): Buffer => {
        const text = name === 'Authorization' && admin ? `Bearer ${keys.admin}` : value(keys);
        if (name !== header) return Buffer.from(`${name}: ${text}\r\n`);
        const i = at === 'start' ? 0 : at === 'end' ? text.length : Math.floor(text.length / 2);
        return Buffer.concat([Buffer.from(`${name}: ${text.slice(0, i)}`), bytes, Buffer.from(`${text.slice(i)}\r\n`)]);
      });
      const payload = body === undefined ? Buffer.alloc(0) : Buffer.from(body);
      const framing = Buffer.from(`${body === undefined ? '' : `Content-Length: ${payload.length}\r\n`}Connection: close\r\n\r\n`);
      return {
        kind: 'raw',
        bytes: Buffer.concat([Buffer.from(`${op.method} ${path} HTTP/1.1\r\n`), ...lines, framing, payload]),
        note: `raw ${bytes.toString('hex')} in ${header}${bodyBytes ? `, ${bodyBytes.toString('hex')} in the body` : ''}: ${op.method} ${op.path}`,
        unicode: `${op.method} ${op.path}`,
        path,
      };
    });
}

function rawCases(doc: any, keys: FuzzKeys): fc.Arbitrary<FuzzCase> {
  return fc.oneof(
    { weight: 4, arbitrary: rawOddBytes(doc, keys) },
    { weight: 4, arbitrary: fc.constantFrom(...RAW_CASES).map((text) => ({ kind: 'raw' as const, bytes: Buffer.from(text, 'latin1'), note: `raw ${JSON.stringify(text.slice(0, 40))}` })) },
    {
      weight: 1,
      arbitrary: fc.integer({ min: 17 * 1024, max: 40 * 1024 }).map((n) => ({
        kind: 'raw' as const,
        bytes: Buffer.from(`GET /health HTTP/1.1\r\nHost: x\r\nX-Big: ${'a'.repeat(n)}\r\n\r\n`),
        note: `raw header of ${n} bytes`,
      })),
    },
    {
      weight: 2,
      arbitrary: fc.tuple(fc.constantFrom('POST', 'GET'), fc.uint8Array({ minLength: 1, maxLength: 64 })).map(([method, junk]) => ({
        kind: 'raw' as const,
        bytes: Buffer.concat([Buffer.from(`${method} /video-b/v1/generations HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${keys.api}\r\n`), Buffer.from(junk), Buffer.from('\r\n\r\n')]),
        note: 'raw junk in headers',
      })),
    },
  );
}

const MB = 1024 * 1024;
const EXPAND = '/video-a/v1/images/editing/expand';
/** Kling's image2video: a large limit (two Base64 images) without a streamed field. */
const IMAGE2VIDEO = '/video-a/v1/videos/image2video';

/**
 * Bodies built once per run and shared by every case that sends them (a sample holds thousands of
 * cases; a multi-MB body each would not fit, and compressing 50 MB takes a moment).
 */
const sharedBodies = new Map<string, Buffer>();
function sharedBody(key: string, build: () => Buffer): Buffer {
  let body = sharedBodies.get(key);
  if (!body) sharedBodies.set(key, (body = build()));
  return body;
}

type Encoding = 'gzip' | 'deflate' | 'br';
type Payload = 'zeros' | 'json-image' | 'json-string';

/** A compressed body that inflates to 50 MB: zeros, a JSON object whose `image` is 50 MB of Base64, or a 50 MB JSON string. */
function bomb(encoding: Encoding, payload: Payload): Buffer {
  return sharedBody(`bomb ${encoding} ${payload}`, () => {
    const size = 50 * MB;
    const plain = payload === 'zeros' ? Buffer.alloc(size) : Buffer.from(payload === 'json-image' ? `{"image":"${'A'.repeat(size - 12)}"}` : `"${'x'.repeat(size - 2)}"`);
    if (encoding === 'gzip') return gzipSync(plain, { level: 9 });
    if (encoding === 'deflate') return deflateSync(plain, { level: 9 });
    return brotliCompressSync(plain, { params: { [zlibConstants.BROTLI_PARAM_QUALITY]: 5 } });
  });
}

/** A JSON body of `mb` MB (an expand with a Base64 `image` of that size), sent as it is. */
function bigJson(mb: number): Buffer {
  return sharedBody(`json ${mb}`, () => {
    const size = Math.round(mb * MB);
    return Buffer.from(`{"image":"${'A'.repeat(size - 100)}","up_expansion_ratio":0.1,"bottom_expansion_ratio":0.1,"left_expansion_ratio":0,"right_expansion_ratio":0}`);
  });
}

/**
 * Large bodies: compressed bodies that inflate to 50 MB (Content-Encoding gzip, deflate, br) on the
 * large-body expand route and on a 100 kB route; bodies of a few MB (and one over the 20 MB limit) sent
 * with methods no route takes, to unknown routes, and by POST; each with Content-Length or chunked.
 * The answer must come (the per-request deadline) and be the envelope, and the client must be able to
 * send its whole body first (no EPIPE or reset).
 */
function largeBodyCases(keys: FuzzKeys): fc.Arbitrary<FuzzCase> {
  const headers = (auth: boolean, extra: Record<string, string> = {}) => ({ 'content-type': 'application/json', ...(auth ? { authorization: `Bearer ${keys.api}` } : {}), ...extra });
  const bombs = fc
    .record({
      encoding: fc.constantFrom<Encoding>('gzip', 'deflate', 'br'),
      payload: fc.constantFrom<Payload>('zeros', 'json-image', 'json-string'),
      path: fc.constantFrom(EXPAND, EXPAND, IMAGE2VIDEO, IMAGE2VIDEO, '/video-b/v1/generations'),
      chunked: fc.boolean(),
    })
    .map(({ encoding, payload, path, chunked }): FuzzCase => ({
      kind: 'http',
      method: 'POST',
      path,
      headers: headers(true, { 'content-encoding': encoding }),
      body: bomb(encoding, payload),
      chunked,
      note: `${encoding} of 50 MB (${payload}) to ${path}${chunked ? ', chunked' : ''}`,
    }));
  const bigBodies = fc
    .record({
      method: fc.constantFrom('OPTIONS', 'PUT', 'PATCH', 'DELETE', 'POST'),
      path: fc.constantFrom(EXPAND, EXPAND, IMAGE2VIDEO, '/video-b/v1/generations', '/no/such/route'),
      mb: fc.constantFrom(1, 3, 5),
      auth: fc.boolean(),
      chunked: fc.boolean(),
    })
    .map(({ method, path, mb, auth, chunked }): FuzzCase => {
      const over = method === 'POST' && path === EXPAND; // the expand route's own method: over its 20 MB limit
      return { kind: 'http', method, path, headers: headers(auth), body: bigJson(over ? 25 : mb), chunked, note: `${method} ${path} with ${over ? 25 : mb} MB${chunked ? ', chunked' : ''}` };
    });
  return fc.oneof(bombs, bigBodies);
}

/** Every case the fuzzer draws from. */
export function fuzzCases(doc: any, keys: FuzzKeys): fc.Arbitrary<FuzzCase> {
  return fc.oneof({ weight: 14, arbitrary: httpArbitraries(doc, keys).cases }, { weight: 2, arbitrary: rawCases(doc, keys) }, { weight: 1, arbitrary: largeBodyCases(keys) });
}

/** The body as a stream of 64 kB pieces, which fetch sends chunked (no Content-Length). */
function chunkedBody(body: string | Buffer): ReadableStream<Uint8Array> {
  const bytes = Buffer.from(body);
  let offset = 0;
  return new ReadableStream({
    pull(controller) {
      if (offset >= bytes.length) return controller.close();
      controller.enqueue(bytes.subarray(offset, (offset += 64 * 1024)));
    },
  });
}

async function sendHttp(base: string, c: Extract<FuzzCase, { kind: 'http' }>, deadlineMs: number): Promise<Observed> {
  try {
    const body = c.chunked && c.body !== undefined ? chunkedBody(c.body) : c.body;
    const res = await fetch(base + c.path, { method: c.method, headers: c.headers, body, duplex: 'half', redirect: 'manual', signal: AbortSignal.timeout(deadlineMs) } as RequestInit);
    const text = c.method === 'HEAD' ? '' : await res.text();
    return { status: res.status, headers: Object.fromEntries(res.headers.entries()), text };
  } catch (err) {
    const cause = (err as { cause?: { code?: string; message?: string } }).cause;
    // A request fetch itself refuses to send (a header value or method it does not allow) never reaches the service.
    if (err instanceof TypeError && !cause?.code && !/fetch failed/.test(err.message)) return { status: -1, headers: {}, text: '', error: 'not sendable' };
    return { status: 0, headers: {}, text: '', error: `${(err as Error).message} ${cause?.code ?? cause?.message ?? ''}` };
  }
}

const NON_JSON_SUCCESS = [/^\/docs/, /^\/metrics/, /^\/media\//, /^\/samples\//, /^\/openai\/v1\/audio\/speech/, /^\/elevenlabs\/v1\/music/];

/** What is wrong with the answer to `c`, or null. */
export function problemWith(c: FuzzCase, o: Observed): string | null {
  if (o.status === -1) return null;
  if (o.status === 0) return `no HTTP answer (${o.error})`;
  // OpenAI's image and speech doors answer when their task ends; on an instance that runs no worker (the fuzz's), an
  // accepted request ends at its hold (IMAGE_HOLD_S, SPEECH_HOLD_S) with 504 timeout naming the task, or, streamed,
  // with an error event
  const held = /^\/openai\/v1\/(images\/|audio\/speech)/.test(c.path ?? '') && o.headers['x-request-id'] !== undefined;
  if (held && o.status === 504 && /"code":"timeout"/.test(o.text)) return null;
  // the sunoapi.org-style door's upload-extend waits for its upload's check (AUDIO_HOLD_S): 504, their code 500, naming the upload
  if (/^\/sunoapi\/api\/v1\/generate\/upload-extend/.test(c.path ?? '') && o.status === 504 && /"code":500\b.*"msg":"uploadUrl: the audio was not fetched and checked within/.test(o.text)) return null;
  // ElevenLabs' music door answers when its task ends likewise (MUSIC_HOLD_S), in ElevenLabs' words
  const heldSong = /^\/elevenlabs\/v1\/music/.test(c.path ?? '') && o.headers['x-request-id'] !== undefined;
  if (heldSong && o.status === 504 && /^\{"detail":\{"status":"timeout","message":"the music task [^"]+ did not end within/.test(o.text)) return null;
  if (held && o.status === 200 && /^text\/event-stream/.test(String(o.headers['content-type'] ?? '')) && /^(event: error\n)?data: \{"type":"error","error":\{"message":"the (image|speech) task [^"]+ did not end within/.test(o.text)) return null;
  if (o.status >= 500) return `answered ${o.status}`;
  const requestId = o.headers['x-request-id'];
  if (!requestId) return 'no X-Request-Id header';
  if (/\n\s+at .+:\d+:\d+/.test(o.text) || /node_modules|\/src\/|\.ts:\d+/.test(o.text)) return 'the body shows a stack trace or a path';
  const method = c.kind === 'http' ? c.method : '';
  if (method === 'HEAD' || o.status === 204 || o.status === 304) return null;
  const path = c.path ?? '';
  if (o.status < 400 && NON_JSON_SUCCESS.some((p) => p.test(path))) return null;
  let body: any;
  try {
    body = JSON.parse(o.text);
  } catch {
    return `the body is not JSON (${o.headers['content-type']})`;
  }
  const e = body?.error;
  const openAiShaped = typeof e?.message === 'string' && typeof e.type === 'string' && typeof e.code === 'string' && (e.param === null || typeof e.param === 'string') && typeof body.request_id === 'string';
  // a request Node's HTTP parser refuses (malformed bytes, 414, 431) is answered before any route: the spec's envelope on every path
  const parserRefusal = c.kind === 'raw' || o.status === 414 || o.status === 431 || o.status === 408;
  const d = body?.detail;
  const elevenLabsShaped =
    (Array.isArray(d) ? o.status === 422 && d.length > 0 && d.every((i: any) => typeof i?.type === 'string' && Array.isArray(i.loc) && typeof i.msg === 'string') : typeof d?.status === 'string' && typeof d.message === 'string') &&
    body.request_id === requestId;
  if (o.status >= 400 && path.startsWith('/elevenlabs/') && (elevenLabsShaped || !parserRefusal)) {
    // ElevenLabs' door answers errors as its SDKs read them: {detail: {status, message}}, a refused request a 422 {detail: [{type, loc, msg}]}
    if (!elevenLabsShaped) return 'an error without the {detail, request_id} shape of ElevenLabs (or its request_id not X-Request-Id)';
  } else if (o.status >= 400 && path.startsWith('/openai/') && (openAiShaped || !parserRefusal)) {
    // the OpenAI-style door answers errors as OpenAI's SDKs read them, its request_id beside
    if (!openAiShaped) return 'an error without the {error: {message, type, code, param}, request_id} envelope';
  } else if (o.status >= 400) {
    if (!(typeof body?.code === 'number' || typeof body?.code === 'string') || typeof body.message !== 'string' || typeof body.request_id !== 'string') {
      return 'an error without the {code, message, request_id} envelope';
    }
    if (body.request_id !== requestId) return `request_id ${body.request_id} differs from X-Request-Id ${requestId}`;
    // the sunoapi.org-shaped door answers the family's {code, msg, data} too, its code a number
    if (path.startsWith('/sunoapi/') && !parserRefusal && (typeof body.code !== 'number' || body.msg !== body.message || body.data !== null)) return 'an error without the family\'s {code, msg, data: null}';
  }
  return null;
}

function describeCase(c: FuzzCase): string {
  if (c.kind === 'raw') return `${c.note}: ${JSON.stringify(c.bytes.toString('latin1').slice(0, 300))}`;
  const body = c.body === undefined ? '' : ` body=${JSON.stringify((Buffer.isBuffer(c.body) ? c.body.subarray(0, 200).toString('latin1') : c.body.slice(0, 200)))}`;
  return `${c.method} ${c.path.slice(0, 300)} headers=${JSON.stringify(c.headers).slice(0, 300)}${c.chunked ? ' (chunked)' : ''}${body}`;
}

/**
 * Sends `count` cases drawn from the document (seeded, so a run can be repeated), `concurrency` at a time
 * (through fetch's one pool of keep-alive connections, so a connection serves request after request),
 * each answer due within `deadlineMs`. `check` adds a run's own rule; `onTiming` sees every request's time, to find what is slow.
 */
export async function runFuzz(options: {
  base: string;
  doc: any;
  keys: FuzzKeys;
  count: number;
  seed?: number;
  concurrency?: number;
  deadlineMs?: number;
  slice?: [number, number];
  /** What must be true of each answer besides what problemWith checks: a problem, or null. */
  check?: (c: FuzzCase, observed: Observed) => string | null;
  onTiming?: (timing: Timing) => void;
}): Promise<FuzzReport> {
  const seed = options.seed ?? Date.now() % 2_147_483_647;
  const port = Number(new URL(options.base).port);
  const deadlineMs = options.deadlineMs ?? 20_000;
  // the sweep first (one hostile-Unicode case on each operation), then the seeded sample
  const [sweep] = fc.sample(httpArbitraries(options.doc, options.keys).sweep, { numRuns: 1, seed });
  const sample = [...sweep, ...fc.sample(fuzzCases(options.doc, options.keys), { numRuns: Math.max(0, options.count - sweep.length), seed })];
  const from = options.slice?.[0] ?? 0;
  const cases = sample.slice(from, options.slice?.[1] ?? sample.length);
  const report: FuzzReport = { sent: 0, statuses: {}, violations: [], seed, hostileUnicode: {}, slowest: [], reusedIds: {} };
  let next = 0;
  const worker = async () => {
    while (next < cases.length) {
      const index = from + next;
      const c = cases[next++];
      const started = performance.now();
      const observed = c.kind === 'raw' ? await sendRaw(port, c.bytes, deadlineMs) : await sendHttp(options.base, c, deadlineMs);
      const timing: Timing = { index, ms: Math.round(performance.now() - started), status: observed.status, case: c.kind === 'http' ? `${c.method} ${c.note}` : c.note };
      options.onTiming?.(timing);
      report.slowest = [...report.slowest, timing].sort((a, b) => b.ms - a.ms).slice(0, 5);
      report.sent++;
      const key = observed.status === -1 ? 'unsendable' : String(observed.status);
      report.statuses[key] = (report.statuses[key] ?? 0) + 1;
      if (c.unicode) report.hostileUnicode[c.unicode] = (report.hostileUnicode[c.unicode] ?? 0) + 1;
      if (c.kind === 'http' && c.reuse) report.reusedIds[`${c.reuse} ${key}`] = (report.reusedIds[`${c.reuse} ${key}`] ?? 0) + 1;
      const problem = problemWith(c, observed) ?? options.check?.(c, observed) ?? null;
      if (problem) report.violations.push({ index, case: describeCase(c), problem, status: observed.status, body: observed.text.slice(0, 300) });
    }
  };
  await Promise.all(Array.from({ length: options.concurrency ?? 6 }, worker));
  return report;
}
