import { UpstreamBusy, UpstreamRefused, UpstreamUnavailable } from '../../../../src/infra/relay/upstream-client.js';
import { UnusableAnswer } from '../../../../src/vendors/contracts/vendor.js';
import { OPENAI_IMAGE_MODELS, OpenAIImageVendor, freeSize, openaiImageCall, partialsFor, readOpenAIImages, sizeFor, StreamedImages, streamFailure } from '../../../../src/vendors/openai/openai-image.vendor.js';
import { OPENAI } from '../../../../src/vendors/openai/openai.vendor.js';
import { b64, imageInput, imageRequest, modelOf } from '../image-fixtures.js';

const GPT_IMAGE_1 = modelOf(OPENAI_IMAGE_MODELS, 'gpt-image-1');
const GPT_IMAGE_2 = modelOf(OPENAI_IMAGE_MODELS, 'gpt-image-2');

/**
 * OpenAI's Images API (openai-node `resources/images.ts`: ImageGenerateParams, ImageEditParams, ImagesResponse,
 * the image_generation.* and image_edit.* stream events; OpenAI's image generation guide): what the adapter sends
 * for a normalized request and how it reads what OpenAI answers, with no server.
 */
describe('OpenAI images: request mapping', () => {
  it('takes its protocol and poll floor from its descriptor', () => {
    expect([OpenAIImageVendor.protocol, OpenAIImageVendor.models]).toEqual([OPENAI.protocol, OPENAI_IMAGE_MODELS]);
  });

  it("a generation is the guide's JSON body: model, prompt, n, size, quality, background, PNG", () => {
    const call = openaiImageCall(GPT_IMAGE_1, imageRequest({ n: 2, size: '1536x1024', quality: 'high', background: 'transparent', outputFormat: 'webp' }), [], undefined, 0);
    expect(call).toEqual({ path: '/images/generations', body: { model: 'gpt-image-1', prompt: 'A lighthouse at dusk', n: 2, size: '1536x1024', quality: 'high', background: 'transparent', output_format: 'png' } });
  });

  it('nothing asked of the size: no size (OpenAI picks, its auto)', () => {
    expect(openaiImageCall(GPT_IMAGE_1, imageRequest(), [], undefined, 0)).toEqual({ path: '/images/generations', body: { model: 'gpt-image-1', prompt: 'A lighthouse at dusk', n: 1, output_format: 'png' } });
  });

  it('partial images asked: streamed with partial_images', () => {
    expect(openaiImageCall(GPT_IMAGE_1, imageRequest(), [], undefined, 2)).toEqual({ path: '/images/generations', body: { model: 'gpt-image-1', prompt: 'A lighthouse at dusk', n: 1, output_format: 'png', stream: true, partial_images: 2 } });
  });

  it('an edit is multipart: its fields as strings, each image an image[] part, the mask its own part', () => {
    const [photo, second, mask] = [imageInput(800, 600), imageInput(400, 400, 'jpeg'), imageInput(800, 600)];
    const call = openaiImageCall(GPT_IMAGE_1, imageRequest({ mode: 'edit', images: 2, mask: true, n: 3 }), [photo, second], mask, 0);
    expect(call).toEqual({
      path: '/images/edits',
      fields: { model: 'gpt-image-1', prompt: 'A lighthouse at dusk', n: '3', output_format: 'png' },
      files: [
        { name: 'image[]', image: photo, filename: 'image-0.png' },
        { name: 'image[]', image: second, filename: 'image-1.jpg' },
        { name: 'mask', image: mask, filename: 'mask.png' },
      ],
    });
  });

  it("a generation with reference images goes to /images/edits without a mask, as OpenAI's guide does", () => {
    const ref = imageInput(512, 512, 'webp');
    const call = openaiImageCall(GPT_IMAGE_1, imageRequest({ images: 1, aspectRatio: '2:3' }), [ref], imageInput(1, 1), 0);
    expect(call).toEqual({ path: '/images/edits', fields: { model: 'gpt-image-1', prompt: 'A lighthouse at dusk', n: '1', size: '1024x1536', output_format: 'png' }, files: [{ name: 'image[]', image: ref, filename: 'image-0.webp' }] });
  });

  it("partials: those asked (0-3) of a model that streams; none of gpt-image-2, which does not", () => {
    expect([partialsFor(GPT_IMAGE_1, undefined), partialsFor(GPT_IMAGE_1, 2.7), partialsFor(GPT_IMAGE_1, 9), partialsFor(GPT_IMAGE_1, -1), partialsFor(GPT_IMAGE_2, 3)]).toEqual([0, 2, 3, 0, 0]);
  });
});

