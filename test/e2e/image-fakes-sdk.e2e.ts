import { ApiError, GoogleGenAI } from '@google/genai';
import OpenAI, { AuthenticationError, BadRequestError, RateLimitError, toFile } from 'openai';
import sharp from 'sharp';
import { type FakeGemini, startFakeGemini } from '../support/vendors/google/gemini.fake.js';
import { type FakeOpenAIImages, startFakeOpenAIImages } from '../support/vendors/openai/openai.fake.js';
import { png } from '../support/images.js';

/** The image's format, size and whether it has an alpha channel. */
async function described(b64: string | undefined): Promise<[string | undefined, number | undefined, number | undefined, boolean | undefined]> {
  const meta = await sharp(Buffer.from(b64 ?? '', 'base64')).metadata();
  return [meta.format, meta.width, meta.height, meta.hasAlpha];
}

/**
 * The image vendors' fakes are what the vendors' own SDKs expect: the official openai SDK against the OpenAI
 * Images fake (generations, streamed partial images, edits with files and a mask, errors as the SDK's classes)
 * and @google/genai against the Gemini fake (the path and key header it sends, an image it reads past the
 * thought parts, a refusal). No gateway: each test is the SDK and the fake alone.
 */
describe('the image vendor fakes, driven by the official SDKs', () => {
  describe("OpenAI's Images API (openai SDK)", () => {
    let fake: FakeOpenAIImages;
    let openai: OpenAI;
    beforeAll(async () => {
      fake = await startFakeOpenAIImages('sk-test-openai');
      openai = new OpenAI({ apiKey: 'sk-test-openai', baseURL: fake.url, maxRetries: 0 });
    });
    afterAll(() => fake.close());
    beforeEach(() => {
      fake.received.length = 0;
      for (const k of Object.keys(fake.knobs)) delete (fake.knobs as Record<string, unknown>)[k];
    });

    it('images.generate: n images of the asked size, transparent where asked, in the asked format; the JSON body as sent', async () => {
      const res = await openai.images.generate({ model: 'gpt-image-1', prompt: 'A sticker of a red fox', n: 2, size: '1536x1024', quality: 'low', background: 'transparent', output_format: 'webp' });
      expect(res.data).toHaveLength(2);
      expect([res.size, res.quality, res.background, res.output_format]).toEqual(['1536x1024', 'low', 'transparent', 'webp']);
      expect(res.usage?.output_tokens).toBe(800);
      for (const image of res.data!) expect(await described(image.b64_json)).toEqual(['webp', 1536, 1024, true]);
      expect(fake.received).toEqual([
        expect.objectContaining({ path: '/v1/images/generations', body: { model: 'gpt-image-1', prompt: 'A sticker of a red fox', n: 2, size: '1536x1024', quality: 'low', background: 'transparent', output_format: 'webp' }, status: 200 }),
      ]);
      // an opaque PNG at `auto`: 1024x1024, no alpha channel
      const opaque = await openai.images.generate({ model: 'gpt-image-1-mini', prompt: 'A lighthouse' });
      expect(await described(opaque.data![0].b64_json)).toEqual(['png', 1024, 1024, false]);
      // gpt-image-2: a free size within its rule
      const wide = await openai.images.generate({ model: 'gpt-image-2', prompt: 'A panorama', size: '2048x1152' });
      expect(await described(wide.data![0].b64_json)).toEqual(['png', 2048, 1152, false]);
    });

    it('images.generate with stream and partial_images 2: its events, partial images then the completed image, as the SDK iterates them', async () => {
      const stream = await openai.images.generate({ model: 'gpt-image-1.5', prompt: 'A paper boat', size: '1024x1536', stream: true, partial_images: 2 });
      const events: { type: string; partial_image_index?: number; b64_json: string; size: string; usage?: unknown }[] = [];
      for await (const event of stream) events.push(event);
      expect(events.map((e) => [e.type, e.partial_image_index])).toEqual([
        ['image_generation.partial_image', 0],
        ['image_generation.partial_image', 1],
        ['image_generation.completed', undefined],
      ]);
      for (const event of events) expect((await described(event.b64_json)).slice(0, 3)).toEqual(['png', 1024, 1536]);
      expect(events[2]).toEqual(expect.objectContaining({ size: '1024x1536', usage: expect.objectContaining({ output_tokens: expect.any(Number) }) }));
      expect(fake.received[0]).toEqual(expect.objectContaining({ body: expect.objectContaining({ stream: true, partial_images: 2 }), streamed: true }));
    });

    it('images.edit: two files as image[] parts and a mask, fields as strings; the answer at the standard size nearest the first image', async () => {
      const first = await png(640, 480);
      const mask = await sharp({ create: { width: 640, height: 480, channels: 4, background: { r: 0, g: 0, b: 0, alpha: 0 } } })
        .png()
        .toBuffer();
      const res = await openai.images.edit({
        model: 'gpt-image-1',
        prompt: 'Put a hat on it',
        image: [await toFile(first, 'a.png', { type: 'image/png' }), await toFile(await png(320, 320), 'b.png', { type: 'image/png' })],
        mask: await toFile(mask, 'mask.png', { type: 'image/png' }),
        n: 2,
        input_fidelity: 'high',
      });
      expect(res.data).toHaveLength(2);
      expect(await described(res.data![0].b64_json)).toEqual(['png', 1536, 1024, false]);
      const [edit] = fake.received;
      expect(edit.path).toBe('/v1/images/edits');
      expect(edit.fields).toEqual({ model: 'gpt-image-1', prompt: 'Put a hat on it', n: '2', input_fidelity: 'high' });
      // the SDK's parts, in the order it sends them (the array's in its own order)
      expect(edit.files!.map(({ field, filename, type, width, height, alpha }) => ({ field, filename, type, width, height, alpha }))).toEqual([
        { field: 'mask', filename: 'mask.png', type: 'image/png', width: 640, height: 480, alpha: true },
        { field: 'image[]', filename: 'a.png', type: 'image/png', width: 640, height: 480, alpha: false },
        { field: 'image[]', filename: 'b.png', type: 'image/png', width: 320, height: 320, alpha: false },
      ]);
      // a file without its type is refused as OpenAI refuses it
      const untyped = openai.images.edit({ model: 'gpt-image-1', prompt: 'x', image: await toFile(first, 'a.png') });
      await expect(untyped).rejects.toThrow(BadRequestError);
      await expect(untyped).rejects.toMatchObject({ code: 'unsupported_file_mimetype' });
    });

    it('errors as the SDK classes them: moderation_blocked 400, a bad key 401, insufficient_quota and rate limits 429, 5xx, a 403 of verification', async () => {
      fake.knobs.moderation = true;
      const refused = openai.images.generate({ model: 'gpt-image-1', prompt: 'something it refuses' });
      await expect(refused).rejects.toThrow(BadRequestError);
      await expect(refused).rejects.toMatchObject({ status: 400, code: 'moderation_blocked', type: 'image_generation_user_error', message: expect.stringMatching(/rejected by the safety system/) });
      fake.knobs.moderation = false;

      fake.knobs.insufficientQuota = true;
      await expect(openai.images.generate({ model: 'gpt-image-1', prompt: 'x' })).rejects.toMatchObject({ status: 429, code: 'insufficient_quota', type: 'insufficient_quota' });
      fake.knobs.insufficientQuota = false;
      fake.knobs.rateLimited = 1;
      const limited = openai.images.generate({ model: 'gpt-image-1', prompt: 'x' });
      await expect(limited).rejects.toThrow(RateLimitError);
      await expect(openai.images.generate({ model: 'gpt-image-1', prompt: 'x' })).resolves.toBeDefined();
      fake.knobs.serverError = 1;
      await expect(openai.images.generate({ model: 'gpt-image-1', prompt: 'x' })).rejects.toMatchObject({ status: 500, type: 'server_error' });
      fake.knobs.unverified = true;
      await expect(openai.images.generate({ model: 'gpt-image-1', prompt: 'x' })).rejects.toMatchObject({ status: 403, message: expect.stringMatching(/must be verified/) });
      fake.knobs.unverified = false;

      // what it refuses of the request itself
      await expect(openai.images.generate({ model: 'gpt-image-1', prompt: 'x', size: '512x512' })).rejects.toMatchObject({ status: 400, code: 'invalid_size' });
      await expect(openai.images.generate({ model: 'gpt-image-2', prompt: 'x', background: 'transparent' })).rejects.toMatchObject({ status: 400, param: 'background' });
      await expect(openai.images.generate({ model: 'dall-e-3', prompt: 'x' })).rejects.toMatchObject({ status: 404, code: 'model_not_found' });
      const stranger = new OpenAI({ apiKey: 'sk-wrong', baseURL: fake.url, maxRetries: 0 });
      await expect(stranger.images.generate({ model: 'gpt-image-1', prompt: 'x' })).rejects.toThrow(AuthenticationError);
      expect((await openai.models.list()).data.map((m) => m.id)).toEqual(expect.arrayContaining(['gpt-image-1', 'gpt-image-2']));
    });
  });

  describe("Google's Gemini API (@google/genai)", () => {
    let fake: FakeGemini;
    let ai: GoogleGenAI;
    // Jest's module sandbox has its own globalThis, without Node's Undici dispatcher that the SDK wraps: it is
    // given the sandbox's fetch (its `httpOptions.fetch`), which sends the same requests
    const client = (apiKey: string) => new GoogleGenAI({ apiKey, httpOptions: { baseUrl: fake.url, fetch: (input, init) => fetch(input, init) } });
    beforeAll(async () => {
      fake = await startFakeGemini('AIza-test-gemini');
      ai = client('AIza-test-gemini');
    });
    afterAll(() => fake.close());
    beforeEach(() => {
      fake.received.length = 0;
      fake.server.requests.length = 0;
      for (const k of Object.keys(fake.knobs)) delete (fake.knobs as Record<string, unknown>)[k];
    });

    it('models.generateContent: POST /v1beta/models/{model}:generateContent with x-goog-api-key; the image of the asked shape, read past the thought parts', async () => {
      const res = await ai.models.generateContent({
        model: 'gemini-3-pro-image-preview',
        contents: 'A watercolour of a harbour at dusk',
        config: { responseModalities: ['IMAGE'], imageConfig: { aspectRatio: '3:2', imageSize: '2K' }, seed: 7 },
      });
      const [request] = fake.server.requests;
      expect([request.method, request.url, request.headers['x-goog-api-key']]).toEqual(['POST', '/v1beta/models/gemini-3-pro-image-preview:generateContent', 'AIza-test-gemini']);
      // the SDK moves config into generationConfig, and the text into one user turn
      expect(fake.received[0].body).toEqual({
        contents: [{ role: 'user', parts: [{ text: 'A watercolour of a harbour at dusk' }] }],
        generationConfig: { responseModalities: ['IMAGE'], imageConfig: { aspectRatio: '3:2', imageSize: '2K' }, seed: 7 },
      });
      const parts = res.candidates![0].content!.parts!;
      expect(parts.map((p) => [p.thought === true, p.text !== undefined, p.inlineData !== undefined])).toEqual([
        [true, true, false],
        [true, false, true],
        [false, false, true],
      ]);
      const image = parts.find((p) => p.inlineData && !p.thought)!.inlineData!;
      expect(image.mimeType).toBe('image/png');
      expect(await described(image.data)).toEqual(['png', 2528, 1696, false]);
      expect(res.candidates![0].finishReason).toBe('STOP');
    });

    it('an edit: the input images as inlineData parts; without a shape asked, the first image’s; gemini-2.5-flash-image at 1K, no thoughts', async () => {
      const input = (await png(900, 1600)).toString('base64');
      const res = await ai.models.generateContent({
        model: 'gemini-2.5-flash-image',
        contents: [{ role: 'user', parts: [{ text: 'Make it night' }, { inlineData: { mimeType: 'image/png', data: input } }] }],
        config: { responseModalities: ['IMAGE'] },
      });
      expect(fake.received[0].body.contents[0].parts[1]).toEqual({ inlineData: { mimeType: 'image/png', data: input } });
      const parts = res.candidates![0].content!.parts!;
      expect(parts).toHaveLength(1);
      expect(await described(parts[0].inlineData!.data)).toEqual(['png', 768, 1344, false]);
      expect(fake.received[0].made).toEqual({ aspectRatio: '9:16', width: 768, height: 1344, mimeType: 'image/png' });
    });

    it('refusals and errors as Google answers them: IMAGE_SAFETY with no image (200), a bad key 400 API_KEY_INVALID, 429 RESOURCE_EXHAUSTED, lower-case sizes refused', async () => {
      fake.knobs.refuse = true;
      const refused = await ai.models.generateContent({ model: 'gemini-2.5-flash-image', contents: 'something it refuses', config: { responseModalities: ['IMAGE'] } });
      expect([refused.candidates![0].finishReason, refused.candidates![0].content]).toEqual(['IMAGE_SAFETY', undefined]);
      fake.knobs.refuse = false;

      const stranger = client('AIza-wrong');
      const bad = stranger.models.generateContent({ model: 'gemini-2.5-flash-image', contents: 'x' });
      await expect(bad).rejects.toThrow(ApiError);
      await expect(bad).rejects.toMatchObject({ status: 400, message: expect.stringMatching(/API_KEY_INVALID/) });

      fake.knobs.noQuota = true;
      await expect(ai.models.generateContent({ model: 'gemini-3.1-flash-image-preview', contents: 'x' })).rejects.toMatchObject({ status: 429, message: expect.stringMatching(/limit: 0/) });
      fake.knobs.noQuota = false;
      await expect(ai.models.generateContent({ model: 'gemini-3.1-flash-image-preview', contents: 'x', config: { imageConfig: { imageSize: '2k' } } })).rejects.toMatchObject({ status: 400 });
      const listed = await ai.models.list({ config: { pageSize: 1 } });
      expect(listed.page.map((m) => m.name)).toEqual(['models/gemini-2.5-flash-image']);
    });
  });
});
