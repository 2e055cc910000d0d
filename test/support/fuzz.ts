import net from 'node:net';
import { brotliCompressSync, constants as zlibConstants, deflateSync, gzipSync } from 'node:zlib';
import fc from 'fast-check';

/**
 * A black-box fuzzer for the HTTP surface, generated from the service's own OpenAPI document: every
 * operation gets hostile path and query values, bodies shaped by its schema and then broken (wrong
 * types, missing and extra fields, deep nesting, NUL and huge strings, odd Unicode, prototype keys),
 * odd Content-Types and Authorization headers, other methods and unknown routes; and framing errors
 * are sent over a raw socket. Every answer must be below 500, carry X-Request-Id, and (for errors) be
 * the JSON envelope `{code, message, request_id}` with request_id equal to that header, with no stack
 * trace in it.
 */

export interface FuzzKeys {
  api: string;
  admin: string;
}

export type FuzzCase =
  | { kind: 'http'; method: string; path: string; headers: Record<string, string>; body?: string | Buffer; note: string; chunked?: boolean }
  | { kind: 'raw'; bytes: Buffer; note: string };

export interface Observed {
  status: number;
  headers: Record<string, string>;
  text: string;
  error?: string;
}

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
  /** The slowest answers, slowest first. */
  slowest: Timing[];
}

