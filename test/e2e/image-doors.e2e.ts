import OpenAI, { AuthenticationError, BadRequestError, NotFoundError, toFile } from 'openai';
import sharp from 'sharp';
import { png } from '../support/images.js';
import { pollUntil } from '../support/poll.js';
import { api, queryDb, startTestApp, type TestApp } from '../support/test-app.js';
import { startReceiver } from '../support/webhook-receiver.js';

const KLING_DOOR = '/video-a/v1/images/generations';

/** How many pixels of an image are not fully opaque. */
async function seeThrough(bytes: Buffer): Promise<number> {
  const { data, info } = await sharp(bytes).ensureAlpha().raw().toBuffer({ resolveWithObject: true });
  let count = 0;
  for (let i = info.channels - 1; i < data.length; i += info.channels) if (data[i] < 255) count++;
  return count;
}

/**
 * The image operation's two doors on the sandbox: OpenAI's Images API driven by the official openai SDK
 * (generate, edit with files and a mask, streaming, links), and Kling's image API with its records and callbacks.
 */
describe('the image doors (sandbox)', () => {
  let t: TestApp;
  let key: string;
  let openai: OpenAI;
  let receiver: Awaited<ReturnType<typeof startReceiver>>;

  beforeAll(async () => {
    receiver = await startReceiver();
    // held requests are answered by the wake of their task's end alone (its row is read once an hour besides)
    t = await startTestApp({ ALLOW_PRIVATE_URLS: 'true', CALLBACK_RETRY_SCHEDULE_S: '0.2', HOLD_RECHECK_S: '3600' });
    key = await t.createKey('image-team');
    openai = new OpenAI({ apiKey: key, baseURL: `${t.url}/openai/v1`, maxRetries: 0 });
  }, 60_000);
  afterAll(async () => {
    await t.close();
    await receiver.close();
  });

  it('images.generate: two transparent WebP images of 1536x1024, with what was made (never auto) and a task in GET /tasks', async () => {
    const res = await openai.images.generate({ model: 'gpt-image-1', prompt: 'A sticker of a red fox', n: 2, size: '1536x1024', background: 'transparent', output_format: 'webp' });
    expect(res.data).toHaveLength(2);
    expect([res.size, res.background, res.output_format, res.quality]).toEqual(['1536x1024', 'transparent', 'webp', 'medium']);
    for (const image of res.data!) {
      const bytes = Buffer.from(image.b64_json!, 'base64');
      const meta = await sharp(bytes).metadata();
      expect([meta.format, meta.width, meta.height, meta.hasAlpha]).toEqual(['webp', 1536, 1024, true]);
      expect(await seeThrough(bytes)).toBeGreaterThan(1000);
    }
    const taskId = (res as unknown as { task_id: string }).task_id;
    const task = await api(t.url, 'GET', `/tasks/${taskId}`, { key });
    expect([task.status, task.body.kind, task.body.state]).toEqual([200, 'image', 'succeeded']);
  }, 60_000);

  it('images.edit: two image files and a PNG mask → an image the size of the first input', async () => {
    const first = await png(640, 480);
    const second = await png(320, 320);
    const mask = await sharp({ create: { width: 640, height: 480, channels: 4, background: { r: 0, g: 0, b: 0, alpha: 0 } } }).png().toBuffer();
    const res = await openai.images.edit({
      model: 'gpt-image-1',
      prompt: 'Put a hat on it',
      image: [await toFile(first, 'a.png', { type: 'image/png' }), await toFile(second, 'b.png', { type: 'image/png' })],
      mask: await toFile(mask, 'mask.png', { type: 'image/png' }),
    });
    const meta = await sharp(Buffer.from(res.data![0].b64_json!, 'base64')).metadata();
    expect([meta.format, meta.width, meta.height]).toEqual(['png', 640, 480]);
    expect(res.size).toBe('640x480');
  }, 60_000);

  it('images.edit: an image or a mask whose header is whole but whose data is cut off, or a mask without alpha, is a 400 naming it, and no task', async () => {
    const first = await png(640, 480);
    const cut = first.subarray(0, 200);
    const mask = await sharp({ create: { width: 640, height: 480, channels: 4, background: { r: 0, g: 0, b: 0, alpha: 0 } } }).png().toBuffer();
    const tasks = async () => (await queryDb<{ n: number }>(t.db, 'SELECT count(*)::int AS n FROM tasks'))[0].n;
    const before = await tasks();
    const edit = async (image: Buffer, withMask?: Buffer) =>
      openai.images
        .edit({ model: 'gpt-image-1', prompt: 'Put a hat on it', image: [await toFile(image, 'a.png', { type: 'image/png' })], ...(withMask ? { mask: await toFile(withMask, 'mask.png', { type: 'image/png' }) } : {}) })
        .catch((err: unknown) => err as BadRequestError);
    const refusedImage = (await edit(cut)) as BadRequestError;
    expect([refusedImage.constructor, refusedImage.status, refusedImage.message]).toEqual([BadRequestError, 400, expect.stringMatching(/^400 image\[0\] must be a whole PNG file; its image data could not be decoded/)]);
    const refusedMask = (await edit(first, mask.subarray(0, mask.length - 40))) as BadRequestError;
    expect([refusedMask.status, refusedMask.message]).toEqual([400, expect.stringMatching(/^400 mask must be a whole PNG file; its image data could not be decoded/)]);
    // a mask without an alpha channel (an RGB PNG) says nothing of where to paint: OpenAI refuses it, in these words
    const opaque = await sharp({ create: { width: 640, height: 480, channels: 3, background: { r: 0, g: 0, b: 0 } } }).png().toBuffer();
    const noAlpha = (await edit(first, opaque)) as BadRequestError;
    expect([noAlpha.status, noAlpha.param, noAlpha.message]).toEqual([400, 'mask', expect.stringMatching(/mask image missing alpha channel/)]);
    expect(await tasks()).toBe(before);
  }, 60_000);

  it('images.generate with stream and partial_images 2: partial events, then one completed event the SDK parses', async () => {
    const stream = await openai.images.generate({ model: 'gpt-image-1', prompt: 'A paper boat', stream: true, partial_images: 2, size: '1024x1024' });
    const events: { type: string; partial_image_index?: number; b64_json: string; size?: string }[] = [];
    for await (const event of stream) events.push(event);
    expect(events.map((e) => [e.type, e.partial_image_index])).toEqual([
      ['image_generation.partial_image', 0],
      ['image_generation.partial_image', 1],
      ['image_generation.completed', undefined],
    ]);
    const meta = await sharp(Buffer.from(events[2].b64_json, 'base64')).metadata();
    expect([meta.width, meta.height, events[2].size]).toEqual([1024, 1024, '1024x1024']);
  }, 60_000);

  it('response_format url: links to the stored copies, which open without a key', async () => {
    const res = await openai.images.generate({ prompt: 'A bowl of ramen', response_format: 'url', size: '1024x1536' });
    const link = res.data![0].url!;
    expect(link).toMatch(/\/media\/.+signature=/);
    const fetched = await fetch(link);
    expect(fetched.status).toBe(200);
    const meta = await sharp(Buffer.from(await fetched.arrayBuffer())).metadata();
    expect([meta.format, meta.width, meta.height]).toEqual(['png', 1024, 1536]);
  }, 60_000);

  /** The SDK's error for a generation it was refused. */
  const refused = async (body: Record<string, unknown>, client = openai): Promise<BadRequestError> => {
    try {
      await client.images.generate({ prompt: 'x', ...body } as never);
    } catch (err) {
      return err as BadRequestError;
    }
    throw new Error(`not refused: ${JSON.stringify(body)}`);
  };

  it("refuses what no configured model honours, with OpenAI's BadRequestError naming the field", async () => {
    for (const [body, param] of [
      [{ style: 'vivid' }, 'style'],
      [{ n: 11 }, 'n'],
      [{ background: 'transparent', output_format: 'jpeg' }, 'background'],
      [{ model: 'dall-e-3' }, 'model'],
    ] as const) {
      const err = await refused(body);
      expect(err).toBeInstanceOf(BadRequestError);
      expect([err.param, err.message]).toEqual([param, expect.stringContaining(param)]);
    }
    // a size a model would take but past the gateway's image limits (8192 px a side): refused, not made and then failed
    const past = await refused({ model: 'gemini-3-pro-image-preview', size: '8208x8192' });
    expect([past.constructor, past.status, past.param, past.message]).toEqual([BadRequestError, 400, 'size', expect.stringMatching(/^400 size: 8208x8192 is past this gateway's image limits \(at most 8192 px a side/)]);
    expect((await refused({ size: '99999x99999' })).message).not.toMatch(/could make it/);
  }, 60_000);

  it('images.createVariation (multipart, as the SDK sends it): 404 not_supported naming the operation, whatever the body', async () => {
    const err = await openai.images.createVariation({ image: await toFile(await png(64, 64), 'a.png', { type: 'image/png' }) }).then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(err).toBeInstanceOf(NotFoundError);
    expect([(err as NotFoundError).code, (err as NotFoundError).message]).toEqual(['not_supported', expect.stringContaining('images.createVariation')]);
  });

  it("answers each refusal with OpenAI's own code and param, as OpenAI's API does (never invalid_parameter)", async () => {
    const cases: [Record<string, unknown>, string, string][] = [
      [{ prompt: undefined }, 'prompt', 'missing_required_parameter'],
      [{ prompt: '' }, 'prompt', 'empty_string'],
      [{ prompt: 42 }, 'prompt', 'invalid_type'],
      [{ prompt: 'p'.repeat(32_001) }, 'prompt', 'string_above_max_length'],
      [{ n: 0 }, 'n', 'integer_below_min_value'],
      [{ n: 11 }, 'n', 'integer_above_max_value'],
      [{ n: 1.5 }, 'n', 'invalid_type'],
      [{ n: 'two' }, 'n', 'invalid_type'],
      [{ output_format: 'jpeg', output_compression: 101 }, 'output_compression', 'integer_above_max_value'],
      [{ quality: 'ultra' }, 'quality', 'invalid_value'],
      [{ size: '333x333' }, 'size', 'invalid_value'],
      [{ model: 'dall-e-3' }, 'model', 'invalid_value'],
      [{ background: 'transparent', output_format: 'jpeg' }, 'background', 'invalid_value'],
    ];
    for (const [body, param, code] of cases) {
      const err = await refused(body);
      expect([body, err.status, err.type, err.code, err.param]).toEqual([body, 400, 'invalid_request_error', code, param]);
    }
    // a file an edit needs, missing
    const edit = (await openai.images.edit({ prompt: 'x', image: [] } as never).catch((err: unknown) => err)) as BadRequestError;
    expect([edit.status, edit.code, edit.param]).toEqual([400, 'missing_required_parameter', 'image']);
    // more image[] parts than an edit takes (16): the parameter named, image, as an unknown part's is
    const small = await png(64, 64);
    const seventeen = await openai.images.edit({ prompt: 'x', image: await Promise.all(Array.from({ length: 17 }, (_, i) => toFile(small, `${i}.png`, { type: 'image/png' }))) }).catch((err: unknown) => err as BadRequestError);
    expect([(seventeen as BadRequestError).status, (seventeen as BadRequestError).param]).toEqual([400, 'image']);
    // a key it does not know: OpenAI's invalid_api_key
    const stranger = new OpenAI({ apiKey: 'mgw_not-a-key-of-this-gateway-0000000000', baseURL: `${t.url}/openai/v1`, maxRetries: 0 });
    const denied = (await stranger.images.generate({ prompt: 'x' }).catch((err: unknown) => err)) as AuthenticationError;
    expect(denied).toBeInstanceOf(AuthenticationError);
    expect([denied.status, denied.code]).toEqual([401, 'invalid_api_key']);
  }, 60_000);

  it("takes, with no model named, what OpenAI's own models take, as a gateway relaying to OpenAI does: 333x333 is refused naming size; the stand-in `sandbox` draws it when named", async () => {
    const err = await refused({ size: '333x333' });
    expect([err.status, err.code, err.param]).toEqual([400, 'invalid_value', 'size']);
    expect(err.message).toMatch(/^400 size: no configured OpenAI model makes this size \(333x333\); models that could make it: .*sandbox \(sandbox\)/);
    const drawn = await openai.images.generate({ model: 'sandbox', prompt: 'A square of odd size', size: '333x333' } as never);
    const meta = await sharp(Buffer.from(drawn.data![0].b64_json!, 'base64')).metadata();
    expect([meta.width, meta.height, drawn.size]).toEqual([333, 333, '333x333']);
    // each real model takes what it takes: gpt-image-2 a size of sides in multiples of 16, not another
    const free = await openai.images.generate({ model: 'gpt-image-2', prompt: 'A wide harbour', size: '1280x720' } as never);
    expect(free.size).toBe('1280x720');
    const notSixteen = await refused({ model: 'gpt-image-2', size: '1000x1000' });
    expect([notSixteen.param, notSixteen.message]).toEqual(['size', expect.stringMatching(/^400 size: model gpt-image-2 does not make this size \(1000x1000\)/)]);
    // a seed (an extension OpenAI's models do not take): refused without a model, made by a model that takes one
    expect((await refused({ seed: 7 })).param).toBe('seed');
    const seeded = await openai.images.generate({ model: 'sandbox', prompt: 'A seeded lemon', seed: 7 } as never);
    expect(seeded.data).toHaveLength(1);
    // the models list still names every vendor's model and the stand-in
    const listed = (await openai.models.list()).data.map((m) => m.id);
    expect(listed).toEqual(expect.arrayContaining(['gpt-image-1', 'gpt-image-2', 'gemini-2.5-flash-image', 'kling-v2-1', 'sandbox']));
    // and the door's speech and video models, each name once; retrieve reads one, or OpenAI's 404 model_not_found
    expect(listed).toEqual(expect.arrayContaining(['tts-1', 'gpt-4o-mini-tts', 'eleven_multilingual_v2', 'ray-2']));
    expect(new Set(listed).size).toBe(listed.length);
    expect(await openai.models.retrieve('tts-1')).toEqual(expect.objectContaining({ id: 'tts-1', object: 'model', owned_by: 'openai' }));
    const missing = (await openai.models.retrieve('gpt-nothing').catch((err: unknown) => err)) as NotFoundError;
    expect([missing.constructor, missing.status, missing.code, missing.param]).toEqual([NotFoundError, 404, 'model_not_found', 'model']);
  }, 60_000);

  it('reads a JSON null as the default, as OpenAI does (the SDK types every optional field | null)', async () => {
    const nulls = Object.fromEntries(['model', 'n', 'size', 'quality', 'background', 'output_format', 'output_compression', 'response_format', 'moderation', 'stream', 'partial_images', 'user', 'seed', 'negative_prompt', 'style'].map((f) => [f, null]));
    const res = await api(t.url, 'POST', '/openai/v1/images/generations', { key, body: { prompt: 'A lemon', ...nulls } });
    expect([res.status, res.body.data?.length, res.body.size, res.body.output_format]).toEqual([200, 1, '1024x1024', 'png']);
  }, 60_000);

  it("Kling's door: a task found by task_id and external_task_id, callbacks [processing, succeed] with the images' URLs, which open", async () => {
    const created = await api(t.url, 'POST', KLING_DOOR, { key, body: { prompt: 'A Pixar-style puppy', n: 2, aspect_ratio: '3:2', external_task_id: 'order-77-image', callback_url: `${receiver.url}/kling-image` } });
    expect([created.status, created.body.code, created.body.data?.task_status, created.body.message]).toEqual([200, 0, 'submitted', 'SUCCEED']);
    const id = created.body.data.task_id as string;
    const done = await pollUntil(() => api(t.url, 'GET', `${KLING_DOOR}/${id}`, { key }), (r) => ['succeed', 'failed'].includes(r.body.data.task_status), { timeoutMs: 60_000, what: 'the image task' });
    expect([done.body.data.task_status, done.body.data.task_result.images.length, done.body.data.final_unit_deduction]).toEqual(['succeed', 2, '2']);
    const byExternal = await api(t.url, 'GET', `${KLING_DOOR}/order-77-image`, { key });
    expect(byExternal.body.data.task_id).toBe(id);
    const listed = await api(t.url, 'GET', `${KLING_DOOR}?pageSize=5`, { key });
    expect(listed.body.data.map((r: { task_id: string }) => r.task_id)).toContain(id);
    const bodies = await pollUntil(async () => receiver.received.filter((r) => r.path === '/kling-image').map((r) => r.json as { task_status: string; task_result: { images: { url: string }[] } }), (b) => b.some((x) => x.task_status === 'succeed'), { what: 'the succeed callback' });
    expect(bodies.map((b) => b.task_status)).toEqual(['processing', 'succeed']);
    for (const image of bodies[1].task_result.images) {
      const fetched = await fetch(image.url);
      expect(fetched.status).toBe(200);
      const meta = await sharp(Buffer.from(await fetched.arrayBuffer())).metadata();
      expect(meta.width! / meta.height!).toBeCloseTo(1.5, 2);
    }
  }, 90_000);
});

describe("OpenAI's image and speech doors on an instance that runs no worker", () => {
  let t: TestApp;
  let key: string;
  beforeAll(async () => {
    t = await startTestApp({ ROLE: 'api', IMAGE_HOLD_S: '1', SPEECH_HOLD_S: '1' });
    key = await t.createKey('image-held');
  }, 60_000);
  afterAll(() => t.close());

  it('answers 504 timeout at the end of its hold, naming the task, which is kept (queued) and not to be retried by the SDK', async () => {
    const res = await api(t.url, 'POST', '/openai/v1/images/generations', { key, body: { prompt: 'A slow painting' } });
    expect([res.status, res.body.error.code, res.headers.get('x-should-retry')]).toEqual([504, 'timeout', 'false']);
    const taskId = /image task ([0-9a-f-]{36})/.exec(res.body.error.message)![1];
    const task = await api(t.url, 'GET', `/tasks/${taskId}`, { key });
    expect([task.status, task.body.kind, task.body.state]).toEqual([200, 'image', 'queued']);
    // streamed, the hold ends with an error event in OpenAI's shape
    const streamed = await fetch(`${t.url}/openai/v1/images/generations`, { method: 'POST', headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' }, body: JSON.stringify({ prompt: 'Another', stream: true }) });
    expect([streamed.status, streamed.headers.get('content-type')]).toEqual([200, 'text/event-stream; charset=utf-8']);
    expect(await streamed.text()).toMatch(/^event: error\ndata: \{"type":"error","error":\{"message":"the image task [0-9a-f-]{36} did not end within 1 s.*"code":"timeout"/);
  }, 60_000);

  it("the speech door's 504 names its task in x-task-id too, as its audio would", async () => {
    const res = await api(t.url, 'POST', '/openai/v1/audio/speech', { key, body: { model: 'gpt-4o-mini-tts', input: 'A slow sentence.', voice: 'coral' } });
    expect([res.status, res.body.error.code, res.headers.get('x-should-retry')]).toEqual([504, 'timeout', 'false']);
    const taskId = res.headers.get('x-task-id')!;
    expect(res.body.error.message).toContain(taskId);
    const task = await api(t.url, 'GET', `/tasks/${taskId}`, { key });
    expect([task.status, task.body.kind, task.body.state]).toEqual([200, 'speech', 'queued']);
  }, 60_000);
});
