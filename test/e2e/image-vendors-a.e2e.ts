import OpenAI, { toFile } from 'openai';
import sharp from 'sharp';
import { UpstreamBusy, UpstreamGenerationFailed, UpstreamRefused } from '../../src/infra/relay/upstream-client.js';
import type { ImageModelSpec, ImageRequest } from '../../src/vendors/contracts/image-request.js';
import type { ImageCreate, ImageInput } from '../../src/vendors/contracts/image-vendor.js';
import type { VendorAccount } from '../../src/vendors/contracts/vendor.js';
import { GeminiImageVendor } from '../../src/vendors/google/gemini-image.vendor.js';
import { GOOGLE } from '../../src/vendors/google/google.vendor.js';
import { OpenAIImageVendor } from '../../src/vendors/openai/openai-image.vendor.js';
import { OPENAI } from '../../src/vendors/openai/openai.vendor.js';
import { refusesContent } from '../../src/vendors/registry.js';
import { type FakeGemini, startFakeGemini } from '../support/vendors/google/gemini.fake.js';
import { type FakeOpenAIImages, startFakeOpenAIImages } from '../support/vendors/openai/openai.fake.js';
import { png } from '../support/images.js';
import { plainUpstreamClient } from '../support/plain-upstream-client.js';
import { pollUntil } from '../support/poll.js';
import { queryDb } from '../support/test-database.js';
import { api, startTestApp, type TestApp } from '../support/test-app.js';

const ADMIN = 'admin-secret-0123456789';
const OPENAI_KEY = 'sk-openai-images-0123456789';
const GEMINI_KEY = 'AIza-gemini-images-0123456789';
const KLING_DOOR = '/video-a/v1/images/generations';

/** An image's format, size and whether it has an alpha channel. */
async function described(bytes: Buffer): Promise<[string | undefined, number | undefined, number | undefined, boolean | undefined]> {
  const meta = await sharp(bytes).metadata();
  return [meta.format, meta.width, meta.height, meta.hasAlpha];
}

/**
 * OpenAI's Images API and Google's Gemini API as image channels (fakes from their documented shapes): each
 * serves the doors in turn (the other channel disabled), asked in its own vocabulary (OpenAI's JSON and
 * multipart with `image[]` and a mask; Gemini's `contents` and `generationConfig.imageConfig`, n calls for n
 * images), its images stored in the asked shape and format; a refusal by either's moderation ends the task
 * with the vendor's words.
 */
