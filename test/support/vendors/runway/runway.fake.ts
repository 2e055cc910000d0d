import { randomUUID } from 'node:crypto';
import { sendBytes, sendJson, startServer } from '../../http-server.js';
import { sizedMp4 as clip } from '../../media.js';
import type { FakeVideoVendor } from '../video-fake.js';

const RUNWAY_VERSION = '2024-11-06';
const GEN4_RATIOS = ['1280:720', '720:1280', '1104:832', '832:1104', '960:960', '1584:672'];
const VEO_RATIOS = ['1280:720', '720:1280', '1080:1920', '1920:1080'];
/** Runway's models as SDK 4.x types them: endpoints, ratios, durations, the frame positions they take. */
const RUNWAY_MODELS: Record<string, { t2v: boolean; ratios: string[]; durations: number[]; last: boolean }> = {
  'gen4.5': { t2v: true, ratios: GEN4_RATIOS, durations: [2, 3, 4, 5, 6, 7, 8, 9, 10], last: false },
  gen4_turbo: { t2v: false, ratios: GEN4_RATIOS, durations: [5, 10], last: false },
  'veo3.1': { t2v: true, ratios: VEO_RATIOS, durations: [4, 6, 8], last: true },
  'veo3.1_fast': { t2v: true, ratios: VEO_RATIOS, durations: [4, 6, 8], last: true },
  seedance2: { t2v: true, ratios: ['1280:720', '720:1280', '960:960'], durations: [5, 10], last: true },
};

/**
 * Runway's API as `@runwayml/sdk` 4.x speaks it: Bearer key and `X-Runway-Version`, POST /v1/image_to_video
 * and /v1/text_to_video → {id}, GET /v1/tasks/{id} (PENDING → RUNNING → SUCCEEDED with `output`, or FAILED
 * with `failure` and `failureCode`), DELETE /v1/tasks/{id} → 204 (then 404), GET /v1/organization; its 400s
 * `{error, issues}`; images only as HTTPS URLs or `data:` URIs under 5 MB.
 */
export async function startFakeRunway(apiKey: string): Promise<FakeVideoVendor> {
  const created: FakeVideoVendor['created'] = new Map();
  const authFailures: string[] = [];
  const knobs: FakeVideoVendor['knobs'] = { pollsUntilDone: 2 };
  const server = await startServer((req, res) => {
    const url = new URL(req.url ?? '/', 'http://x');
    const file = /^\/files\/(.+)\.mp4$/.exec(url.pathname);
    if (file && created.has(file[1])) return sendBytes(res, 'video/mp4', clip(created.get(file[1])!.size, created.get(file[1])!.seconds));
    if (req.headers.authorization !== `Bearer ${apiKey}`) {
      authFailures.push(req.headers.authorization ?? 'none');
      return sendJson(res, 401, { error: 'Invalid API key' });
    }
    if (req.headers['x-runway-version'] !== RUNWAY_VERSION) return sendJson(res, 400, { error: `Invalid X-Runway-Version header; use ${RUNWAY_VERSION}` });
    const invalid = (path: string, message: string) => sendJson(res, 400, { error: 'Validation of body failed', issues: [{ code: 'custom', path: [path], message }], docUrl: 'https://docs.dev.runwayml.com/api' });
    if (req.method === 'GET' && url.pathname === '/v1/organization') return sendJson(res, 200, { creditBalance: 1000, tier: { maxMonthlyCreditSpend: 10000, models: {} }, usage: { models: {} } });
    const task = /^\/v1\/tasks\/(.+)$/.exec(url.pathname);
    if (task) {
      const t = created.get(task[1]);
      if (!t || t.deleted) return sendJson(res, 404, { error: 'Not found' });
      if (req.method === 'DELETE') {
        t.deleted = true;
        res.writeHead(204).end();
        return;
      }
      t.polls++;
      const common = { id: task[1], createdAt: new Date().toISOString() };
      if (knobs.stall || t.polls < knobs.pollsUntilDone) return sendJson(res, 200, { ...common, status: t.polls === 1 ? 'PENDING' : 'RUNNING', ...(t.polls > 1 ? { progress: 0.5 } : {}), estimatedCost: { credits: 50 } });
      if (knobs.failWith) return sendJson(res, 200, { ...common, status: 'FAILED', failure: knobs.failWith, ...(knobs.failCode ? { failureCode: knobs.failCode } : {}), cost: { credits: 0 } });
      return sendJson(res, 200, { ...common, status: 'SUCCEEDED', output: [`${server.url}/files/${task[1]}.mp4?expires=${Date.now() + 86_400_000}`], cost: { credits: 50 } });
    }
    const create = /^\/v1\/(image_to_video|text_to_video)$/.exec(url.pathname);
    if (!create || req.method !== 'POST') return sendJson(res, 404, { error: 'Not found' });
    const body = JSON.parse(req.body.toString()) as Record<string, unknown>;
    const model = RUNWAY_MODELS[String(body.model)];
    if (!model || (create[1] === 'text_to_video' && !model.t2v)) return invalid('model', `Invalid input: ${String(body.model)} is not a model of ${create[1]}`);
    if (typeof body.ratio !== 'string' || !model.ratios.includes(body.ratio)) return invalid('ratio', `Invalid enum value. Expected ${model.ratios.join(' | ')}`);
    if (typeof body.duration !== 'number' || !model.durations.includes(body.duration)) return invalid('duration', `Invalid duration for ${String(body.model)}`);
    if (body.promptText !== undefined && (typeof body.promptText !== 'string' || body.promptText.length > 1000)) return invalid('promptText', 'String must contain at most 1000 character(s)');
    if (create[1] === 'text_to_video' && typeof body.promptText !== 'string') return invalid('promptText', 'Required');
    if (body.seed !== undefined && !Number.isInteger(body.seed)) return invalid('seed', 'Expected integer');
    if (create[1] === 'image_to_video') {
      const images = typeof body.promptImage === 'string' ? [{ uri: body.promptImage, position: 'first' }] : (body.promptImage as { uri?: unknown; position?: unknown }[] | undefined);
      if (!Array.isArray(images) || images.length === 0) return invalid('promptImage', 'Required');
      for (const image of images) {
        const uri = String(image.uri);
        if (!uri.startsWith('https://') && !/^data:image\/(png|jpeg|webp);base64,/.test(uri)) return sendJson(res, 400, { error: 'Only HTTPS URLs are allowed.' });
        if (uri.length >= 5 * 1024 * 1024) return sendJson(res, 400, { error: 'Invalid data URI.' });
        if (image.position !== 'first' && !(image.position === 'last' && model.last)) return invalid('promptImage', `position ${String(image.position)} is not taken by ${String(body.model)}`);
      }
      if (images.some((i) => i.position === 'last') && !images.some((i) => i.position === 'first')) return invalid('promptImage', 'a last frame needs a first frame');
    }
    const id = randomUUID();
    created.set(id, { path: create[1], body, polls: 0, size: body.ratio.replace(':', 'x'), seconds: body.duration });
    return sendJson(res, 200, { id, estimatedCost: { credits: 50 } });
  });
  return { server, url: server.url, created, knobs, authFailures, close: () => server.close() };
}
