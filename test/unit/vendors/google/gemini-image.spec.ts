import { UpstreamRefused } from '../../../../src/infra/relay/upstream-client.js';
import { UnusableAnswer } from '../../../../src/vendors/contracts/vendor.js';
import { GEMINI_IMAGE_MODELS, GeminiImageVendor, geminiImageBody, geminiImageOf, imageSizeOf } from '../../../../src/vendors/google/gemini-image.vendor.js';
import { GOOGLE } from '../../../../src/vendors/google/google.vendor.js';
import { refusesContent } from '../../../../src/vendors/registry.js';
import { b64, imageInput, imageRequest, modelOf } from '../image-fixtures.js';

const FLASH_25 = modelOf(GEMINI_IMAGE_MODELS, 'gemini-2.5-flash-image');
const PRO_3 = modelOf(GEMINI_IMAGE_MODELS, 'gemini-3-pro-image-preview');

/**
 * The Gemini API's image generation (ai.google.dev image generation guide, js-genai's types):
 * `models/{model}:generateContent` with `generationConfig.responseModalities: ['IMAGE']` and `imageConfig`, the
 * image an `inlineData` part of the first candidate.
 */
describe('Gemini images: request mapping', () => {
  it("takes its protocol from Google's descriptor", () => {
    expect(GeminiImageVendor.protocol).toBe(GOOGLE.protocol);
  });

  it("the prompt as a text part and each input image an inlineData part; imageConfig's aspectRatio and imageSize (upper case)", () => {
    const photo = imageInput(800, 600, 'jpeg');
    expect(geminiImageBody(PRO_3, imageRequest({ images: 1, aspectRatio: '16:9', resolution: '2k' }), [photo], 0)).toEqual({
      contents: [{ role: 'user', parts: [{ text: 'A lighthouse at dusk' }, { inlineData: { mimeType: 'image/jpeg', data: photo.bytes.toString('base64') } }] }],
      generationConfig: { responseModalities: ['IMAGE'], imageConfig: { aspectRatio: '16:9', imageSize: '2K' } },
    });
  });

  it('n images are n calls, each seed the next one up; nothing asked: no imageConfig', () => {
    const bodies = [0, 1].map((i) => geminiImageBody(PRO_3, imageRequest({ n: 2, seed: 2 ** 31 - 1 }), [], i));
    expect(bodies.map((b) => b.generationConfig)).toEqual([{ responseModalities: ['IMAGE'], seed: 2 ** 31 - 1 }, { responseModalities: ['IMAGE'], seed: 0 }]);
  });

  it("an asked size: its shape among the model's and its class; a model of 1K only takes no imageSize", () => {
    expect(geminiImageBody(PRO_3, imageRequest({ size: '3000x2000' }), [], 0).generationConfig).toEqual({ responseModalities: ['IMAGE'], imageConfig: { aspectRatio: '3:2', imageSize: '4K' } });
    expect(geminiImageBody(FLASH_25, imageRequest({ size: '1024x1024', resolution: '1k' }), [], 0).generationConfig).toEqual({ responseModalities: ['IMAGE'], imageConfig: { aspectRatio: '1:1' } });
    expect(imageSizeOf(PRO_3, imageRequest())).toBeUndefined();
  });
});

describe('Gemini images: answer reading', () => {
  const answer = (parts: object[], more: object = {}) => ({ candidates: [{ content: { role: 'model', parts }, finishReason: 'STOP', index: 0, ...more }], usageMetadata: { promptTokenCount: 10 }, modelVersion: 'gemini-3-pro-image-preview' });

  it('the first image part past the thoughts (3.x models send interim thought images)', () => {
    const thought = { inlineData: { mimeType: 'image/png', data: b64('thought') }, thought: true };
    expect(geminiImageOf(answer([{ text: 'Here it is' }, thought, { inlineData: { mimeType: 'image/png', data: b64('final') } }]), 200)).toEqual({ bytes: Buffer.from('final') });
    expect(geminiImageOf(answer([{ inline_data: { mime_type: 'image/png', data: b64('snake') } }]), 200)).toEqual({ bytes: Buffer.from('snake') });
  });

  it("a blocked prompt (promptFeedback.blockReason) and a finishReason of its filters are content refusals in its words", () => {
    const blocked = () => geminiImageOf({ promptFeedback: { blockReason: 'PROHIBITED_CONTENT', blockReasonMessage: 'not allowed' } }, 200);
    expect(blocked).toThrow(new UpstreamRefused("the upstream's safety filters blocked the prompt (blockReason PROHIBITED_CONTENT): not allowed", 200, 'request'));
    const filtered = () => geminiImageOf(answer([], { finishReason: 'IMAGE_SAFETY', finishMessage: 'unsafe image' }), 200);
    expect(filtered).toThrow("the upstream's safety filters refused the image (finishReason IMAGE_SAFETY): unsafe image");
    for (const reason of ['PROHIBITED_CONTENT', 'BLOCKLIST', 'SPII', 'RECITATION']) {
      try {
        geminiImageOf(answer([], { finishReason: reason }), 200);
      } catch (err) {
        expect([reason, err instanceof UpstreamRefused, refusesContent('gemini', (err as Error).message)]).toEqual([reason, true, true]);
      }
    }
  });

  it('words without an image, or an unspecified block, are its own failure (unusable), with its words', () => {
    expect(() => geminiImageOf(answer([{ text: 'I can describe a lighthouse instead.' }]), 200)).toThrow(new UnusableAnswer('the upstream answered without an image (finishReason STOP): I can describe a lighthouse instead.'));
    expect(() => geminiImageOf(answer([], { finishReason: 'NO_IMAGE', finishMessage: 'no image made' }), 200)).toThrow('the upstream answered without an image (finishReason NO_IMAGE): no image made');
    expect(() => geminiImageOf({ promptFeedback: { blockReason: 'BLOCKED_REASON_UNSPECIFIED' } }, 200)).toThrow('the upstream answered without an image (finishReason none)');
  });

  it('an answer of the wrong shape names the field', () => {
    expect(() => geminiImageOf({ candidates: [{ finishReason: 5 }] }, 200)).toThrow(/without a usable candidates\[0\]\.finishReason \(expected string, received number\)/);
    expect(() => geminiImageOf({ candidates: 'none' }, 200)).toThrow(UnusableAnswer);
  });
});