describe('image vendors A: OpenAI and Gemini behind the doors', () => {
  let t: TestApp;
  let key: string;
  let openaiFake: FakeOpenAIImages;
  let gemini: FakeGemini;
  let openai: OpenAI;
  const channels: Record<string, string> = {};

  beforeAll(async () => {
    [openaiFake, gemini] = await Promise.all([startFakeOpenAIImages(OPENAI_KEY), startFakeGemini(GEMINI_KEY)]);
    t = await startTestApp({ IMAGE_PROVIDER: 'relay', ADMIN_API_KEY: ADMIN, OUTBOUND_ALLOW_HOSTS: '127.0.0.1', RELAY_POLL_MS: '100' });
    key = await t.createKey('team-images-a');
    openai = new OpenAI({ apiKey: key, baseURL: `${t.url}/openai/v1`, maxRetries: 0 });
    const add = async (name: string, body: Record<string, unknown>) => {
      const res = await api(t.url, 'POST', '/admin/channels', { key: ADMIN, body: { name, operations: ['image'], ...body } });
      expect([name, res.status]).toEqual([name, 201]);
      channels[name] = res.body.id as string;
    };
    await add('openai', { protocol: 'openai', base_url: openaiFake.url, credentials: { api_key: OPENAI_KEY } });
    await add('gemini', { protocol: 'gemini', base_url: gemini.baseUrl, credentials: { api_key: GEMINI_KEY } });
  }, 60_000);
  afterAll(async () => {
    await t.close();
    await Promise.all([openaiFake.close(), gemini.close()]);
  });

  const admin = (method: string, path: string, body?: unknown) => api(t.url, method, path, { key: ADMIN, body });
  /** Only this channel takes tasks. */
  const only = async (name: string) => {
    for (const [other, id] of Object.entries(channels)) expect((await admin('POST', `/admin/channels/${id}/${other === name ? 'enable' : 'disable'}`)).status).toBe(200);
  };
  const attempts = async (id: string) => ((await admin('GET', `/admin/tasks/${id}/attempts`)).body as { channel: string; outcome: string }[]).map((a) => [a.channel, a.outcome]);
  const klingTask = async (id: string) =>
    (await pollUntil(() => api(t.url, 'GET', `${KLING_DOOR}/${id}`, { key }), (r) => ['succeed', 'failed'].includes(r.body.data?.task_status), { timeoutMs: 30_000, what: `image task ${id}` })).body.data;
  const fetched = async (url: string) => Buffer.from(await (await fetch(url)).arrayBuffer());

  it('channel tests: OpenAI by GET /models with its Bearer key, Gemini by GET /models?pageSize=1 with x-goog-api-key', async () => {
    for (const name of ['openai', 'gemini']) expect([name, (await admin('POST', `/admin/channels/${channels[name]}/test`)).body.ok]).toEqual([name, true]);
    expect(openaiFake.server.requests.at(-1)).toEqual(expect.objectContaining({ method: 'GET', url: '/v1/models', headers: expect.objectContaining({ authorization: `Bearer ${OPENAI_KEY}` }) }));
    expect(gemini.server.requests.at(-1)).toEqual(expect.objectContaining({ method: 'GET', url: '/v1beta/models?pageSize=1', headers: expect.objectContaining({ 'x-goog-api-key': GEMINI_KEY }) }));
  });

  it('OpenAI: a generation as its JSON (PNG asked, converted to the asked WebP, transparent) and an edit as multipart with image[] parts and the mask', async () => {
    await only('openai');
    const made = await openai.images.generate({ model: 'gpt-image-1', prompt: 'A sticker of a red fox', n: 2, size: '1536x1024', quality: 'low', background: 'transparent', output_format: 'webp' });
    expect(openaiFake.received.at(-1)).toEqual(
      expect.objectContaining({ path: '/v1/images/generations', body: { model: 'gpt-image-1', prompt: 'A sticker of a red fox', n: 2, size: '1536x1024', quality: 'low', background: 'transparent', output_format: 'png' }, status: 200 }),
    );
    expect(made.data).toHaveLength(2);
    for (const image of made.data!) expect(await described(Buffer.from(image.b64_json!, 'base64'))).toEqual(['webp', 1536, 1024, true]);

    const mask = await sharp({ create: { width: 640, height: 480, channels: 4, background: { r: 0, g: 0, b: 0, alpha: 0 } } })
      .png()
      .toBuffer();
    const edited = await openai.images.edit({
      model: 'gpt-image-1.5',
      prompt: 'Put a hat on it',
      image: [await toFile(await png(640, 480), 'a.png', { type: 'image/png' }), await toFile(await png(320, 320), 'b.png', { type: 'image/png' })],
      mask: await toFile(mask, 'mask.png', { type: 'image/png' }),
      size: '1024x1024',
    });
    const edit = openaiFake.received.at(-1)!;
    expect([edit.path, edit.fields]).toEqual(['/v1/images/edits', { model: 'gpt-image-1.5', prompt: 'Put a hat on it', n: '1', size: '1024x1024', output_format: 'png' }]);
    expect(edit.files!.map((f) => [f.field, f.type, f.width, f.height])).toEqual([
      ['image[]', 'image/png', 640, 480],
      ['image[]', 'image/png', 320, 320],
      ['mask', 'image/png', 640, 480],
    ]);
    expect(await described(Buffer.from(edited.data![0].b64_json!, 'base64'))).toEqual(['png', 1024, 1024, false]);
  }, 60_000);

  it("OpenAI: a Kling-door generation with a reference image goes to /images/edits without a mask, at the size of the asked shape", async () => {
    await only('openai');
    const created = await api(t.url, 'POST', KLING_DOOR, { key, body: { model_name: 'gpt-image-1-mini', prompt: 'The same cat, as a watercolour', image: (await png(600, 400)).toString('base64'), aspect_ratio: '2:3' } });
    expect([created.status, created.body.code]).toEqual([200, 0]);
    const task = await klingTask(created.body.data.task_id);
    expect([task.task_status, task.task_status_msg]).toEqual(['succeed', '']);
    const edit = openaiFake.received.at(-1)!;
    expect([edit.path, edit.fields, edit.files!.map((f) => [f.field, f.width, f.height])]).toEqual([
      '/v1/images/edits',
      { model: 'gpt-image-1-mini', prompt: 'The same cat, as a watercolour', n: '1', size: '1024x1536', output_format: 'png' },
      [['image[]', 600, 400]],
    ]);
    const [w, h] = (await described(await fetched(task.task_result.images[0].url))).slice(1, 3) as number[];
    expect(w / h).toBeCloseTo(2 / 3, 2);
  }, 60_000);

  it('Gemini: n images as n generateContent calls (imageConfig of the asked size’s shape), fitted to the asked size; a Kling-door 16:9 at 2K with imageSize 2K', async () => {
    await only('gemini');
    const before = gemini.received.length;
    const made = await openai.images.generate({ model: 'gemini-2.5-flash-image', prompt: 'A harbour at dusk', n: 2, size: '1536x1024' });
    const calls = gemini.received.slice(before);
    expect(calls.map((c) => [c.path, c.key, c.made])).toEqual([
      ['/v1beta/models/gemini-2.5-flash-image:generateContent', 'header', { aspectRatio: '3:2', width: 1248, height: 832, mimeType: 'image/png' }],
      ['/v1beta/models/gemini-2.5-flash-image:generateContent', 'header', { aspectRatio: '3:2', width: 1248, height: 832, mimeType: 'image/png' }],
    ]);
    expect(calls[0].body).toEqual({ contents: [{ role: 'user', parts: [{ text: 'A harbour at dusk' }] }], generationConfig: { responseModalities: ['IMAGE'], imageConfig: { aspectRatio: '3:2' } } });
    expect(made.data).toHaveLength(2);
    for (const image of made.data!) expect(await described(Buffer.from(image.b64_json!, 'base64'))).toEqual(['png', 1536, 1024, false]);

    const created = await api(t.url, 'POST', KLING_DOOR, { key, body: { model_name: 'gemini-3-pro-image-preview', prompt: 'A lighthouse in a storm', aspect_ratio: '16:9', resolution: '2k' } });
    expect([created.status, created.body.code]).toEqual([200, 0]);
    const task = await klingTask(created.body.data.task_id);
    expect([task.task_status, task.task_status_msg]).toEqual(['succeed', '']);
    const call = gemini.received.at(-1)!;
    expect([call.model, call.body.generationConfig, call.made]).toEqual(['gemini-3-pro-image-preview', { responseModalities: ['IMAGE'], imageConfig: { aspectRatio: '16:9', imageSize: '2K' } }, { aspectRatio: '16:9', width: 2752, height: 1536, mimeType: 'image/png' }]);
    const [format, w, h] = await described(await fetched(task.task_result.images[0].url));
    expect([format, Math.max(w!, h!) > 1536 && Math.max(w!, h!) <= 2880]).toEqual(['png', true]);
    expect(w! / h!).toBeCloseTo(16 / 9, 1);
    expect(await attempts(created.body.data.task_id)).toEqual([['gemini', 'accepted']]);
  }, 60_000);

  it("OpenAI's insufficient_quota (429, not busy) disables its channel and the task goes on to Gemini", async () => {
    for (const id of Object.values(channels)) expect((await admin('POST', `/admin/channels/${id}/enable`)).status).toBe(200);
    expect((await admin('PATCH', `/admin/channels/${channels.openai}`, { priority: 10 })).status).toBe(200);
    openaiFake.knobs.insufficientQuota = true;
    try {
      const created = await api(t.url, 'POST', KLING_DOOR, { key, body: { prompt: 'A teapot', aspect_ratio: '1:1' } });
      expect([created.status, created.body.code]).toEqual([200, 0]);
      const task = await klingTask(created.body.data.task_id);
      expect(task.task_status).toBe('succeed');
      expect(await attempts(created.body.data.task_id)).toEqual([
        ['openai', 'refused_account'],
        ['gemini', 'accepted'],
      ]);
      const channel = (await admin('GET', `/admin/channels/${channels.openai}`)).body;
      expect([channel.status, channel.status_reason]).toEqual(['auto_disabled', expect.stringMatching(/credit.*insufficient_quota/)]);
      // the refusal counts as its last test: the periodic test (GET /models, which passes without credit) comes an
      // interval later, not at the next tick, which would give it tasks again at once
      const [{ since }] = await queryDb<{ since: number }>(t.db, `SELECT extract(epoch FROM now() - tested_at)::float8 AS since FROM channels WHERE id = $1`, [channels.openai]);
      expect(since).toBeLessThan(60);
    } finally {
      openaiFake.knobs.insufficientQuota = false;
      await admin('PATCH', `/admin/channels/${channels.openai}`, { priority: 0 });
    }
  }, 60_000);

  it('an image OpenAI answers cut off (HTTP 200) made nothing usable: the task goes on to Gemini, which makes it; alone, OpenAI\'s words end it', async () => {
    for (const id of Object.values(channels)) expect((await admin('POST', `/admin/channels/${id}/enable`)).status).toBe(200);
    expect((await admin('PATCH', `/admin/channels/${channels.openai}`, { priority: 10 })).status).toBe(200);
    try {
      openaiFake.knobs.cutShort = 1;
      const created = await api(t.url, 'POST', KLING_DOOR, { key, body: { prompt: 'A teapot', aspect_ratio: '1:1' } });
      const task = await klingTask(created.body.data.task_id);
      expect(task.task_status).toBe('succeed');
      expect(await attempts(created.body.data.task_id)).toEqual([
        ['openai', 'failed'],
        ['gemini', 'accepted'],
      ]);
      // with no other channel: the task ends in those words (a 502 through OpenAI's door), OpenAI asked once
      await only('openai');
      const before = openaiFake.received.length;
      openaiFake.knobs.cutShort = 1;
      const failed = (await openai.images.generate({ model: 'gpt-image-1', prompt: 'A teapot' }).catch((e: unknown) => e)) as InstanceType<typeof OpenAI.APIError>;
      expect([failed.status, failed.message]).toEqual([502, expect.stringMatching(/the upstream's image 0 must be a whole PNG file; its header is truncated or corrupt/)]);
      expect(openaiFake.received.length - before).toBe(1);
    } finally {
      openaiFake.knobs.cutShort = 0;
      await admin('PATCH', `/admin/channels/${channels.openai}`, { priority: 0 });
    }
  }, 60_000);

  it("a content refusal ends the task with the vendor's words: Gemini's IMAGE_SAFETY (HTTP 200, no image), OpenAI's moderation_blocked", async () => {
    await only('gemini');
    gemini.knobs.refuse = true;
    const created = await api(t.url, 'POST', KLING_DOOR, { key, body: { model_name: 'gemini-3.1-flash-image-preview', prompt: 'Something it will not draw', aspect_ratio: '1:1' } });
    const task = await klingTask(created.body.data.task_id);
    gemini.knobs.refuse = false;
    expect(task.task_status).toBe('failed');
    expect(task.task_status_msg).toMatch(/safety filters refused the image \(finishReason IMAGE_SAFETY\)/);
    expect(await attempts(created.body.data.task_id)).toEqual([['gemini', 'failed']]);

    await only('openai');
    openaiFake.knobs.moderation = true;
    const refused = openai.images.generate({ model: 'gpt-image-1', prompt: 'Something it will not draw' });
    await expect(refused).rejects.toMatchObject({ status: 400, code: 'moderation_blocked', message: expect.stringMatching(/rejected by the safety system/) });
    openaiFake.knobs.moderation = false;
    expect(openaiFake.received.at(-1)).toEqual(expect.objectContaining({ path: '/v1/images/generations' }));
  }, 60_000);

  it("a request the vendor refuses (not its content) is a 400 in the vendor's words through OpenAI's door, not a 502; the vendor asked once", async () => {
    await only('openai');
    const before = openaiFake.received.length;
    openaiFake.knobs.invalid = { param: 'prompt', message: "Invalid 'prompt': string too long. Expected a string with maximum length 32000, but got a string with length 32001 instead." };
    const refused = (await openai.images.generate({ model: 'gpt-image-1', prompt: 'A lighthouse' }).catch((e: unknown) => e)) as InstanceType<typeof OpenAI.APIError>;
    expect([refused.constructor.name, refused.status, refused.type, refused.message]).toEqual(['BadRequestError', 400, 'invalid_request_error', expect.stringMatching(/^400 the image task .* failed: the upstream refused the task: Invalid 'prompt': string too long/)]);
    expect([openaiFake.received.length - before, openaiFake.received.at(-1)!.status]).toEqual([1, undefined]);
  }, 60_000);
});


/**
 * The two adapters alone against the fakes: what each sends for the cases the doors rarely reach (gpt-image-2's
 * free sizes, Gemini's seeds and input parts), and each vendor's failures thrown as the relay reads them (busy,
 * the account's, the credentials', a content refusal, an unusable answer).
 */
describe('image vendors A: the adapters against their fakes', () => {
  const client = plainUpstreamClient();
  const openaiVendor = new OpenAIImageVendor(client);
  const geminiVendor = new GeminiImageVendor(client);
  let openaiFake: FakeOpenAIImages;
  let gemini: FakeGemini;
  let openaiAccount: VendorAccount;
  let geminiAccount: VendorAccount;
  beforeAll(async () => {
    [openaiFake, gemini] = await Promise.all([startFakeOpenAIImages(OPENAI_KEY), startFakeGemini(GEMINI_KEY)]);
    openaiAccount = { baseUrl: openaiFake.url, auth: OPENAI.auth({ api_key: OPENAI_KEY }) };
    geminiAccount = { baseUrl: gemini.baseUrl, auth: GOOGLE.auth({ api_key: GEMINI_KEY }) };
  });
  afterAll(async () => {
    await Promise.all([openaiFake.close(), gemini.close()]);
  });

  const request = (over: Partial<ImageRequest> = {}): ImageRequest => ({ mode: 'generate', prompt: 'A lighthouse at dusk', n: 1, outputFormat: 'png', images: 0, mask: false, ...over });
  const creating = (model: ImageModelSpec, req: ImageRequest, inputs: ImageInput[] = []): ImageCreate => ({ model, request: req, taskId: 'task-a', images: async () => inputs, mask: async () => undefined, partial: async () => undefined });
  const spec = (vendor: { models: readonly ImageModelSpec[] }, id: string) => vendor.models.find((m) => m.id === id)!;
  const failure = (work: Promise<unknown>) => work.then(() => 'no failure', (err: unknown) => err);

  it('gpt-image-2: an asked size below its fewest pixels or past 3:1 goes as the nearest size it makes; a shape and class as a size of them', async () => {
    const model = spec(OpenAIImageVendor, 'gpt-image-2');
    const sent = async (over: Partial<ImageRequest>) => {
      const answer = await openaiVendor.create(openaiAccount, creating(model, request({ quality: 'low', ...over })));
      expect('made' in answer && answer.made.length).toBe(1);
      return [openaiFake.received.at(-1)!.body!.size, openaiFake.received.at(-1)!.status];
    };
    expect(await sent({ size: '512x512' })).toEqual(['816x816', 200]);
    expect(await sent({ size: '3840x1024' })).toEqual(['3840x1280', 200]);
    expect(await sent({ size: '2048x1152' })).toEqual(['2048x1152', 200]);
    expect(await sent({ aspectRatio: '21:9', resolution: '1k' })).toEqual(['1232x544', 200]);
    // the fixed-size models: a shape asked is its one size of that shape
    await openaiVendor.create(openaiAccount, creating(spec(OpenAIImageVendor, 'gpt-image-1'), request({ aspectRatio: '3:2' })));
    expect(openaiFake.received.at(-1)!.body).toEqual({ model: 'gpt-image-1', prompt: 'A lighthouse at dusk', n: 1, size: '1536x1024', output_format: 'png' });
  });

  it("OpenAI's failures: 429 rate limit busy, insufficient_quota and an unverified organization the account's, 5xx a failed generation, moderation_blocked a content refusal, a bad key the credentials'", async () => {
    const model = spec(OpenAIImageVendor, 'gpt-image-1-mini');
    const create = (account = openaiAccount) => failure(openaiVendor.create(account, creating(model, request())));
    openaiFake.knobs.rateLimited = 1;
    expect(await create()).toBeInstanceOf(UpstreamBusy);
    openaiFake.knobs.insufficientQuota = true;
    expect(await create()).toMatchObject({ constructor: UpstreamRefused, kind: 'account', status: 429 });
    openaiFake.knobs.insufficientQuota = false;
    openaiFake.knobs.unverified = true;
    expect(await create()).toMatchObject({ constructor: UpstreamRefused, kind: 'account', status: 403 });
    openaiFake.knobs.unverified = false;
    openaiFake.knobs.serverError = 1;
    expect(await create()).toMatchObject({ constructor: UpstreamGenerationFailed, answer: { status: 500 } });
    openaiFake.knobs.moderation = true;
    const refused = (await create()) as UpstreamRefused;
    openaiFake.knobs.moderation = false;
    expect([refused.constructor, refused.kind, refused.aboutRequest, refusesContent('openai', refused.message)]).toEqual([UpstreamRefused, 'request', true, true]);
    expect(await create({ baseUrl: openaiFake.url, auth: OPENAI.auth({ api_key: 'sk-wrong' }) })).toMatchObject({ constructor: UpstreamRefused, kind: 'auth', status: 401 });
  });

  it('Gemini: n calls with the seed counting up, the input images as inlineData parts after the prompt, no imageSize for a 1K-only model', async () => {
    const before = gemini.received.length;
    const photo = { bytes: await png(400, 300), format: 'png' as const, width: 400, height: 300 };
    const answer = await geminiVendor.create(geminiAccount, creating(spec(GeminiImageVendor, 'gemini-2.5-flash-image'), request({ n: 2, seed: 41, images: 1, mode: 'edit' }), [photo]));
    expect('made' in answer && answer.made.length).toBe(2);
    const calls = gemini.received.slice(before);
    expect(calls.map((c) => c.body.generationConfig)).toEqual([
      { responseModalities: ['IMAGE'], seed: 41 },
      { responseModalities: ['IMAGE'], seed: 42 },
    ]);
    expect(calls[0].body.contents).toEqual([{ role: 'user', parts: [{ text: 'A lighthouse at dusk' }, { inlineData: { mimeType: 'image/png', data: photo.bytes.toString('base64') } }] }]);
    // no shape asked: the first image's nearest (4:3)
    expect(calls[0].made).toEqual(expect.objectContaining({ aspectRatio: '4:3' }));
  });

  it("Gemini's failures: a bad key (400 API_KEY_INVALID) the credentials', limit: 0 the account's, 429 and 503 busy, a blocked prompt a content refusal, words without an image a failed generation (another channel may make it)", async () => {
    const model = spec(GeminiImageVendor, 'gemini-3.1-flash-image-preview');
    const create = (account = geminiAccount) => failure(geminiVendor.create(account, creating(model, request({ size: '2048x512' }))));
    expect(await create({ baseUrl: gemini.baseUrl, auth: GOOGLE.auth({ api_key: 'AIza-wrong' }) })).toMatchObject({ constructor: UpstreamRefused, kind: 'auth', status: 400 });
    gemini.knobs.noQuota = true;
    expect(await create()).toMatchObject({ constructor: UpstreamRefused, kind: 'account', status: 429 });
    gemini.knobs.noQuota = false;
    gemini.knobs.busy = 1;
    expect(await create()).toBeInstanceOf(UpstreamBusy);
    gemini.knobs.overloaded = 1;
    expect(await create()).toMatchObject({ constructor: UpstreamBusy, answer: { status: 503 } });
    gemini.knobs.blockPrompt = true;
    const blocked = (await create()) as UpstreamRefused;
    gemini.knobs.blockPrompt = false;
    expect([blocked.constructor, blocked.kind, blocked.message, refusesContent('gemini', blocked.message)]).toEqual([UpstreamRefused, 'request', expect.stringMatching(/blockReason PROHIBITED_CONTENT/), true]);
    gemini.knobs.textOnly = true;
    const words = await create();
    gemini.knobs.textOnly = false;
    expect([words instanceof UpstreamGenerationFailed, (words as Error).message]).toEqual([true, expect.stringMatching(/without an image \(finishReason STOP\): I can describe/)]);
    // and the long shape it asked for, at 1K
    await geminiVendor.create(geminiAccount, creating(model, request({ size: '2048x512' })));
    expect(gemini.received.at(-1)!.body.generationConfig).toEqual({ responseModalities: ['IMAGE'], imageConfig: { aspectRatio: '4:1', imageSize: '2K' } });
  });
});
