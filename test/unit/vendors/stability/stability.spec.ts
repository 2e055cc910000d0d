import { UpstreamRefused } from '../../../../src/infra/relay/upstream-client.js';
import { UnusableAnswer } from '../../../../src/vendors/contracts/vendor.js';
import type { ExpandRequest } from '../../../../src/vendors/contracts/expand-vendor.js';
import { outpaintCall, outpaintFiltered, outpaintImage, StabilityExpandVendor, stabilityExpandUnmet } from '../../../../src/vendors/stability/stability-expand.vendor.js';
import { formOf, STABILITY_IMAGE_MODELS, StabilityImageVendor, stabilityImageCalls, stabilityImageOf, stabilityRefusal } from '../../../../src/vendors/stability/stability-image.vendor.js';
import { STABILITY } from '../../../../src/vendors/stability/stability.vendor.js';
import { imageInput, imageRequest, modelOf } from '../image-fixtures.js';

const ULTRA = modelOf(STABILITY_IMAGE_MODELS, 'ultra');
const CORE = modelOf(STABILITY_IMAGE_MODELS, 'core');
const SD35 = modelOf(STABILITY_IMAGE_MODELS, 'sd3.5-large');

/**
 * Stability AI's Stable Image API v2beta (platform.stability.ai/docs/api-reference): multipart requests to
 * `generate/{ultra,core,sd3}`, `edit/inpaint` and `edit/outpaint`, answered with the image's bytes and a
 * `finish-reason` header; its errors `{id, name, errors}`.
 */
describe('Stability images: request mapping', () => {
  it('takes its protocol and poll floor from its descriptor', () => {
    expect([StabilityImageVendor.protocol, StabilityExpandVendor.protocol]).toEqual([STABILITY.protocol, STABILITY.protocol]);
  });

  it('a generation: one call per image, each seed the next one up, aspect_ratio from the asked size', () => {
    const calls = stabilityImageCalls(ULTRA, imageRequest({ n: 2, seed: 4_294_967_294, negativePrompt: 'fog', size: '1920x1080' }), [], undefined);
    expect(calls).toEqual([
      { path: '/v2beta/stable-image/generate/ultra', fields: { prompt: 'A lighthouse at dusk', negative_prompt: 'fog', seed: '4294967294', output_format: 'png', aspect_ratio: '16:9' }, files: [] },
      { path: '/v2beta/stable-image/generate/ultra', fields: { prompt: 'A lighthouse at dusk', negative_prompt: 'fog', seed: '0', output_format: 'png', aspect_ratio: '16:9' }, files: [] },
    ]);
    expect(stabilityImageCalls(CORE, imageRequest({ aspectRatio: '9:21' }), [], undefined)).toEqual([{ path: '/v2beta/stable-image/generate/core', fields: { prompt: 'A lighthouse at dusk', output_format: 'png', aspect_ratio: '9:21' }, files: [] }]);
    expect(stabilityImageCalls(CORE, imageRequest(), [], undefined)[0].fields).toEqual({ prompt: 'A lighthouse at dusk', output_format: 'png' });
  });

  it("SD 3.5: the sd3 endpoint with its model; with an image, image-to-image at strength 0.5", () => {
    const image = imageInput(1024, 1024, 'jpeg');
    expect(stabilityImageCalls(SD35, imageRequest({ images: 1, aspectRatio: '1:1' }), [image], undefined)).toEqual([
      { path: '/v2beta/stable-image/generate/sd3', fields: { prompt: 'A lighthouse at dusk', output_format: 'png', model: 'sd3.5-large', mode: 'image-to-image', strength: '0.5' }, files: [{ name: 'image', bytes: image.bytes, type: 'image/jpeg', filename: 'image.jpg' }] },
    ]);
    expect(stabilityImageCalls(ULTRA, imageRequest({ images: 1 }), [image], undefined)[0].fields).toEqual({ prompt: 'A lighthouse at dusk', output_format: 'png', strength: '0.5' });
  });

  it('an edit is its inpaint: the image and the mask painted white where it paints', () => {
    const image = imageInput(640, 480);
    const painted = Buffer.from('painted');
    expect(stabilityImageCalls(CORE, imageRequest({ mode: 'edit', images: 1, mask: true }), [image], painted)).toEqual([
      { path: '/v2beta/stable-image/edit/inpaint', fields: { prompt: 'A lighthouse at dusk', output_format: 'png' }, files: [{ name: 'image', bytes: image.bytes, type: 'image/png', filename: 'image.png' }, { name: 'mask', bytes: painted, type: 'image/png', filename: 'mask.png' }] },
    ]);
    expect(() => stabilityImageCalls(CORE, imageRequest({ mode: 'edit' }), [], undefined)).toThrow(/an inpaint needs the image it edits/);
  });

  it('formOf: the fields and the files of a call as multipart parts', async () => {
    const form = formOf({ fields: { prompt: 'p', seed: '3' }, files: [{ name: 'image', bytes: Buffer.from('img'), type: 'image/png', filename: 'image.png' }] });
    const file = form.get('image') as File;
    expect([form.get('prompt'), form.get('seed'), file.name, file.type, Buffer.from(await file.arrayBuffer()).toString()]).toEqual(['p', '3', 'image.png', 'image/png', 'img']);
  });
});

