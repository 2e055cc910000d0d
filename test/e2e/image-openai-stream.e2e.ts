import OpenAI, { toFile } from 'openai';
import sharp from 'sharp';
import { type FakeOpenAIImages, startFakeOpenAIImages } from '../support/vendors/openai/openai.fake.js';
import { startServer, type TestServer } from '../support/http-server.js';
import { png } from '../support/images.js';
import { api, queryDb, startTestApp, type TestApp } from '../support/test-app.js';

const ADMIN = 'admin-secret-0123456789';
const OPENAI_KEY = 'sk-openai-stream-0123456789';

/** What a streamed call through an OpenAI SDK gave: each event's type and, for a partial image, its index and bytes. */
interface Streamed {
  types: string[];
  partials: { index: number; bytes: Buffer }[];
  completed: Buffer[];
}

async function read(stream: AsyncIterable<{ type: string; b64_json?: string; partial_image_index?: number }>): Promise<Streamed> {
  const seen: Streamed = { types: [], partials: [], completed: [] };
  for await (const event of stream) {
    seen.types.push(event.type);
    if (event.type.endsWith('.partial_image')) seen.partials.push({ index: event.partial_image_index!, bytes: Buffer.from(event.b64_json!, 'base64') });
    if (event.type.endsWith('.completed')) seen.completed.push(Buffer.from(event.b64_json!, 'base64'));
  }
  return seen;
}

/**
 * OpenAI's partial images streamed through the gateway: a caller streaming from OpenAI's Images door (its own
 * SDK) with `partial_images` has the gateway ask the OpenAI channel to stream too, and gets the upstream's partial
 * images (byte for byte) as they come, then the images; an unstreamed call is asked unstreamed. An upstream's
 * stream that ends in an error event (its safety system) fails the task as its unstreamed refusal would.
 */
