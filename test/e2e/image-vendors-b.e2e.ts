import OpenAI, { toFile } from 'openai';
import sharp from 'sharp';
import { UpstreamBusy, UpstreamGenerationFailed, UpstreamRefused } from '../../src/infra/relay/upstream-client.js';
import { BflImageVendor, freeSize } from '../../src/vendors/bfl/bfl-image.vendor.js';
import { BFL } from '../../src/vendors/bfl/bfl.vendor.js';
import { type ImageModelSpec, type ImageRequest, makesSize, resolutionOf, shapeOf, unmetImageFields } from '../../src/vendors/contracts/image-request.js';
import type { ImageCreate, ImageInput, ImageStatus, ImageVendor } from '../../src/vendors/contracts/image-vendor.js';
import type { VendorAccount } from '../../src/vendors/contracts/vendor.js';
import { klingAuth } from '../../src/vendors/kling/kling-auth.js';
import { KlingImageVendor } from '../../src/vendors/kling/kling-image.vendor.js';
import { StabilityImageVendor } from '../../src/vendors/stability/stability-image.vendor.js';
import { bearerAuth } from '../../src/vendors/contracts/vendor.js';
import { type FakeBfl, startFakeBfl } from '../support/vendors/bfl/bfl.fake.js';
import { type FakeKlingImages, startFakeKlingImages } from '../support/vendors/kling/kling.fake.js';
import { type FakeStabilityImages, startFakeStabilityImages } from '../support/vendors/stability/stability.fake.js';
import { png } from '../support/images.js';
import { plainUpstreamClient } from '../support/plain-upstream-client.js';
import { pollUntil } from '../support/poll.js';
import { api, startTestApp, type TestApp } from '../support/test-app.js';
import { startReceiver } from '../support/webhook-receiver.js';
import { refusesContent } from '../../src/vendors/registry.js';

const BFL_KEY = 'bfl-key-0123456789abcdef';
const STABILITY_KEY = 'sk-stability-images-0123456789';
const KLING: [string, string] = ['ak-kling-images-0001', 'sk-kling-images-secret-01'];


/** A normalized request: a 1024x1024 PNG generation unless said. */
const request = (over: Partial<ImageRequest> = {}): ImageRequest => ({ mode: 'generate', prompt: 'A lighthouse at dusk', n: 1, outputFormat: 'png', images: 0, mask: false, ...over });

/** A create as the relay makes it, with these inputs. */
function creating(spec: ImageModelSpec, req: ImageRequest, inputs: ImageInput[] = [], mask?: ImageInput, callbackUrl?: string): ImageCreate {
  return { model: spec, request: req, taskId: `task-${Math.random().toString(36).slice(2)}`, callbackUrl, images: async () => inputs, mask: async () => mask, partial: async () => undefined };
}

async function input(width: number, height: number): Promise<ImageInput> {
  return { bytes: await png(width, height), format: 'png', width, height };
}

/** OpenAI's mask: transparent (alpha 0) over the left quarter, where the image is to change; opaque black elsewhere. */
async function leftQuarterMask(width: number, height: number): Promise<ImageInput> {
  const opaque = await sharp({ create: { width: width - Math.floor(width / 4), height, channels: 4, background: { r: 0, g: 0, b: 0, alpha: 1 } } }).png().toBuffer();
  const bytes = await sharp({ create: { width, height, channels: 4, background: { r: 0, g: 0, b: 0, alpha: 0 } } })
    .composite([{ input: opaque, left: Math.floor(width / 4), top: 0 }])
    .png()
    .toBuffer();
  return { bytes, format: 'png', width, height };
}

const spec = (vendor: { models: readonly ImageModelSpec[] }, id: string) => vendor.models.find((m) => m.id === id)!;

async function sizeOfUrl(url: string): Promise<[number, number, string]> {
  const meta = await sharp(Buffer.from(await (await fetch(url)).arrayBuffer())).metadata();
  return [meta.width!, meta.height!, meta.format!];
}

