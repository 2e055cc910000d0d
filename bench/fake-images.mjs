// The vendor of the door scenario, in a process of its own (its CPU is not the gateway's): OpenAI's Images
// API as its documentation shows it, `POST /v1/images/generations` answered with one 1024 × 1024 PNG as
// Base64 (`{created, data: [{b64_json}], background, output_format, quality, size, usage}`) after the delay
// set by `POST /_control/delay?ms=N`, and `GET /v1/models` for the channel's test.
//
//   PORT=3902 FAKE_API_KEY=… node bench/fake-images.mjs
import http from 'node:http';
import { photo } from './worker.mjs';

const port = Number(process.env.PORT ?? 3902);
const API_KEY = process.env.FAKE_API_KEY ?? 'bench-api-key';
let delayMs = 0;

// FAKE_IMAGE=photo: a picture with gradients and texture, as a vendor's are (about 2 MB of PNG); plain: a
// smooth gradient (tens of kB), so that the door's own work shows apart from the cost of the bytes
const sharp = (await import('sharp')).default;
const plain = () => sharp({ create: { width: 1024, height: 1024, channels: 3, background: '#3a6ea5' } }).png().toBuffer();
const png = process.env.FAKE_IMAGE === 'plain' ? await plain() : await sharp(await photo()).resize(1024, 1024).png().toBuffer();
const answer = Buffer.from(
  JSON.stringify({
    created: 1_745_000_000,
    data: [{ b64_json: png.toString('base64') }],
    background: 'opaque',
    output_format: 'png',
    quality: 'medium',
    size: '1024x1024',
    usage: { input_tokens: 12, output_tokens: 1056, total_tokens: 1068, input_tokens_details: { text_tokens: 12, image_tokens: 0 } },
  }),
);

function send(res, status, body) {
  const text = typeof body === 'string' || Buffer.isBuffer(body) ? body : JSON.stringify(body);
  res.writeHead(status, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(text) });
  res.end(text);
}

const server = http.createServer((req, res) => {
  const chunks = [];
  req.on('data', (c) => chunks.push(c));
  req.on('end', () => {
    const url = new URL(req.url, 'http://fake');
    if (url.pathname === '/_control/delay') {
      delayMs = Number(url.searchParams.get('ms') ?? 0);
      return send(res, 200, { delay_ms: delayMs });
    }
    if (req.headers.authorization !== `Bearer ${API_KEY}`) return send(res, 401, { error: { message: 'Incorrect API key provided', type: 'invalid_request_error', param: null, code: 'invalid_api_key' } });
    if (req.method === 'GET' && url.pathname === '/v1/models') return send(res, 200, { object: 'list', data: [{ id: 'gpt-image-1', object: 'model', created: 1_745_000_000, owned_by: 'system' }] });
    if (req.method === 'POST' && url.pathname === '/v1/images/generations') {
      JSON.parse(Buffer.concat(chunks).toString('utf8'));
      return setTimeout(() => send(res, 200, answer), delayMs);
    }
    send(res, 404, { error: { message: `Invalid URL (${req.method} ${url.pathname})`, type: 'invalid_request_error', param: null, code: null } });
  });
});
server.keepAliveTimeout = 65_000;
server.listen(port, '127.0.0.1', () => console.log(`fake images listening on ${port}, ${png.length} bytes of PNG`));
process.on('SIGTERM', () => server.close(() => process.exit(0)));
