import { once } from 'node:events';
import type { ServerResponse } from 'node:http';
import { type FakeUpstream, fakeDefaults } from '../../fake-upstreams.js';
import { sendBytes, sendJson, startServer } from '../../http-server.js';
import { png } from '../../images.js';
import { sizedMp4, testMp4 } from '../../media.js';
import { callBack, type VendorCallback } from '../../vendor-callback.js';

/**
 * Luma's generations API: queued → dreaming → completed | failed, with `failure_reason` and `assets`. A
 * generation created with a callback_url gets its end POSTed there, the generation object as GET answers it
 * (Luma's changelog, "Callbacks": a POST with the Generation object as its body on its updates).
 */
export async function startFakeLuma(apiKey: string): Promise<FakeUpstream> {
  const created: FakeUpstream['created'] = new Map();
  const authFailures: string[] = [];
  const callbacks: VendorCallback[] = [];
  const knobs = fakeDefaults();
  const video = testMp4(1);
  const thumb = await png(320, 240);
  const generation = (id: string, state: string, base: string) => ({
    id,
    state,
    failure_reason: state === 'failed' ? knobs.failWith : null,
    created_at: new Date().toISOString(),
    assets: state === 'completed' ? { video: knobs.render ? `${base}/files/gen/${id}.mp4` : `${base}/files/video.mp4`, image: `${base}/files/thumb.png` } : null,
    request: created.get(id)?.body,
  });
  /** The generation's end, called back once. */
  const calledBack = (id: string, base: string) => {
    const task = created.get(id)!;
    task.calledBack = true;
    return callBack(task.body.callback_url, generation(id, knobs.failWith ? 'failed' : 'completed', base), callbacks);
  };
  const server = await startServer(async (req, res) => {
    const url = new URL(req.url ?? '/', 'http://x');
    if (url.pathname === '/files/video.mp4') return knobs.videoBytes ? sendLong(res, 'video/mp4', video, knobs.videoBytes) : sendBytes(res, 'video/mp4', video);
    if (url.pathname === '/files/thumb.png') return sendBytes(res, 'image/png', thumb);
    const own = /^\/files\/gen\/(.+)\.mp4$/.exec(url.pathname);
    if (own && created.has(own[1])) return sendBytes(res, 'video/mp4', sizedMp4(lumaSize(created.get(own[1])!.body), Number.parseInt(String(created.get(own[1])!.body.duration ?? '5s'), 10)));
    if (req.headers.authorization !== `Bearer ${apiKey}`) {
      authFailures.push(req.headers.authorization ?? 'none');
      return sendJson(res, 401, { detail: 'Invalid API key' });
    }
    // results are named where the upstream was asked (relay.internal when the gateway asked it there)
    const base = knobs.resultBase ?? (req.headers.host ? `http://${req.headers.host}` : server.url);
    const record = (id: string, state: string) => generation(id, state, base);
    if (req.method === 'GET' && url.pathname === '/credits') return sendJson(res, 200, { credit_balance: 1000 });
    if (req.method === 'POST' && url.pathname === '/generations') {
      if (knobs.createBusy > 0) {
        knobs.createBusy--;
        res.setHeader('retry-after', '0');
        return sendJson(res, 429, { detail: 'Too many concurrent generations' });
      }
      if (knobs.createRefusal) return sendJson(res, knobs.createRefusal.status, knobs.createRefusal.body);
      const id = `luma-${created.size + 1}`;
      created.set(id, { body: JSON.parse(req.body.toString()) as Record<string, unknown>, polls: 0 });
      if (knobs.createHangMs) await new Promise((r) => setTimeout(r, knobs.createHangMs));
      if (knobs.createAnswerHeld) await knobs.createAnswerHeld;
      return sendJson(res, 201, record(id, 'queued'));
    }
    const get = /^\/generations\/(.+)$/.exec(url.pathname);
    if (req.method === 'GET' && get && created.has(get[1])) {
      const task = created.get(get[1])!;
      task.polls++;
      const state = !task.ended && task.polls < knobs.pollsUntilDone ? 'dreaming' : knobs.failWith ? 'failed' : 'completed';
      sendJson(res, 200, record(get[1], state));
      if (state !== 'dreaming' && !task.calledBack) void calledBack(get[1], base);
      return;
    }
    sendJson(res, 404, { detail: 'Not found' });
  });
  const finish = async (id: string) => {
    const task = created.get(id)!;
    task.ended = true;
    return task.calledBack ? undefined : calledBack(id, knobs.resultBase ?? server.url);
  };
  return { server, url: server.url, knobs, created, callbacks, finish, authFailures, close: () => server.close() };
}

/** The frame size of a Luma request: its resolution's height at its aspect ratio (even sides). */
function lumaSize(body: Record<string, unknown>): string {
  const height = { '540p': 540, '720p': 720, '1080p': 1080, '4k': 2160 }[String(body.resolution ?? '720p')] ?? 720;
  const [w, h] = String(body.aspect_ratio ?? '16:9').split(':').map(Number);
  const width = Math.round((height * w) / h / 2) * 2;
  return w >= h ? `${width}x${height}` : `${height}x${Math.round((height * h) / w / 2) * 2}`;
}

/** `head`, then zeros up to `size` bytes, written as the client reads them: the server never holds the whole body. */
async function sendLong(res: ServerResponse, contentType: string, head: Buffer, size: number): Promise<void> {
  res.writeHead(200, { 'content-type': contentType, 'content-length': size });
  const zeros = Buffer.alloc(1024 * 1024);
  let sent = 0;
  while (sent < size) {
    const chunk = sent === 0 ? head.subarray(0, size) : zeros.subarray(0, Math.min(zeros.length, size - sent));
    sent += chunk.length;
    if (!res.write(chunk)) await once(res, 'drain');
  }
  res.end();
}