describe('OpenAI images: sizes', () => {
  it('the fixed-size models: the asked size, or the size of the asked shape (a generation square, an edit its first image)', () => {
    expect(sizeFor(GPT_IMAGE_1, imageRequest({ size: '1024x1536' }), undefined)).toBe('1024x1536');
    expect(sizeFor(GPT_IMAGE_1, imageRequest({ aspectRatio: '3:2' }), undefined)).toBe('1536x1024');
    expect(sizeFor(GPT_IMAGE_1, imageRequest({ resolution: '1k' }), undefined)).toBe('1024x1024');
    expect(sizeFor(GPT_IMAGE_1, imageRequest({ mode: 'edit', resolution: '1k' }), imageInput(600, 900))).toBe('1024x1536');
    expect(sizeFor(GPT_IMAGE_1, imageRequest(), undefined)).toBeUndefined();
  });

  it("gpt-image-2: the nearest size it makes (sides of 16, 655,360 to 8,294,400 pixels, at most 3840, shapes to 3:1)", () => {
    expect(sizeFor(GPT_IMAGE_2, imageRequest({ size: '2000x1000' }), undefined)).toBe('2000x1008');
    expect(sizeFor(GPT_IMAGE_2, imageRequest({ aspectRatio: '16:9', resolution: '4k' }), undefined)).toBe('3840x2160');
    expect(sizeFor(GPT_IMAGE_2, imageRequest({ aspectRatio: '9:16', resolution: '2k' }), undefined)).toBe('1152x2048');
    expect(sizeFor(GPT_IMAGE_2, imageRequest({ resolution: '1k' }), undefined)).toBe('1024x1024');
    for (const asked of [{ width: 100, height: 100 }, { width: 4000, height: 500 }, { width: 300, height: 3000 }, { width: 5000, height: 5000 }]) {
      const [w, h] = freeSize(asked).split('x').map(Number);
      expect([w % 16, h % 16, w * h >= 655_360, w * h <= 8_294_400, Math.max(w, h) <= 3840, Math.max(w / h, h / w) <= 3]).toEqual([0, 0, true, true, true, true]);
    }
  });
});

describe('OpenAI images: answer reading', () => {
  it("its ImagesResponse: each image's b64_json (or url), the revised prompt", () => {
    const answer = { created: 1713833628, data: [{ b64_json: b64('first') }, { url: 'https://files.example/2.png', revised_prompt: 'A lighthouse at dusk, oil' }], usage: { total_tokens: 100 } };
    expect(readOpenAIImages(answer)).toEqual({ made: [{ bytes: Buffer.from('first') }, { url: 'https://files.example/2.png' }], revisedPrompt: 'A lighthouse at dusk, oil' });
  });

  it('an answer without an image is unusable; one without data names the field', () => {
    expect(() => readOpenAIImages({ data: [{ revised_prompt: 'x' }] })).toThrow(new UnusableAnswer('the upstream answered without an image (data has no b64_json or url)'));
    expect(() => readOpenAIImages({ created: 1 })).toThrow(UnusableAnswer);
    expect(() => readOpenAIImages({ created: 1 })).toThrow(/without a usable data \(expected array, received undefined\)/);
    expect(() => readOpenAIImages({ data: [{ b64_json: 42 }] })).toThrow(/without a usable data\[0\]\.b64_json \(expected string, received number\)/);
  });
});

