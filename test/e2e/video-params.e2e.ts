import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { frameColour, solid } from '../support/media.js';
import { pollUntil } from '../support/poll.js';
import { api, createTestDatabase, queryDb, startTestApp, type TestApp, type TestDatabase } from '../support/test-app.js';
import { startReceiver } from '../support/webhook-receiver.js';

/** The migration that rewrote video's parameters into the gateway's own words. */
const VIDEO_PARAMS_MIGRATION = '20261202030000_video_params';

const LUMA = '/video-b/v1/generations';
const KLING = '/video-a/v1/videos';
const OPENAI = '/openai/v1/videos';

/**
 * Video's parameters document is the normalized request (VideoRequest: aspectRatio, durationS, firstFrame…),
 * the images as stored and the door it came through, not the Luma door's body (aspect_ratio, duration "5s",
 * keyframes, any_model, Kling's cfg_scale…). Generations accepted before the change were stored in the Luma
 * door's shape, as each of the three doors wrote it: an upgrade rewrites them, and each reads the same through
 * the Luma, Kling and OpenAI doors and GET /tasks (its callbacks' body) afterwards, and one waiting in the queue
 * runs from its uploaded frame. The old shapes are written here literally, as the old code stored them.
 */
describe("video's parameters in the gateway's own words", () => {
  let db: TestDatabase;
  let t: TestApp | undefined;
  let key: string;
  let hooks: Awaited<ReturnType<typeof startReceiver>>;
  let dataDir: string;
  // one store for every instance: the queued generation's uploaded frame is read by the next one
  const env = () => ({ ALLOW_PRIVATE_URLS: 'true', DATA_DIR: dataDir });
  beforeAll(async () => {
    db = await createTestDatabase({ migrated: true });
    dataDir = await mkdtemp(path.join(tmpdir(), 'mgw-video-params-'));
    hooks = await startReceiver();
  });
  afterAll(async () => {
    await t?.close();
    await hooks.close();
    await db.drop();
    await rm(dataDir, { recursive: true, force: true });
  });

  const post = async (path: string, body: unknown) => {
    const res = await api(t!.url, 'POST', path, { key, body });
    if (res.status >= 300) throw new Error(`${path} answered ${res.status}: ${res.text}`);
    return res.body;
  };
  /** Signed links carry a fresh signature at each read: their paths are what must not change. */
  const unsigned = (v: unknown): unknown => JSON.parse(JSON.stringify(v).replace(/"(https?:\/\/[^"?]*)\?[^"]*"/g, '"$1"'));
  /** A generation as every door reads it, and the record GET /tasks shows (its callbacks' body). */
  const readings = async (id: string) => ({
    luma: unsigned((await api(t!.url, 'GET', `${LUMA}/${id}`, { key })).body),
    kling: unsigned((await api(t!.url, 'GET', `${KLING}/text2video/${id}`, { key })).body.data),
    openai: unsigned((await api(t!.url, 'GET', `${OPENAI}/${id}`, { key })).body),
    record: unsigned((await api(t!.url, 'GET', `/tasks/${id}`, { key })).body.record),
  });
  const ended = (id: string) => pollUntil(() => api(t!.url, 'GET', `${OPENAI}/${id}`, { key }), (r) => ['completed', 'failed'].includes(r.body.status), { timeoutMs: 90_000, what: `generation ${id}` });
  const paramsOf = async (ids: string[]) => Object.fromEntries((await queryDb<{ id: string; params: any }>(db, 'SELECT id, params FROM tasks WHERE id = ANY($1::uuid[])', [ids])).map((r) => [r.id, r.params]));

  it('stores the normalized request, and an upgrade rewrites generations stored in the Luma door\'s shape by each door, which then read the same through every door and run', async () => {
    t = await startTestApp(env(), { db });
    key = await t.createKey('team-video-params');
    const sample = `${t.url}/samples/keyframe.jpg`;
    const red = await solid(640, 360, [220, 30, 30]);

    // one generation per way in: Luma's keyframe and concepts, a continuation, Kling's text2video with its own
    // fields, Kling's image2video with a Base64 frame and a linked tail, OpenAI's uploaded frame, OpenAI's reference image
    const l1 = (await post(LUMA, { prompt: 'L1', keyframes: { frame0: { type: 'image', url: sample } }, concepts: [{ key: 'dolly_zoom' }], resolution: '720p', duration: '5s', loop: true, callback_url: `${hooks.url}/l1` })).id;
    expect((await ended(l1)).body.status).toBe('completed');
    const l2 = (await post(LUMA, { prompt: 'L2', model: 'ray-2', aspect_ratio: '9:16', keyframes: { frame0: { type: 'generation', id: l1 } } })).id;
    const k1 = (await post(`${KLING}/text2video`, { prompt: 'K1', model_name: 'kling-v1', mode: 'pro', duration: '10', negative_prompt: 'blur', cfg_scale: 0.5, camera_control: { type: 'simple', config: { zoom: 5 } }, aspect_ratio: '1:1', external_task_id: 'ext-k1', callback_url: `${hooks.url}/k1` })).data.task_id;
    const k2 = (await post(`${KLING}/image2video`, { prompt: 'K2', image: red.toString('base64'), image_tail: sample, mode: 'pro' })).data.task_id;
    const form = new FormData();
    form.set('prompt', 'O1');
    form.set('size', '720x1280');
    form.set('seconds', '8');
    form.set('input_reference', new Blob([new Uint8Array(await solid(720, 1280, [20, 200, 40]))], { type: 'image/png' }), 'frame.png');
    const o1 = ((await (await fetch(`${t.url}${OPENAI}`, { method: 'POST', headers: { authorization: `Bearer ${key}` }, body: form })).json()) as { id: string }).id;
    const o2 = (await post(OPENAI, { prompt: 'O2', input_reference: { image_url: sample }, input_reference_role: 'reference_image' })).id;
    const made = [l1, l2, k1, k2, o1, o2];
    for (const id of made) expect((await ended(id)).body.status).toBe('completed');

    // stored as the normalized request, each image by id, URL or upload, and the door
    const stored = await paramsOf(made);
    const frameId = (id: string, frame: 'firstFrame' | 'lastFrame') => stored[id][frame].id as string;
    expect(stored[l1]).toEqual({ prompt: 'L1', loop: true, resolution: '720p', durationS: 5, concepts: ['dolly_zoom'], firstFrame: { type: 'image', id: expect.any(String), url: sample }, door: 'luma' });
    // a named model asked no duration: the one it makes is stated (ray-2's 5 s), and priced, made and shown at it
    expect(stored[l2]).toEqual({ prompt: 'L2', loop: false, model: 'ray-2', aspectRatio: '9:16', durationS: 5, firstFrame: { type: 'generation', generationId: l1 }, door: 'luma' });
    expect(stored[k1]).toEqual({ prompt: 'K1', loop: false, model: 'kling-v1', resolution: '1080p', durationS: 10, aspectRatio: '1:1', negativePrompt: 'blur', cfgScale: 0.5, cameraControl: { type: 'simple', config: { zoom: 5 } }, door: 'kling' });
    expect(stored[k2]).toEqual({ prompt: 'K2', loop: false, resolution: '1080p', firstFrame: { type: 'image', id: expect.any(String), upload: true }, lastFrame: { type: 'image', id: expect.any(String), url: sample }, door: 'kling' });
    expect(stored[o1]).toEqual({ prompt: 'O1', loop: false, aspectRatio: '9:16', resolution: '720p', durationS: 8, firstFrame: { type: 'image', id: expect.any(String), upload: true }, door: 'openai' });
    expect(stored[o2]).toEqual({ prompt: 'O2', loop: false, aspectRatio: '16:9', resolution: '720p', referenceImages: [{ type: 'image', id: expect.any(String), url: sample }], door: 'openai' });
    const before: Record<string, unknown> = {};
    for (const id of made) before[id] = await readings(id);
    // what the Luma door echoes of each: its own fields back from the normalized request (enhance: its own generations)
    expect((before[l1] as any).luma.request).toEqual({ prompt: 'L1', aspect_ratio: '16:9', enhance: true, request_type: 'image_to_video', generation_type: 'video', model: 'ray-2', loop: true, resolution: '720p', duration: '5s', keyframes: { frame0: { type: 'image', url: sample } }, concepts: [{ key: 'dolly_zoom' }], callback_url: `${hooks.url}/l1` });
    expect((before[k2] as any).luma.media_request).toEqual({ end: { id: frameId(k2, 'lastFrame'), media_type: null, thumbnail: null, type: 'upload' }, loop: false, prompt_type: 'keyframe', start: { id: frameId(k2, 'firstFrame'), media_type: null, thumbnail: null, type: 'upload' }, text: 'K2' });
    expect((before[k1] as any).record).toEqual((before[k1] as any).kling);
    expect([(before[o1] as any).openai.model, (before[o1] as any).openai.seconds, (before[o1] as any).openai.size, (before[k2] as any).openai.size]).toEqual(['sandbox', '8', '720x1280', '1920x1080']);
    await t.close();

    // a Kling image2video accepted by an instance without workers: it waits in the queue through the upgrade
    t = await startTestApp({ ...env(), ROLE: 'api' }, { db });
    const queued = (await post(`${KLING}/image2video`, { prompt: 'Q', image: red.toString('base64'), mode: 'std', duration: '5', sound: 'on', callback_url: `${hooks.url}/q` })).data.task_id;
    const queuedBefore = await readings(queued);
    expect((queuedBefore as any).kling.task_status).toBe('submitted');
    const [queuedStored] = Object.values(await paramsOf([queued]));
    expect(queuedStored).toEqual({ prompt: 'Q', loop: false, resolution: '720p', durationS: 5, audio: true, firstFrame: { type: 'image', id: expect.any(String), upload: true }, door: 'kling' });
    await t.close();
    t = undefined;

    // the rows as the code before the change wrote them (each door's body in the Luma door's shape), the migration not yet applied
    const old: Record<string, unknown> = {
      [l1]: { prompt: 'L1', aspect_ratio: '16:9', loop: true, enhance: true, model: 'ray-2', resolution: '720p', duration: '5s', concepts: [{ key: 'dolly_zoom' }], keyframes: [{ id: frameId(l1, 'firstFrame'), position: 'frame0', type: 'image', url: sample }], any_model: true, default_aspect_ratio: true },
      [l2]: { prompt: 'L2', aspect_ratio: '9:16', loop: false, enhance: true, model: 'ray-2', keyframes: [{ id: '0f5d8a52-95a1-4b7e-a1b3-c0c2b7e0a111', position: 'frame0', type: 'generation', generation_id: l1 }] },
      [k1]: { prompt: 'K1', aspect_ratio: '1:1', loop: false, enhance: false, model: 'kling-v1', resolution: '1080p', duration: '10s', keyframes: [], door: 'kling', negative_prompt: 'blur', cfg_scale: 0.5, camera_control: { type: 'simple', config: { zoom: 5 } } },
      [k2]: { prompt: 'K2', aspect_ratio: '16:9', loop: false, enhance: false, model: 'ray-2', resolution: '1080p', keyframes: [{ id: frameId(k2, 'firstFrame'), position: 'frame0', type: 'image', upload: true }, { id: frameId(k2, 'lastFrame'), position: 'frame1', type: 'image', url: sample }], any_model: true, default_aspect_ratio: true, door: 'kling' },
      [o1]: { prompt: 'O1', aspect_ratio: '9:16', loop: false, enhance: false, model: 'ray-2', resolution: '720p', duration: '8s', keyframes: [{ id: frameId(o1, 'firstFrame'), position: 'frame0', type: 'image', upload: true }], any_model: true, door: 'openai' },
      [o2]: { prompt: 'O2', aspect_ratio: '16:9', loop: false, enhance: false, model: 'ray-2', resolution: '720p', keyframes: [], references: [{ id: stored[o2].referenceImages[0].id, index: 0, url: sample }], any_model: true, door: 'openai' },
      [queued]: { prompt: 'Q', aspect_ratio: '16:9', loop: false, enhance: false, model: 'ray-2', resolution: '720p', duration: '5s', keyframes: [{ id: (queuedStored as any).firstFrame.id, position: 'frame0', type: 'image', upload: true }], any_model: true, default_aspect_ratio: true, door: 'kling', audio: true },
    };
    for (const [id, params] of Object.entries(old)) await queryDb(db, 'UPDATE tasks SET params = $2 WHERE id = $1', [id, JSON.stringify(params)]);
    await queryDb(db, 'DELETE FROM _prisma_migrations WHERE migration_name = $1', [VIDEO_PARAMS_MIGRATION]);

    // the upgrade: the instance applies the migration at its start
    t = await startTestApp(env(), { db });
    const rewritten = await paramsOf([...made, queued]);
    // l2 as the code before wrote it: its named model's duration not stated (since 0f20f5c a new task states it),
    // so it reads as it did then, its Luma echo without the duration it never asked (every other reading the same)
    const { durationS: _stated, ...l2Before } = stored[l2];
    expect(rewritten).toEqual({ ...stored, [l2]: l2Before, [queued]: queuedStored });
    const unstated = structuredClone(before[l2]) as any;
    for (const reading of [unstated.luma, unstated.record]) if (reading?.request) delete reading.request.duration;
    for (const id of made) expect([id, await readings(id)]).toEqual([id, id === l2 ? unstated : before[id]]);

    // the queued one runs from its uploaded frame, with sound, and its callbacks are Kling's records
    const done = await ended(queued);
    expect([done.body.status, done.body.error, done.body.seconds, done.body.size]).toEqual(['completed', null, '5', '1280x720']);
    const content = Buffer.from(await (await fetch(`${t.url}${OPENAI}/${queued}/content`, { headers: { authorization: `Bearer ${key}` } })).arrayBuffer());
    const [r, g] = await frameColour(content, 'first');
    expect(r).toBeGreaterThan(150);
    expect(g).toBeLessThan(90);
    const callbacks = await pollUntil(async () => hooks.received.filter((h) => h.path === '/q'), (list) => list.some((h) => h.json?.task_status === 'succeed'), { timeoutMs: 30_000, what: "the queued generation's callbacks" });
    expect(callbacks.map((h) => h.json.task_status).sort()).toEqual(['processing', 'succeed']);
    expect(callbacks.find((h) => h.json.task_status === 'succeed')!.json).toEqual(expect.objectContaining({ task_id: queued, task_result: { videos: [expect.objectContaining({ duration: '5' })] } }));
  }, 300_000);
});