/** Polls an adapter's query until the task ends. */
async function ended(vendor: ImageVendor, account: VendorAccount, upstreamId: string): Promise<ImageStatus> {
  return pollUntil(() => vendor.query!(account, upstreamId, true), (s) => s.state !== 'working', { timeoutMs: 10_000, what: 'the upstream task' });
}

/**
 * The three adapters (Black Forest Labs, Stability, Kling) against fakes of their documented APIs, without
 * the gateway: each request is asked in the vendor's own words, and each answer read as the relay needs it.
 */
describe('image vendors B: the adapters against their fakes', () => {
  const client = plainUpstreamClient();
  let bfl: FakeBfl;
  let stability: FakeStabilityImages;
  let kling: FakeKlingImages;
  let bflAccount: VendorAccount;
  let stabilityAccount: VendorAccount;
  let klingAccount: VendorAccount;
  const bflVendor = new BflImageVendor(client);
  const stabilityVendor = new StabilityImageVendor(client);
  const klingVendor = new KlingImageVendor(client);

  beforeAll(async () => {
    [bfl, stability, kling] = await Promise.all([startFakeBfl(BFL_KEY), startFakeStabilityImages(STABILITY_KEY), startFakeKlingImages(...KLING)]);
    bfl.knobs.pollsUntilReady = 2;
    bflAccount = { baseUrl: bfl.url, auth: BFL.auth({ api_key: BFL_KEY }) };
    stabilityAccount = { baseUrl: stability.url, auth: bearerAuth({ api_key: STABILITY_KEY }) };
    klingAccount = { baseUrl: kling.url, auth: klingAuth(...KLING) };
  });
  afterAll(async () => {
    await Promise.all([bfl.close(), stability.close(), kling.close()]);
  });

  it('free FLUX sizes: a shape and class become a size the model takes, of that shape and class', () => {
    for (const id of ['flux-2-pro', 'flux-pro-1.1']) {
      const model = spec(BflImageVendor, id);
      for (const resolution of model.resolutions) {
        for (const ratio of model.aspectRatios) {
          const { width, height } = freeSize(ratio, resolution, model.sizeRule!);
          expect([id, ratio, resolution, makesSize(model, `${width}x${height}`), shapeOf(width, height), resolutionOf(width, height)]).toEqual([id, ratio, resolution, true, ratio, resolution]);
        }
      }
    }
  });

  it('BFL: a FLUX.2 generation as width and height with x-key, polled at its polling_url (Pending, Ready) to a sample of that size', async () => {
    const answer = await bflVendor.create(bflAccount, creating(spec(BflImageVendor, 'flux-2-pro'), request({ size: '1536x1024', seed: 7, outputFormat: 'webp' })));
    expect('upstreamId' in answer && answer.upstreamId).toMatch(new RegExp(`^${bfl.url}/v1/get_result\\?id=`));
    expect(bfl.received.at(-1)).toEqual({ model: 'flux-2-pro', body: { prompt: 'A lighthouse at dusk', width: 1536, height: 1024, seed: 7, output_format: 'png' } });
    const status = await ended(bflVendor, bflAccount, (answer as { upstreamId: string }).upstreamId);
    expect(status.state).toBe('succeeded');
    const [image] = (status as Extract<ImageStatus, { state: 'succeeded' }>).images as { url: string }[];
    expect(await sizeOfUrl(image.url)).toEqual([1536, 1024, 'png']);
  });

  it('BFL: Kontext takes an aspect ratio and its input image as Base64; a Kling-door shape on FLUX.2 is a size of that shape; a webhook_url when called back', async () => {
    const photo = await input(800, 600);
    await bflVendor.create(bflAccount, creating(spec(BflImageVendor, 'flux-kontext-pro'), request({ mode: 'edit', images: 1, aspectRatio: '4:3', outputFormat: 'jpeg' }), [photo]));
    expect(bfl.received.at(-1)).toEqual({ model: 'flux-kontext-pro', body: { prompt: 'A lighthouse at dusk', input_image: '<png 800x600>', aspect_ratio: '4:3', output_format: 'jpeg' } });
    await bflVendor.create(bflAccount, creating(spec(BflImageVendor, 'flux-2-max'), request({ aspectRatio: '16:9', resolution: '2k', images: 2 }), [photo, await input(400, 400)], undefined, 'http://127.0.0.1:9/upstream-callbacks/x/y'));
    expect(bfl.received.at(-1)).toEqual({ model: 'flux-2-max', body: { prompt: 'A lighthouse at dusk', input_image: '<png 800x600>', input_image_2: '<png 400x400>', width: 2048, height: 1152, output_format: 'png', webhook_url: 'http://127.0.0.1:9/upstream-callbacks/x/y' } });
  });

  it("BFL: Fill gets the image and OpenAI's mask turned white where it paints (the transparent quarter)", async () => {
    const answer = await bflVendor.create(bflAccount, creating(spec(BflImageVendor, 'flux-pro-1.0-fill'), request({ mode: 'edit', images: 1, mask: true }), [await input(640, 480)], await leftQuarterMask(640, 480)));
    const task = bfl.tasks.get(new URL((answer as { upstreamId: string }).upstreamId).searchParams.get('id')!)!;
    expect(task.inputs).toEqual({ image: { width: 640, height: 480, format: 'png' }, mask: { width: 640, height: 480, format: 'png', white: 0.25 } });
    await expect(bflVendor.create(bflAccount, creating(spec(BflImageVendor, 'flux-pro-1.0-fill'), request()))).rejects.toThrow(/only edits/);
  });

  it('BFL: moderated → a content failure in its words; Error → a failure of its own; 402 → the account; 429 → busy; 422 → its words; a foreign polling_url → unusable', async () => {
    const model = spec(BflImageVendor, 'flux-pro-1.1');
    const create = async () => ((await bflVendor.create(bflAccount, creating(model, request({ aspectRatio: '3:2' })))) as { upstreamId: string }).upstreamId;
    await create();
    expect(bfl.received.at(-1)!.body).toEqual({ prompt: 'A lighthouse at dusk', width: 1248, height: 832, output_format: 'png' });
    bfl.knobs.moderate = 'Content Moderated';
    const moderated = await ended(bflVendor, bflAccount, await create());
    expect([moderated, refusesContent('bfl', (moderated as { reason: string }).reason)]).toEqual([{ state: 'failed', reason: 'Content Moderated (Moderation Reasons: Derivative Works Filter)' }, true]);
    bfl.knobs.moderate = undefined;
    bfl.knobs.fail = true;
    expect(await ended(bflVendor, bflAccount, await create())).toEqual({ state: 'failed', reason: 'the task ended in Error: the generation failed' });
    bfl.knobs.fail = false;
    expect(await bflVendor.query!(bflAccount, `${bfl.url}/v1/get_result?id=nope`, true)).toEqual({ state: 'failed', reason: 'the upstream no longer has the task (Task not found)' });
    bfl.knobs.noCredit = true;
    await expect(create()).rejects.toMatchObject({ kind: 'account', status: 402 });
    bfl.knobs.noCredit = false;
    bfl.knobs.busy = 1;
    await expect(create()).rejects.toBeInstanceOf(UpstreamBusy);
    await expect(bflVendor.create(bflAccount, creating({ ...model, id: 'flux-pro-1.1' }, request({ size: '1000x1000' })))).rejects.toMatchObject({ kind: 'request', message: 'width: must be a multiple of 32 from 256 to 1440' });
    bfl.knobs.pollingHost = 'http://127.0.0.2:1';
    await expect(create()).rejects.toThrow(/polling_url outside its own domain/);
    bfl.knobs.pollingHost = undefined;
    await expect(bflVendor.create({ ...bflAccount, auth: BFL.auth({ api_key: 'wrong' }) }, creating(model, request()))).rejects.toMatchObject({ kind: 'auth', status: 403 });
  });

  it("BFL and Kling call back: BFL's webhook once a task ends (answered without a polling_url: its get_result on the channel's host is polled), Kling's on each change of state", async () => {
    const receiver = await startReceiver();
    try {
      bfl.knobs.webhookAnswer = true;
      const answer = (await bflVendor.create(bflAccount, creating(spec(BflImageVendor, 'flux-2-flex'), request(), [], undefined, `${receiver.url}/bfl`))) as { upstreamId: string };
      bfl.knobs.webhookAnswer = false;
      expect(answer.upstreamId).toMatch(new RegExp(`^${bfl.url}/v1/get_result\\?id=[\\w-]+$`));
      expect((await ended(bflVendor, bflAccount, answer.upstreamId)).state).toBe('succeeded');
      kling.knobs.advance = 0;
      const task = (await klingVendor.create(klingAccount, creating(spec(KlingImageVendor, 'kling-v3'), request({ aspectRatio: '9:16' }), [], undefined, `${receiver.url}/kling`))) as { upstreamId: string };
      kling.knobs.advance = undefined;
      const calls = await pollUntil(async () => receiver.received.map((r) => [r.path, (r.json as { status?: string; task_status?: string }).status ?? (r.json as { task_status: string }).task_status]), (c) => c.length >= 3, { what: 'the callbacks' });
      expect(calls.sort()).toEqual([['/bfl', 'Ready'], ['/kling', 'processing'], ['/kling', 'succeed']]);
      expect(receiver.received.find((r) => r.path === '/kling' && r.json.task_status === 'succeed')!.json).toEqual(expect.objectContaining({ task_id: task.upstreamId, task_result: { images: [{ index: 0, url: expect.any(String) }] } }));
    } finally {
      await receiver.close();
    }
  });

  it('Stability: n calls of its generate endpoint in its words (aspect_ratio, a seed each), the images answered as bytes of its own size', async () => {
    const before = stability.received.length;
    const answer = await stabilityVendor.create(stabilityAccount, creating(spec(StabilityImageVendor, 'sd3.5-large'), request({ n: 2, size: '1536x1024', seed: 10, negativePrompt: 'fog' })));
    const calls = stability.received.slice(before);
    expect(calls.map((c) => [c.path, c.fields, c.accept])).toEqual([0, 1].map((i) => ['generate/sd3', { prompt: 'A lighthouse at dusk', negative_prompt: 'fog', seed: String(10 + i), output_format: 'png', model: 'sd3.5-large', aspect_ratio: '3:2' }, 'image/*']));
    expect('made' in answer && answer.made).toHaveLength(2);
    const meta = await sharp((answer as { made: { bytes: Buffer }[] }).made[0].bytes).metadata();
    expect([meta.width, meta.height]).toEqual([1216, 832]);
    await stabilityVendor.create(stabilityAccount, creating(spec(StabilityImageVendor, 'ultra'), request({ images: 1 }), [await input(900, 600)]));
    expect(stability.received.at(-1)).toMatchObject({ path: 'generate/ultra', fields: { prompt: 'A lighthouse at dusk', output_format: 'png', strength: '0.5' }, image: { width: 900, height: 600 } });
  });

  it("Stability: an edit is its inpaint with OpenAI's mask turned white where it paints; without a mask, the image's own transparency", async () => {
    await stabilityVendor.create(stabilityAccount, creating(spec(StabilityImageVendor, 'core'), request({ mode: 'edit', images: 1, mask: true }), [await input(640, 480)], await leftQuarterMask(640, 480)));
    expect(stability.received.at(-1)).toMatchObject({ path: 'edit/inpaint', fields: { prompt: 'A lighthouse at dusk', output_format: 'png' }, image: { width: 640, height: 480 }, mask: { width: 640, height: 480, white: 0.25 }, status: 200 });
    const seeThrough = { bytes: await sharp(await png(500, 400)).ensureAlpha(0.5).png().toBuffer(), format: 'png' as const, width: 500, height: 400 };
    await stabilityVendor.create(stabilityAccount, creating(spec(StabilityImageVendor, 'ultra'), request({ mode: 'edit', images: 1 }), [seeThrough]));
    expect(stability.received.at(-1)).toMatchObject({ path: 'edit/inpaint', image: { width: 500, height: 400, alpha: true }, mask: null, status: 200 });
  });

  it('Stability: CONTENT_FILTERED and 403 content_moderation are content refusals; 402 the account; 500 a failed generation (not charged: another channel may take it)', async () => {
    const create = () => stabilityVendor.create(stabilityAccount, creating(spec(StabilityImageVendor, 'core'), request({ aspectRatio: '16:9' })));
    stability.knobs.filter = true;
    await expect(create()).rejects.toMatchObject({ kind: 'request', message: expect.stringMatching(/moderation.*CONTENT_FILTERED/) });
    stability.knobs.filter = false;
    stability.knobs.moderate = true;
    await expect(create()).rejects.toMatchObject({ kind: 'request', status: 403, message: expect.stringMatching(/^the upstream's moderation refused the request \(content_moderation\): Your request was flagged/) });
    stability.knobs.moderate = false;
    stability.knobs.noCredit = true;
    await expect(create()).rejects.toMatchObject({ kind: 'account', status: 402 });
    stability.knobs.noCredit = false;
    stability.knobs.fail = true;
    await expect(create()).rejects.toBeInstanceOf(UpstreamGenerationFailed);
    stability.knobs.fail = false;
  });

  it('Kling: a generation in its words (model_name, n, aspect_ratio and resolution of the asked size, external_task_id, callback_url), polled to n image links of that shape', async () => {
    const req = request({ n: 2, size: '2048x1152' });
    const model = spec(KlingImageVendor, 'kling-v2-1');
    expect(unmetImageFields(model, req)).toEqual([]);
    const create = creating(model, req, [], undefined, 'http://127.0.0.1:9/cb');
    const answer = (await klingVendor.create(klingAccount, create)) as { upstreamId: string; status: ImageStatus };
    expect(answer.status).toEqual({ state: 'working' });
    expect(kling.tasks.get(answer.upstreamId)!.body).toEqual({ model_name: 'kling-v2-1', prompt: 'A lighthouse at dusk', n: 2, aspect_ratio: '16:9', resolution: '2k', external_task_id: create.taskId, callback_url: 'http://127.0.0.1:9/cb' });
    const status = await ended(klingVendor, klingAccount, answer.upstreamId);
    const urls = (status as Extract<ImageStatus, { state: 'succeeded' }>).images.map((i) => (i as { url: string }).url);
    expect(urls).toHaveLength(2);
    const [width, height] = await sizeOfUrl(urls[1]);
    expect([shapeOf(width, height), resolutionOf(width, height)]).toEqual(['16:9', '2k']);
    expect(await klingVendor.findByOwnId!(klingAccount, create.taskId)).toEqual({ upstreamId: answer.upstreamId, status: expect.objectContaining({ state: 'succeeded' }) });
    expect(await klingVendor.findByOwnId!(klingAccount, 'never-made')).toBeNull();
  });

  it("Kling: a reference image as raw Base64 (kling-v1-5: a subject unless said); a negative prompt with an image refused before sending; a failure's words, content when they say so", async () => {
    const photo = await input(640, 480);
    const answer = (await klingVendor.create(klingAccount, creating(spec(KlingImageVendor, 'kling-v1-5'), request({ images: 1, aspectRatio: '4:3', humanFidelity: 0.6 }), [photo]))) as { upstreamId: string };
    expect(kling.tasks.get(answer.upstreamId)!.body).toEqual(expect.objectContaining({ model_name: 'kling-v1-5', image: '<png 640x480>', image_reference: 'subject', human_fidelity: 0.6, aspect_ratio: '4:3' }));
    const sent = kling.tasks.size;
    await expect(klingVendor.create(klingAccount, creating(spec(KlingImageVendor, 'kling-v2-1'), request({ images: 1, negativePrompt: 'blur' }), [photo]))).rejects.toMatchObject({ kind: 'request', message: expect.stringMatching(/^negative_prompt/) });
    await expect(klingVendor.create(klingAccount, creating(spec(KlingImageVendor, 'kling-v1'), request({ images: 1, humanFidelity: 0.5 }), [photo]))).rejects.toBeInstanceOf(UpstreamRefused);
    expect(kling.tasks.size).toBe(sent);
    kling.knobs.failWith = 'Failure to pass the risk control system';
    const failed = (await klingVendor.create(klingAccount, creating(spec(KlingImageVendor, 'kling-v2'), request()))) as { upstreamId: string };
    const refused = await ended(klingVendor, klingAccount, failed.upstreamId);
    expect([refused, refusesContent('kling', (refused as { reason: string }).reason)]).toEqual([{ state: 'failed', reason: 'Failure to pass the risk control system' }, true]);
    kling.knobs.failWith = undefined;
  });
});

const OPENAI_DOOR = '/openai/v1/images/generations';
const KLING_DOOR = '/video-a/v1/images/generations';
const ADMIN = 'admin-secret-0123456789';

/**
 * The same generations through the gateway, its image channels being Black Forest Labs (asked at its
 * polling URL), Stability and Kling: each serves the request in its own words and the stored images have
 * the asked size; BFL failing a task it took sends it to the next capable vendor (one charge, both
 * upstream tasks in the attempts); BFL's moderation ends the task with its reason.
 */
describe('image vendors B through the gateway (relay)', () => {
  let t: TestApp;
  let key: string;
  let bfl: FakeBfl;
  let stability: FakeStabilityImages;
  let kling: FakeKlingImages;
  const channels: Record<string, string> = {};

  beforeAll(async () => {
    [bfl, stability, kling] = await Promise.all([startFakeBfl(BFL_KEY), startFakeStabilityImages(STABILITY_KEY), startFakeKlingImages(...KLING)]);
    bfl.knobs.pollsUntilReady = 2;
    kling.knobs.pollsUntilDone = 2;
    t = await startTestApp({ IMAGE_PROVIDER: 'relay', ADMIN_API_KEY: ADMIN, OUTBOUND_ALLOW_HOSTS: '127.0.0.1', RELAY_POLL_MS: '100' });
    key = await t.createKey('team-images-b');
    const add = async (name: string, priority: number, body: Record<string, unknown>) => {
      const res = await api(t.url, 'POST', '/admin/channels', { key: ADMIN, body: { name, operations: ['image'], priority, ...body } });
      expect([name, res.status, res.body.message]).toEqual([name, 201, undefined]);
      channels[name] = res.body.id as string;
    };
    await add('bfl', 3, { protocol: 'bfl', base_url: bfl.url, credentials: { api_key: BFL_KEY } });
    await add('stability', 2, { protocol: 'stability', base_url: stability.url, credentials: { api_key: STABILITY_KEY } });
    await add('kling', 1, { protocol: 'kling', base_url: kling.url, credentials: { access_key: KLING[0], secret_key: KLING[1] } });
  }, 60_000);
  afterAll(async () => {
    await t?.close();
    await Promise.all([bfl?.close(), stability?.close(), kling?.close()]);
  });

  const admin = (method: string, path: string, body?: unknown) => api(t.url, method, path, { key: ADMIN, body });
  /** Only these channels enabled. */
  const only = async (...names: string[]) => {
    for (const [name, id] of Object.entries(channels)) expect((await admin('POST', `/admin/channels/${id}/${names.includes(name) ? 'enable' : 'disable'}`)).status).toBe(200);
  };
  const attempts = async (id: string) => ((await admin('GET', `/admin/tasks/${id}/attempts`)).body as { channel: string; outcome: string; message: string | null; upstream_id: string | null }[]).map((a) => [a.channel, a.outcome, a.message, a.upstream_id]);
  const creditsUsed = async () => (await api(t.url, 'GET', '/usage', { key })).body.credits.used as number;
  /** A generation through the OpenAI door (held until it ends): the answer, and each image's format and size. */
  const generate = async (body: Record<string, unknown>, unchecked = false) => {
    const res = await api(t.url, 'POST', OPENAI_DOOR, { key, body: { prompt: 'A lighthouse at dusk', ...body }, unchecked });
    const sizes = [];
    for (const image of (res.body.data ?? []) as { b64_json: string }[]) {
      const meta = await sharp(Buffer.from(image.b64_json, 'base64')).metadata();
      sizes.push(`${meta.format} ${meta.width}x${meta.height}`);
    }
    return { res, sizes };
  };

  it('BFL makes a 1536x1024 generation from its own width and height, polled at the polling URL its create answered', async () => {
    await only('bfl');
    const { res, sizes } = await generate({ size: '1536x1024', output_format: 'jpeg' });
    expect([res.status, res.body.error, sizes]).toEqual([200, undefined, ['jpeg 1536x1024']]);
    expect(bfl.received.at(-1)).toEqual({ model: 'flux-2-pro', body: { prompt: 'A lighthouse at dusk', width: 1536, height: 1024, output_format: 'jpeg' } });
    const [[channel, outcome, , upstreamId]] = await attempts(res.body.task_id);
    expect([channel, outcome, upstreamId]).toEqual(['bfl', 'accepted', expect.stringMatching(new RegExp(`^${bfl.url}/v1/get_result\\?id=`))]);
    expect(bfl.tasks.get(new URL(upstreamId!).searchParams.get('id')!)!.polls).toBeGreaterThanOrEqual(2);
  }, 60_000);

  it('Stability makes the same generation as a 3:2 image of its own size, resized to 1536x1024', async () => {
    await only('stability');
    const before = stability.received.length;
    const { res, sizes } = await generate({ size: '1536x1024', n: 2 });
    expect([res.status, res.body.error, sizes]).toEqual([200, undefined, ['png 1536x1024', 'png 1536x1024']]);
    expect(stability.received.slice(before).map((r) => [r.path, r.fields, r.made])).toEqual([0, 1].map(() => ['generate/ultra', { prompt: 'A lighthouse at dusk', output_format: 'png', aspect_ratio: '3:2' }, { width: 1216, height: 832 }]));
  }, 60_000);

  it("Kling makes it too, in its words (model_name, n, aspect_ratio, resolution, our task id as external_task_id), resized from its 3:2 1k images", async () => {
    await only('kling');
    const { res, sizes } = await generate({ size: '1536x1024', n: 2 });
    expect([res.status, res.body.error, sizes]).toEqual([200, undefined, ['png 1536x1024', 'png 1536x1024']]);
    const task = [...kling.tasks.values()].at(-1)!;
    expect(task.body).toEqual({ model_name: 'kling-v1', prompt: 'A lighthouse at dusk', n: 2, aspect_ratio: '3:2', resolution: '1k', external_task_id: res.body.task_id });
    expect([task.status, shapeOf(task.width, task.height)]).toEqual(['succeed', '3:2']);
  }, 60_000);

  it("a Kling-door request (21:9, 2k, a negative prompt) served by Kling's kling-v2 in its own words", async () => {
    await only('kling');
    const created = await api(t.url, 'POST', KLING_DOOR, { key, body: { model_name: 'kling-v2', prompt: 'A harbour at night', negative_prompt: 'people', aspect_ratio: '21:9', resolution: '2k', n: 1 } });
    expect([created.status, created.body.code]).toEqual([200, 0]);
    const id = created.body.data.task_id as string;
    const done = await pollUntil(() => api(t.url, 'GET', `${KLING_DOOR}/${id}`, { key }), (r) => ['succeed', 'failed'].includes(r.body.data.task_status), { timeoutMs: 60_000, what: 'the Kling-door task' });
    expect([done.body.data.task_status, done.body.data.task_status_msg]).toEqual(['succeed', '']);
    expect([...kling.tasks.values()].at(-1)!.body).toEqual({ model_name: 'kling-v2', prompt: 'A harbour at night', negative_prompt: 'people', n: 1, aspect_ratio: '21:9', resolution: '2k', external_task_id: id });
    const [width, height] = await sizeOfUrl(done.body.data.task_result.images[0].url);
    expect([shapeOf(width, height), resolutionOf(width, height)]).toEqual(['21:9', '2k']);
  }, 60_000);

  it("an OpenAI-door edit with a mask: BFL's Fill and Stability's inpaint each get the mask white where it was transparent, and the image keeps its size", async () => {
    const openai = new OpenAI({ apiKey: key, baseURL: `${t.url}/openai/v1`, maxRetries: 0 });
    const mask = await leftQuarterMask(640, 480);
    const edit = async () => {
      const res = await openai.images.edit({ prompt: 'Paint the sky red', image: await toFile(await png(640, 480), 'photo.png', { type: 'image/png' }), mask: await toFile(mask.bytes, 'mask.png', { type: 'image/png' }) });
      const meta = await sharp(Buffer.from(res.data![0].b64_json!, 'base64')).metadata();
      return [meta.width, meta.height];
    };
    await only('bfl');
    expect(await edit()).toEqual([640, 480]);
    expect(bfl.received.at(-1)).toEqual({ model: 'flux-pro-1.0-fill', body: { prompt: 'Paint the sky red', image: '<png 640x480>', mask: '<png 640x480>', output_format: 'png' } });
    expect([...bfl.tasks.values()].at(-1)!.inputs.mask).toEqual({ width: 640, height: 480, format: 'png', white: 0.25 });
    await only('stability');
    expect(await edit()).toEqual([640, 480]);
    expect(stability.received.at(-1)).toMatchObject({ path: 'edit/inpaint', fields: { prompt: 'Paint the sky red', output_format: 'png' }, image: { width: 640, height: 480 }, mask: { width: 640, height: 480, white: 0.25 } });
  }, 60_000);

  it("tests each channel with its vendor's cheap call: BFL's credits (x-key), Stability's balance, Kling's image generations list for an image-only channel", async () => {
    const tested = async (name: string) => {
      const res = await admin('POST', `/admin/channels/${channels[name]}/test`);
      return [res.status, res.body.ok, res.body.status_code];
    };
    expect(await tested('bfl')).toEqual([200, true, 200]);
    expect(bfl.server.requests.at(-1)).toEqual(expect.objectContaining({ method: 'GET', url: '/v1/credits', headers: expect.objectContaining({ 'x-key': BFL_KEY }) }));
    expect(await tested('stability')).toEqual([200, true, 200]);
    expect(stability.server.requests.at(-1)).toEqual(expect.objectContaining({ method: 'GET', url: '/v1/user/balance' }));
    expect(await tested('kling')).toEqual([200, true, 200]);
    expect(kling.server.requests.at(-1)).toEqual(expect.objectContaining({ method: 'GET', url: '/v1/images/generations?pageNum=1&pageSize=1' }));
  }, 60_000);

  it('BFL takes the task and fails it (Error): Stability makes it; one charge, both upstream tasks in the attempts', async () => {
    await only('bfl', 'stability');
    bfl.knobs.fail = true;
    const before = await creditsUsed();
    const { res, sizes } = await generate({ size: '1536x1024' });
    bfl.knobs.fail = false;
    expect([res.status, res.body.error, sizes]).toEqual([200, undefined, ['png 1536x1024']]);
    expect((await attempts(res.body.task_id)).map(([channel, outcome, message]) => [channel, outcome, message])).toEqual([
      ['bfl', 'accepted', null],
      ['bfl', 'abandoned', expect.stringMatching(/ended in Error/)],
      ['stability', 'accepted', null],
    ]);
    expect((await creditsUsed()) - before).toBe(1);
  }, 60_000);

  it("BFL's moderation (Content Moderated) ends the task with its reason, without failover, and gives the credits back", async () => {
    await only('bfl', 'stability');
    bfl.knobs.moderate = 'Content Moderated';
    const before = await creditsUsed();
    const stabilityCalls = stability.received.length;
    // unchecked: the OpenAPI document does not list OpenAI's error type image_generation_user_error yet (the door's, not a vendor's)
    const { res } = await generate({ size: '1536x1024' }, true);
    bfl.knobs.moderate = undefined;
    expect([res.status, res.body.error?.code, res.body.error?.message]).toEqual([400, 'moderation_blocked', expect.stringMatching(/Content Moderated \(Moderation Reasons: Derivative Works Filter\)/)]);
    expect(stability.received.length).toBe(stabilityCalls);
    expect(await creditsUsed()).toBe(before);
  }, 60_000);
});
