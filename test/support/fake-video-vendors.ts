import { randomUUID } from 'node:crypto';
import type { ServerResponse } from 'node:http';
import sharp from 'sharp';
import { sendJson, startServer, type TestServer } from './http-server.js';

// Stability's fake (its image expand), left here for its own folder. The video vendors' fakes are one per
// vendor under test/support/vendors/<vendor>/ (Kling's, Runway's, …), their shared type in vendors/video-fake.ts.

/** A fake Stability account: what it received and how it misbehaves. */
export interface FakeStability {
  server: TestServer;
  url: string;
  /** Each outpaint received: its form fields (the image as its size) and what was answered. */
  received: { fields: Record<string, string>; image: { width: number; height: number; type: string } | null; status: number }[];
  /** `moderate`: 403 content_moderation; `fail`: 500; `busy`: 429; `reset`: the connection closed once the outpaint was read (its answer lost). */
  knobs: { moderate?: boolean; fail?: boolean; busy?: boolean; reset?: boolean };
  authFailures: string[];
  close(): Promise<void>;
}

const STABILITY_MAX_MARGIN = 2000;

/**
 * Stability AI's outpaint, from its OpenAPI description: POST /v2beta/stable-image/edit/outpaint, multipart
 * (image; left, right, up, down 0–2000, at least one above 0; prompt up to 10,000; output_format png | jpeg |
 * webp), answered synchronously with the image (`accept: image/*`: raw bytes, `finish-reason` and `seed`
 * headers) of the input's size plus the margins; errors `{id, name, errors: [...]}` (400 bad_request, 401,
 * 403 content_moderation, 429, 500); GET /v1/user/balance → {credits}.
 */
export async function startFakeStability(apiKey: string): Promise<FakeStability> {
  const received: FakeStability['received'] = [];
  const authFailures: string[] = [];
  const knobs: FakeStability['knobs'] = {};
  const error = (res: ServerResponse, status: number, name: string, errors: string[]) => sendJson(res, status, { id: randomUUID().replace(/-/g, ''), name, errors });
  const server = await startServer(async (req, res) => {
    const url = new URL(req.url ?? '/', 'http://x');
    if (req.headers.authorization !== `Bearer ${apiKey}`) {
      authFailures.push(req.headers.authorization ?? 'none');
      return error(res, 401, 'unauthorized', ['authorization: invalid or missing API key']);
    }
    if (req.method === 'GET' && url.pathname === '/v1/user/balance') return sendJson(res, 200, { credits: 42.5 });
    if (req.method !== 'POST' || url.pathname !== '/v2beta/stable-image/edit/outpaint') return error(res, 404, 'not_found', [`${url.pathname}: not found`]);
    if (!String(req.headers['content-type']).startsWith('multipart/form-data')) return error(res, 400, 'bad_request', ['content-type: must be multipart/form-data']);
    const form = await new Request('http://x', { method: 'POST', headers: { 'content-type': String(req.headers['content-type']) }, body: req.body }).formData();
    const fields: Record<string, string> = {};
    let image: FakeStability['received'][number]['image'] = null;
    let bytes: Buffer | null = null;
    for (const [name, value] of form.entries()) {
      if (typeof value === 'string') fields[name] = value;
      else if (name === 'image') {
        bytes = Buffer.from(await value.arrayBuffer());
        const meta = await sharp(bytes).metadata().catch(() => null);
        image = meta?.width && meta.height ? { width: meta.width, height: meta.height, type: value.type } : null;
      }
    }
    const entry = { fields, image, status: 200 };
    received.push(entry);
    if (knobs.reset) {
      entry.status = 0;
      return void req.socket.destroy();
    }
    const refuse = (status: number, name: string, errors: string[]) => {
      entry.status = status;
      return error(res, status, name, errors);
    };
    if (knobs.busy) return refuse(429, 'rate_limit_exceeded', ['You have exceeded the rate limit of 150 requests within a 10 second period']);
    if (!bytes || !image) return refuse(400, 'bad_request', ['image: is required (jpeg, png or webp)']);
    const margins: Record<string, number> = {};
    for (const side of ['left', 'right', 'up', 'down']) {
      const raw = fields[side] ?? '0';
      const px = Number(raw);
      if (!/^\d+$/.test(raw) || px > STABILITY_MAX_MARGIN) return refuse(400, 'bad_request', [`${side}: must be an integer from 0 to ${STABILITY_MAX_MARGIN}`]);
      margins[side] = px;
    }
    if (Object.values(margins).every((px) => px === 0)) return refuse(400, 'bad_request', ['left, right, up, down: at least one must be greater than 0']);
    if (fields.prompt !== undefined && fields.prompt.length > 10_000) return refuse(400, 'bad_request', ['prompt: must be at most 10000 characters']);
    if (fields.output_format !== undefined && !['png', 'jpeg', 'webp'].includes(fields.output_format)) return refuse(400, 'bad_request', ['output_format: must be png, jpeg or webp']);
    const { width, height } = image;
    if (Math.min(width, height) < 64 || width * height < 4096 || width * height > 9_437_184 || Math.max(width / height, height / width) > 2.5) return refuse(400, 'bad_request', ['image: must be 64 px a side, 4,096 to 9,437,184 pixels, aspect ratio within 1:2.5 and 2.5:1']);
    if (knobs.moderate) return refuse(403, 'content_moderation', ['Your request was flagged by our content moderation system, as a result your request was denied and you were not charged.']);
    if (knobs.fail) return refuse(500, 'internal_error', ['An unexpected server error has occurred, please try again later.']);
    const format = (fields.output_format ?? 'png') as 'png' | 'jpeg' | 'webp';
    const out = await sharp({ create: { width: width + margins.left + margins.right, height: height + margins.up + margins.down, channels: 3, background: { r: 90, g: 120, b: 160 } } })
      .composite([{ input: bytes, left: margins.left, top: margins.up }])
      .toFormat(format)
      .toBuffer();
    res.writeHead(200, { 'content-type': `image/${format}`, 'finish-reason': 'SUCCESS', seed: '343940597', 'x-request-id': randomUUID() });
    res.end(out);
  });
  return { server, url: server.url, received, knobs, authFailures, close: () => server.close() };
}