describe('image: partial images streamed from OpenAI', () => {
  let t: TestApp;
  let key: string;
  let fake: FakeOpenAIImages;
  /** An OpenAI of the test's own wire: CRLF lines, events without `event:` lines, a chunk split inside a line end. */
  let raw: TestServer;
  let gateway: OpenAI;
  /** The same SDK asking the fake directly: what it streams, to compare with what came through the gateway. */
  let direct: OpenAI;
  const channels: Record<string, string> = {};

  beforeAll(async () => {
    fake = await startFakeOpenAIImages(OPENAI_KEY);
    raw = await startServer(async (req, res) => {
      const asked = JSON.parse(req.body.toString('utf8')) as { stream?: boolean; partial_images?: number };
      const picture = await png(64, 64);
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      const partial = JSON.stringify({ type: 'image_generation.partial_image', b64_json: picture.toString('base64'), partial_image_index: 0 });
      // the data line in two chunks, its `\r\n` split between them
      res.write(`: keep-alive\r\ndata: ${partial.slice(0, 20)}`);
      res.write(`${partial.slice(20)}\r`);
      res.write(`\n\r\n`);
      const error = { type: 'image_generation_user_error', code: 'moderation_blocked', message: 'Your request was rejected by the safety system. safety_violations=[violence].', param: null };
      res.end(asked.stream ? `event: error\r\ndata: ${JSON.stringify({ type: 'error', error })}\r\n\r\n` : '');
    });
    t = await startTestApp({ IMAGE_PROVIDER: 'relay', ADMIN_API_KEY: ADMIN, OUTBOUND_ALLOW_HOSTS: '127.0.0.1' });
    key = await t.createKey('team-images-stream');
    gateway = new OpenAI({ apiKey: key, baseURL: `${t.url}/openai/v1`, maxRetries: 0 });
    direct = new OpenAI({ apiKey: OPENAI_KEY, baseURL: fake.url, maxRetries: 0 });
    for (const [name, base] of [
      ['openai', fake.url],
      ['openai-raw', `${raw.url}/v1`],
    ]) {
      const res = await api(t.url, 'POST', '/admin/channels', { key: ADMIN, body: { name, operations: ['image'], protocol: 'openai', base_url: base, credentials: { api_key: OPENAI_KEY } } });
      expect([name, res.status]).toEqual([name, 201]);
      channels[name] = res.body.id as string;
    }
  }, 60_000);
  afterAll(async () => {
    await t.close();
    await Promise.all([fake.close(), raw.close()]);
  });

  /** Only this channel takes tasks. */
  const only = async (name: string) => {
    for (const [other, id] of Object.entries(channels)) expect((await api(t.url, 'POST', `/admin/channels/${id}/${other === name ? 'enable' : 'disable'}`, { key: ADMIN })).status).toBe(200);
  };

  it('a streamed generation asks OpenAI to stream, and hands on its partial images, then the image', async () => {
    await only('openai');
    const prompt = 'A lighthouse at dusk, in watercolour';
    const seen = await read(await gateway.images.generate({ model: 'gpt-image-1', prompt, stream: true, partial_images: 2 }));
    expect(seen.types).toEqual(['image_generation.partial_image', 'image_generation.partial_image', 'image_generation.completed']);
    expect(seen.partials.map((p) => p.index)).toEqual([0, 1]);
    const asked = fake.received.at(-1)!;
    expect([asked.path, asked.body, asked.streamed]).toEqual(['/v1/images/generations', { model: 'gpt-image-1', prompt, n: 1, output_format: 'png', stream: true, partial_images: 2 }, true]);

    // the same request straight to the fake streams the same partial images (its pictures are of their words)
    const upstream = await read(await direct.images.generate({ model: 'gpt-image-1', prompt, n: 1, output_format: 'png', stream: true, partial_images: 2 }));
    expect(upstream.partials).toHaveLength(2);
    expect(seen.partials.map((p) => p.bytes.equals(upstream.partials[p.index].bytes))).toEqual([true, true]);
    expect((await sharp(seen.completed[0]).metadata()).width).toBe(1024);
  }, 60_000);

  it('an unstreamed generation is asked unstreamed', async () => {
    await only('openai');
    const made = await gateway.images.generate({ model: 'gpt-image-1', prompt: 'A quiet harbour' });
    expect(fake.received.at(-1)).toEqual(expect.objectContaining({ body: { model: 'gpt-image-1', prompt: 'A quiet harbour', n: 1, output_format: 'png' }, status: 200 }));
    expect(fake.received.at(-1)!.streamed).toBeUndefined();
    expect((await sharp(Buffer.from(made.data![0].b64_json!, 'base64')).metadata()).format).toBe('png');
  }, 60_000);

  it('a streamed edit asks for its partial images as multipart fields and hands them on', async () => {
    await only('openai');
    const seen = await read(await gateway.images.edit({ model: 'gpt-image-1', prompt: 'Add a red hat', image: await toFile(await png(512, 512), 'in.png', { type: 'image/png' }), stream: true, partial_images: 1 }));
    expect(seen.types).toEqual(['image_edit.partial_image', 'image_edit.completed']);
    expect(seen.partials.map((p) => p.index)).toEqual([0]);
    const asked = fake.received.at(-1)!;
    expect([asked.path, asked.fields, asked.streamed]).toEqual(['/v1/images/edits', { model: 'gpt-image-1', prompt: 'Add a red hat', n: '1', output_format: 'png', stream: 'true', partial_images: '1' }, true]);
    expect(seen.partials[0].bytes.length).toBeGreaterThan(0);
  }, 60_000);

  it("an upstream stream of CRLF lines without event names is read, and its error event is the safety system's refusal", async () => {
    await only('openai-raw');
    const failed = await read(await gateway.images.generate({ model: 'gpt-image-1', prompt: 'Something it refuses', stream: true, partial_images: 1 })).catch((err: unknown) => err);
    expect(failed).toBeInstanceOf(OpenAI.APIError);
    const message = (failed as InstanceType<typeof OpenAI.APIError>).message;
    expect(message).toMatch(/safety system/);
    // its partial image, read from the CRLF lines before the error, was kept (the task's partial 0)
    const taskId = /image task ([0-9a-f-]{36})/.exec(message)?.[1];
    expect(await queryDb(t.db, "SELECT index FROM media WHERE task_id = $1 AND role = 'partial'", [taskId])).toEqual([{ index: 0 }]);
    expect(JSON.parse(raw.requests.at(-1)!.body.toString('utf8'))).toEqual(expect.objectContaining({ stream: true, partial_images: 1 }));
  }, 60_000);
});