describe('Stability images: answer reading', () => {
  const image = Buffer.from('png bytes');
  it('its image, by its content-type; a blurred result (CONTENT_FILTERED) a content refusal; anything else refused', () => {
    expect(stabilityImageOf({ status: 200, headers: { 'content-type': 'image/png', 'finish-reason': 'SUCCESS', seed: '1' }, body: image })).toEqual({ bytes: image });
    expect(() => stabilityImageOf({ status: 200, headers: { 'content-type': 'image/png', 'finish-reason': 'CONTENT_FILTERED' }, body: image })).toThrow(/finish-reason CONTENT_FILTERED/);
    expect(() => stabilityImageOf({ status: 200, headers: { 'content-type': 'application/json' }, body: Buffer.from('{}') })).toThrow(new UnusableAnswer('the upstream answered without an image'));
  });

  it("its 403 content_moderation refuses the request's content, in its words", () => {
    const refused = stabilityRefusal(403, { id: 'ed14a7e5', name: 'content_moderation', errors: ['Your request was flagged by our content moderation system.', 3] });
    expect([refused?.kind, refused?.message]).toEqual(['request', "the upstream's moderation refused the request (content_moderation): Your request was flagged by our content moderation system."]);
    expect(stabilityRefusal(403, { name: 'content_moderation' })?.message).toBe("the upstream's moderation refused the request (content_moderation)");
    expect(stabilityRefusal(403, { name: 'forbidden', errors: ['no'] })).toBeUndefined();
    expect(stabilityRefusal(400, { name: 'content_moderation' })).toBeUndefined();
  });
});

describe('Stability outpaint (expand)', () => {
  const expand = (over: Partial<ExpandRequest> = {}): ExpandRequest => ({ up_ratio: 0.1, bottom_ratio: 0, left_ratio: 0.5, right_ratio: 0.25, n: 1, watermark: false, ...over });
  const input = { bytes: Buffer.from('input'), format: 'jpeg' as const, width: 800, height: 600 };

  it('the margins in pixels of its input, the prompt, PNG, the image as a file', () => {
    expect(outpaintCall(expand({ prompt: 'more sea' }), input)).toEqual({
      path: '/v2beta/stable-image/edit/outpaint',
      fields: { left: '400', right: '200', up: '60', down: '0', prompt: 'more sea', output_format: 'png' },
      files: [{ name: 'image', bytes: input.bytes, type: 'image/jpeg', filename: 'input.jpg' }],
    });
    expect(outpaintCall(expand(), { ...input, format: 'png' }).fields).toEqual({ left: '400', right: '200', up: '60', down: '0', output_format: 'png' });
  });

  it('what it cannot make, naming the field: a watermark, a long prompt, an unknown or out-of-bounds input, a margin over 2000 px, no margin', () => {
    const size = { width: 1000, height: 1000 };
    expect(stabilityExpandUnmet(expand(), size)).toBeNull();
    expect(stabilityExpandUnmet(expand({ watermark: true }), size)).toBe('watermark_info: Stability makes no watermarked copy');
    expect(stabilityExpandUnmet(expand({ prompt: 'x'.repeat(10_001) }), size)).toBe('prompt: Stability takes at most 10000 characters');
    expect(stabilityExpandUnmet(expand(), null)).toBe('image: its size is not known yet');
    expect(stabilityExpandUnmet(expand(), { width: 63, height: 1000 })).toMatch(/^image: Stability takes 64 px a side/);
    expect(stabilityExpandUnmet(expand(), { width: 4000, height: 3000 })).toMatch(/^image: Stability takes 64 px a side and 4096 to 9437184 pixels/);
    expect(stabilityExpandUnmet(expand(), { width: 2600, height: 1000 })).toBe('image: Stability takes shapes up to 2.5:1');
    expect(stabilityExpandUnmet(expand({ bottom_ratio: 2 }), { width: 1200, height: 1200 })).toBe('bottom_expansion_ratio: 2400 px, Stability adds at most 2000 px a side');
    expect(stabilityExpandUnmet(expand({ up_ratio: 0, left_ratio: 0, right_ratio: 0 }), size)).toBe('the expansion ratios: Stability needs at least one side to add a pixel');
  });

  it('its answer: a PNG or JPEG within the pixel limit (anything else unusable: a failed generation, failed over); a blurred one refused as content', () => {
    const answer = { status: 200, headers: { 'finish-reason': 'SUCCESS' }, body: Buffer.from('png') };
    expect(outpaintImage(answer, { format: 'png', width: 1200, height: 700 }, 1e8)).toEqual({ body: answer.body, contentType: 'image/png', width: 1200, height: 700 });
    expect(outpaintImage(answer, { format: 'jpeg', width: 1, height: 1 }, 1e8).contentType).toBe('image/jpeg');
    expect(() => outpaintImage(answer, { format: 'webp', width: 1, height: 1 }, 1e8)).toThrow('the upstream answered without a PNG or JPEG image of at most 100000000 pixels');
    expect(() => outpaintImage(answer, null, 5)).toThrow(UnusableAnswer);
    expect(() => outpaintFiltered({ headers: { 'finish-reason': 'CONTENT_FILTERED' } })).toThrow(/CONTENT_FILTERED/);
    expect(() => outpaintFiltered(answer)).not.toThrow();
  });
});
