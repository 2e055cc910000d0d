import { AppError } from '../../src/common/errors/app-error.js';
import { refuseUnmade } from '../../src/modules/channels/model-offer.js';
import { IMAGE_RULES, SANDBOX_IMAGE_MODEL, sandboxImageModels } from '../../src/modules/image/image-models.js';
import { SANDBOX_MODEL } from '../../src/modules/video/video-models.js';
import { IMAGE_FIELDS, type ImageField, type ImageRequest } from '../../src/vendors/contracts/image-request.js';

const LABELS = Object.fromEntries(IMAGE_FIELDS.map((f) => [f, f === 'aspectRatio' || f === 'resolution' ? 'size' : f])) as Record<ImageField, string>;
const OPENAI = { protocol: 'openai', title: 'OpenAI' };
const KLING = { protocol: 'kling', title: 'Kling' };

/** A 1024x1024 PNG generation unless said. */
const request = (over: Partial<ImageRequest> = {}): ImageRequest => ({ mode: 'generate', prompt: 'A lemon', n: 1, outputFormat: 'png', images: 0, mask: false, ...over });

/** The refusal the sandbox's check gives (undefined: accepted). */
function refusal(over: Partial<ImageRequest>, door?: { protocol: string; title: string }): string | undefined {
  try {
    refuseUnmade(sandboxImageModels(), request(over), IMAGE_RULES, LABELS, door);
    return undefined;
  } catch (err) {
    expect((err as AppError).code).toBe('INVALID_PARAMETER');
    return (err as AppError).message;
  }
}

describe("the sandbox's image models: the vendors' catalogs, the stand-in only when named", () => {
  it("refuses on OpenAI's door, naming no model, a size no OpenAI model makes (333x333), as a gateway relaying to OpenAI does", () => {
    expect(refusal({ size: '333x333', aspectRatio: '1:1' }, OPENAI)).toMatch(/^size: no configured OpenAI model makes this size \(333x333\); models that could make it: .*sandbox \(sandbox\)/);
    // OpenAI's own sizes: gpt-image-1's three, gpt-image-2's multiples of 16
    for (const size of ['1024x1024', '1536x1024', '1024x1536', '1280x720', '2048x1152']) expect([size, refusal({ size }, OPENAI)]).toEqual([size, undefined]);
    expect(refusal({ size: '1000x1000' }, OPENAI)).toMatch(/^size: /);
  });

  it('makes any size, and every field, with the stand-in named: `sandbox`, the name video gives its own', () => {
    expect(SANDBOX_IMAGE_MODEL).toBe(SANDBOX_MODEL);
    expect(refusal({ size: '333x333', model: 'sandbox', seed: 7, negativePrompt: 'people' }, OPENAI)).toBeUndefined();
    expect(refusal({ size: '333x333', model: 'sandbox' })).toBeUndefined();
  });

  it("holds a named model to its own catalog: gpt-image-2 no transparent background nor a side off 16, gpt-image-1 only its three sizes", () => {
    expect(refusal({ model: 'gpt-image-2', size: '1000x1000' }, OPENAI)).toMatch(/^size: model gpt-image-2 does not make this size \(1000x1000\)/);
    expect(refusal({ model: 'gpt-image-2', background: 'transparent' }, OPENAI)).toMatch(/^background: model gpt-image-2 does not make this transparent background; models that could make it: gpt-image-1 \(openai\)/);
    expect(refusal({ model: 'gpt-image-1', size: '1280x720' }, OPENAI)).toMatch(/^size: model gpt-image-1 does not make this size \(1280x720\)/);
    expect(refusal({ model: 'gemini-2.5-flash-image', size: '333x333', aspectRatio: '1:1' }, OPENAI)).toBeUndefined();
  });

  it("refuses on OpenAI's door, naming no model, an extension no OpenAI model takes (seed, negative_prompt); Kling's door takes a negative prompt from Kling's", () => {
    expect(refusal({ seed: 7 }, OPENAI)).toMatch(/^seed: no configured OpenAI model makes this seed; models that could make it: /);
    expect(refusal({ negativePrompt: 'people' }, OPENAI)).toMatch(/^negativePrompt: no configured OpenAI model makes this negative prompt/);
    expect(refusal({ negativePrompt: 'people', aspectRatio: '16:9' }, KLING)).toBeUndefined();
    // a door of no vendor's (none named): any vendor's model, never the stand-in
    expect(refusal({ seed: 7 })).toBeUndefined();
    expect(refusal({ size: '333x333', aspectRatio: '1:1' })).toBeUndefined();
  });
});