interface Schema {
  type?: string;
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
  'e\u0301',
  '🙂'.repeat(40),
  'null',
  'undefined',
  'NaN',
  '-1',
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

const hostileString: fc.Arbitrary<string> = fc.oneof(
  { weight: 4, arbitrary: fc.constantFrom(...HOSTILE_STRINGS) },
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
  switch (schema.type) {
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
 * Percent-encodes the UTF-8 bytes of `value` (a lone surrogate becomes U+FFFD, as a real client sends it).
 * `raw`: as a careless client would, escaping only what would break the request line, so `..`, `%` and `/` go as they are.
 */
function encodeSegment(value: string, raw: boolean): string {
  const keep = raw ? /[!-~]/ : /[A-Za-z0-9\-_.~]/;
  let out = '';
  for (const byte of Buffer.from(value, 'utf8')) {
    const c = String.fromCharCode(byte);
    out += byte < 0x80 && keep.test(c) && !(raw && (c === '#' || c === '?')) ? c : `%${byte.toString(16).toUpperCase().padStart(2, '0')}`;
  }
  return out;
}

function httpCases(doc: any, keys: FuzzKeys): fc.Arbitrary<FuzzCase> {
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
  const onOperation = fc.constantFrom(...operations).chain((op) =>
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
        return { kind: 'http' as const, method, path: search ? `${path}?${search}` : path, headers, body: withBody ? body : undefined, note: `${op.method} ${op.path}` };
      }),
  );
  const unknownRoute = fc.record({ path: fc.array(hostileString, { minLength: 1, maxLength: 4 }), method: fc.constantFrom('GET', 'POST', 'DELETE'), auth: authorization }).map(
    ({ path, method, auth }): FuzzCase => ({
      kind: 'http',
      method,
      path: `/${path.map((p) => encodeSegment(p, true)).join('/')}`,
      headers: auth ? { authorization: auth } : {},
      note: 'unknown route',
    }),
  );
  return fc.oneof({ weight: 12, arbitrary: onOperation }, { weight: 1, arbitrary: unknownRoute });
}

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

function rawCases(keys: FuzzKeys): fc.Arbitrary<FuzzCase> {
  return fc.oneof(
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
      path: fc.constantFrom(EXPAND, EXPAND, '/video-b/v1/generations'),
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
      path: fc.constantFrom(EXPAND, EXPAND, '/video-b/v1/generations', '/no/such/route'),
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
  return fc.oneof({ weight: 14, arbitrary: httpCases(doc, keys) }, { weight: 1, arbitrary: rawCases(keys) }, { weight: 1, arbitrary: largeBodyCases(keys) });
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

/** Sends raw bytes and reads the first HTTP answer (headers, then Content-Length bytes) or until the socket closes. */
function sendRaw(port: number, bytes: Buffer, deadlineMs: number): Promise<Observed> {
  return new Promise((resolve) => {
    const socket = net.connect(port, '127.0.0.1');
    let data = Buffer.alloc(0);
    let done = false;
    const finish = (error?: string) => {
      if (done) return;
      done = true;
      clearTimeout(timer);
      socket.destroy();
      const text = data.toString('latin1');
      const head = text.split('\r\n\r\n')[0];
      const status = Number(/^HTTP\/1\.[01] (\d{3})/.exec(head)?.[1] ?? 0);
      const headers = Object.fromEntries(
        head
          .split('\r\n')
          .slice(1)
          .map((l) => [l.slice(0, l.indexOf(':')).toLowerCase(), l.slice(l.indexOf(':') + 1).trim()]),
      );
      // only the first answer: a second one (to bytes after the request) may follow on the same socket
      const length = Number(headers['content-length']);
      const body = data.subarray(Buffer.byteLength(head, 'latin1') + 4);
      const first = Number.isFinite(length) ? body.subarray(0, length) : body;
      resolve({ status, headers, text: first.toString('utf8'), error: status ? undefined : (error ?? 'no answer') });
    };
    const timer = setTimeout(() => finish('timed out'), deadlineMs);
    socket.on('data', (chunk: Buffer) => {
      data = Buffer.concat([data, chunk]);
      const text = data.toString('latin1');
      const end = text.indexOf('\r\n\r\n');
      const length = Number(/\r\ncontent-length: *(\d+)/i.exec(text.slice(0, end))?.[1] ?? NaN);
      if (end !== -1 && Number.isFinite(length) && data.length >= end + 4 + length) finish();
    });
    socket.on('error', (err) => finish(err.message));
    socket.on('close', () => finish('closed'));
    socket.write(bytes);
  });
}

const NON_JSON_SUCCESS = [/^\/docs/, /^\/metrics/, /^\/media\//];

/** What is wrong with the answer to `c`, or null. */
export function problemWith(c: FuzzCase, o: Observed): string | null {
  if (o.status === -1) return null;
  if (o.status === 0) return `no HTTP answer (${o.error})`;
  if (o.status >= 500) return `answered ${o.status}`;
  const requestId = o.headers['x-request-id'];
  if (!requestId) return 'no X-Request-Id header';
  if (/\n\s+at .+:\d+:\d+/.test(o.text) || /node_modules|\/src\/|\.ts:\d+/.test(o.text)) return 'the body shows a stack trace or a path';
  const method = c.kind === 'http' ? c.method : '';
  if (method === 'HEAD' || o.status === 204 || o.status === 304) return null;
  const path = c.kind === 'http' ? c.path : '';
  if (o.status < 400 && NON_JSON_SUCCESS.some((p) => p.test(path))) return null;
  let body: any;
  try {
    body = JSON.parse(o.text);
  } catch {
    return `the body is not JSON (${o.headers['content-type']})`;
  }
  if (o.status >= 400) {
    if (!(typeof body?.code === 'number' || typeof body?.code === 'string') || typeof body.message !== 'string' || typeof body.request_id !== 'string') {
      return 'an error without the {code, message, request_id} envelope';
    }
    if (body.request_id !== requestId) return `request_id ${body.request_id} differs from X-Request-Id ${requestId}`;
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
 * each answer due within `deadlineMs`. `onTiming` sees every request's time, to find what is slow.
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
  onTiming?: (timing: Timing) => void;
}): Promise<FuzzReport> {
  const seed = options.seed ?? Date.now() % 2_147_483_647;
  const port = Number(new URL(options.base).port);
  const deadlineMs = options.deadlineMs ?? 20_000;
  const sample = fc.sample(fuzzCases(options.doc, options.keys), { numRuns: options.count, seed });
  const from = options.slice?.[0] ?? 0;
  const cases = sample.slice(from, options.slice?.[1] ?? sample.length);
  const report: FuzzReport = { sent: 0, statuses: {}, violations: [], seed, slowest: [] };
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
      const problem = problemWith(c, observed);
      if (problem) report.violations.push({ index, case: describeCase(c), problem, status: observed.status, body: observed.text.slice(0, 300) });
    }
  };
  await Promise.all(Array.from({ length: options.concurrency ?? 6 }, worker));
  return report;
}