describe("OpenAI images: its stream (server-sent events)", () => {
  const partial = (n: number) => `event: image_generation.partial_image\ndata: ${JSON.stringify({ type: 'image_generation.partial_image', b64_json: b64(`partial ${n}`), partial_image_index: n })}\n\n`;
  const completed = (name: string) => `data: ${JSON.stringify({ type: 'image_generation.completed', b64_json: b64(name) })}\n\n`;

  async function streamed(chunks: string[], perImage: number, n: number) {
    const kept: [number, string][] = [];
    const stream = new StreamedImages(perImage, n, async (index, image) => void kept.push([index, image.toString()]));
    for (const chunk of chunks) stream.push(Buffer.from(chunk));
    await stream.finish();
    return { made: stream.made.map((m) => ('bytes' in m ? m.bytes.toString() : m.url)), kept };
  }

  it('keeps each partial image at image*3 + k, in order, and the completed events are the images', async () => {
    const text = `${partial(0)}${partial(1)}${completed('one')}: a comment\n\n${partial(0)}${partial(1)}${completed('two')}`;
    expect(await streamed([text], 2, 2)).toEqual({ made: ['one', 'two'], kept: [[0, 'partial 0'], [1, 'partial 1'], [3, 'partial 0'], [4, 'partial 1']] });
  });

  it('reads events split anywhere, \\r\\n lines, data on several lines, and a last event without its blank line', async () => {
    const text = partial(0).replace(/\n/g, '\r\n') + completed('one').replace(/\n\n$/, '');
    const chunks = text.match(/[\s\S]{1,7}/g)!;
    expect(await streamed(chunks, 1, 1)).toEqual({ made: ['one'], kept: [[0, 'partial 0']] });
    const multiline = `data: {"type": "image_generation.completed",\ndata:  "b64_json": "${b64('joined')}"}\n\n`;
    expect(await streamed([multiline, 'data: [DONE]\n\n', 'data: not json\n\n', 'data: 7\n\n'], 1, 1)).toEqual({ made: ['joined'], kept: [] });
  });

  it('keeps no more partial images than were asked', async () => {
    expect((await streamed([partial(0), partial(1), partial(2), completed('one')], 1, 1)).kept).toEqual([[0, 'partial 0']]);
  });

  it('an error event is thrown at the end as the same failure unstreamed would be', async () => {
    const error = (body: object) => streamed([partial(0), `event: error\ndata: ${JSON.stringify(body)}\n\n`], 1, 1);
    await expect(error({ type: 'error', error: { type: 'image_generation_user_error', code: 'moderation_blocked', message: 'Your request was rejected by the safety system.' } })).rejects.toMatchObject({ constructor: UpstreamRefused, kind: 'request', message: expect.stringMatching(/moderation_blocked/) });
  });

  it('streamFailure: moderation and a refused request 400, credit the account, a rate limit busy, the rest a failed generation', () => {
    expect(streamFailure({ error: { code: 'moderation_blocked', message: 'blocked' } })).toMatchObject({ constructor: UpstreamRefused, kind: 'request', status: 400 });
    expect(streamFailure({ error: { type: 'invalid_request_error', message: 'bad size' } })).toMatchObject({ constructor: UpstreamRefused, kind: 'request', message: 'bad size' });
    expect(streamFailure({ error: { code: 'insufficient_quota', message: 'no credit' } })).toMatchObject({ constructor: UpstreamRefused, kind: 'account', status: 429 });
    expect(streamFailure({ error: { code: 'rate_limit_exceeded', message: 'slow down' } })).toMatchObject({ constructor: UpstreamBusy, message: 'the upstream is busy (in its stream): slow down' });
    expect(streamFailure({ type: 'error', code: 'server_error', message: 'oops' })).toMatchObject({ constructor: UpstreamUnavailable, message: 'the upstream failed (in its stream): oops' });
    expect(streamFailure({ error: 'it broke' }).message).toBe('the upstream failed (in its stream): it broke');
    expect(streamFailure({ error: { code: 7 } }).message).toBe('the upstream failed (in its stream): an error event');
  });
});
