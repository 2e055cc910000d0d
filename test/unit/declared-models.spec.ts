import { AppError } from '../../src/common/errors/app-error.js';
import { type ChannelModel, checkModels, servedImageModels, servedModels, servedVideoModels } from '../../src/modules/channels/channel-models.js';
import { videoCatalogOf } from '../../src/vendors/video-vendors.js';

/**
 * Models a channel declares (`models[].spec`): checked at the admin API with every refusal naming its field,
 * both sides of each bound; served with their spec, marked declared. No app, no database.
 */
const LITE = 'seedance-1-0-lite-i2v-250428';
/** Seedance 1.0 Lite's reference-image mode, as ModelArk documents it: 1-4 reference images, 2-12 s, 480p and 720p. */
const liteSpec = (over: Record<string, unknown> = {}) => ({
  durations: [2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12],
  resolutions: ['480p', '720p'],
  aspect_ratios: ['16:9', '4:3', '1:1', '3:4', '9:16', '21:9'],
  first_frame: true,
  last_frame: true,
  seed: true,
  reference_images: 4,
  ...over,
});
const declare = (spec: unknown, protocol = 'seedance', operations = ['video'], more: Partial<ChannelModel> = {}) =>
  checkModels(protocol, operations, [{ name: 'lite', vendor_model: LITE, spec: spec as ChannelModel['spec'], ...more }]);
/** The refusal's words ('' when it was taken). */
const refusal = (run: () => unknown): string => {
  try {
    run();
    return '';
  } catch (err) {
    if (!(err instanceof AppError) || err.code !== 'INVALID_PARAMETER') throw err;
    return err.message;
  }
};
const spec = (over: Record<string, unknown>) => refusal(() => declare(liteSpec(over)));

describe('a declared video spec at the admin API', () => {
  it('takes Seedance 1.0 Lite as ModelArk documents it, stored with the operation it serves', () => {
    expect(declare(liteSpec())).toEqual([{ name: 'lite', vendor_model: LITE, operation: 'video', spec: liteSpec() }]);
  });

  it('reads null in an optional field as left out, and stores the spec without it; a required one null is still required', () => {
    expect(declare(liteSpec({ default_duration_s: null, sizes: null, seed: null }))).toEqual([{ name: 'lite', vendor_model: LITE, operation: 'video', spec: liteSpec({ seed: undefined }) }]);
    expect(spec({ durations: null })).toBe('models[0].spec.durations is required: it must be a list such as [5, 10]');
    // a spec null: left out (a catalog model takes it so; a model the catalog does not know then needs one)
    expect(checkModels('seedance', ['video'], [{ name: 'pro', vendor_model: 'seedance-1-0-pro-250528', spec: null as never }])).toEqual([{ name: 'pro', vendor_model: 'seedance-1-0-pro-250528' }]);
    expect(refusal(() => declare(null))).toMatch(/^models\[0\]\.vendor_model must be one of the seedance models: .*, or come with a spec/);
  });

  it('durations: whole seconds from 1 to 99, each once, at least one', () => {
    expect(spec({ durations: [1, 99] })).toBe('');
    expect(spec({ durations: [2, 3, 0] })).toBe('models[0].spec.durations[2] must be a whole number of seconds from 1 to 99 (not 0)');
    expect(spec({ durations: [2, 3, 100] })).toBe('models[0].spec.durations[2] must be a whole number of seconds from 1 to 99 (not 100)');
    expect(spec({ durations: [2.5] })).toBe('models[0].spec.durations[0] must be a whole number of seconds from 1 to 99 (not 2.5)');
    expect(spec({ durations: ['5'] })).toBe('models[0].spec.durations[0] must be a whole number of seconds from 1 to 99 (not "5")');
    expect(spec({ durations: [5, 5] })).toBe('models[0].spec.durations must not name a value twice');
    expect(spec({ durations: [5, 3, 4] })).toBe('models[0].spec.durations must be in ascending order (shortest first), such as [5, 10]');
    expect(spec({ durations: [3, 4, 5], durations_at: { '720p': [5, 4] } })).toBe("models[0].spec.durations_at.720p must be in ascending order (shortest first), such as [5, 10]");
    expect(spec({ durations: [] })).toBe('models[0].spec.durations must hold at least one value, such as [5, 10]');
    expect(spec({ durations: undefined })).toBe('models[0].spec.durations is required: it must be a list such as [5, 10]');
  });

  it('resolutions: the gateway\'s classes (480p to 4k), at least one', () => {
    expect(spec({ resolutions: ['480p', '540p', '720p', '768p', '1080p', '4k'] })).toBe('');
    expect(spec({ resolutions: ['360p'] })).toBe('models[0].spec.resolutions[0] must be one of 480p, 540p, 720p, 768p, 1080p, 4k (not "360p")');
    expect(spec({ resolutions: [] })).toMatch(/^models\[0\]\.spec\.resolutions must hold at least one value/);
  });

  it('aspect_ratios: "any" or shapes <w>:<h> of 1 to 4 digits each', () => {
    expect(spec({ aspect_ratios: 'any' })).toBe('');
    expect(spec({ aspect_ratios: ['9999:1'] })).toBe('');
    expect(spec({ aspect_ratios: ['10000:1'] })).toBe('models[0].spec.aspect_ratios[0] must be a shape <w>:<h> of whole numbers (1 to 4 digits), such as "16:9" (not "10000:1")');
    expect(spec({ aspect_ratios: ['16x9'] })).toMatch(/^models\[0\]\.spec\.aspect_ratios\[0\] must be a shape/);
    expect(spec({ aspect_ratios: ['0:1'] })).toMatch(/^models\[0\]\.spec\.aspect_ratios\[0\] must be a shape/);
    expect(spec({ aspect_ratios: 'some' })).toMatch(/^models\[0\]\.spec\.aspect_ratios must be "any" or a list of shapes/);
  });

  it('reference_images from 0 to 16; max_prompt_chars from 1 to 5000; frame_min_side from 1 to 8192', () => {
    expect(spec({ reference_images: 16 })).toBe('');
    expect(spec({ reference_images: 17 })).toBe('models[0].spec.reference_images must be a whole number from 0 to 16 (not 17)');
    expect(spec({ reference_images: 0 })).toBe('');
    expect(spec({ reference_images: -1 })).toBe('models[0].spec.reference_images must be a whole number from 0 to 16 (not -1)');
    expect(spec({ max_prompt_chars: 1 })).toBe('');
    expect(spec({ max_prompt_chars: 0 })).toBe('models[0].spec.max_prompt_chars must be a whole number of characters from 1 to 5000 (not 0)');
    expect(spec({ max_prompt_chars: 5000 })).toBe('');
    expect(spec({ max_prompt_chars: 5001 })).toBe('models[0].spec.max_prompt_chars must be a whole number of characters from 1 to 5000 (not 5001)');
    expect(spec({ frame_min_side: 8192 })).toBe('');
    expect(spec({ frame_min_side: 8193 })).toBe('models[0].spec.frame_min_side must be a whole number of pixels from 1 to 8192 (not 8193)');
    expect(spec({ seed: 'yes' })).toBe('models[0].spec.seed must be true or false (not "yes")');
  });

  it('refuses a field it does not know, naming it', () => {
    expect(spec({ fps: 24 })).toMatch(/^models\[0\]\.spec has no field fps \(a video spec's fields: durations, resolutions, aspect_ratios, /);
    expect(refusal(() => declare([5]))).toMatch(/^models\[0\]\.spec must be an object/);
  });

  it('refuses a spec that contradicts itself, naming the field', () => {
    expect(spec({ durations_at: { '720p': [5] } })).toBe('');
    expect(spec({ durations_at: { '1080p': [5] } })).toBe('models[0].spec.durations_at.1080p names a resolution the model does not make (resolutions: 480p, 720p)');
    expect(spec({ durations_at: { '720p': [5, 13] } })).toBe('models[0].spec.durations_at.720p[1] must be one of durations (2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12), not 13');
    expect(spec({ sizes: ['16:9@720p'] })).toBe('');
    expect(spec({ sizes: ['16:9@1080p'] })).toBe('models[0].spec.sizes[0] names a resolution the model does not make (resolutions: 480p, 720p), not 1080p');
    expect(spec({ sizes: ['5:4@720p'] })).toMatch(/^models\[0\]\.spec\.sizes\[0\] names a shape not in aspect_ratios/);
    expect(spec({ last_frame_resolution: '1080p' })).toBe('models[0].spec.last_frame_resolution must be one of resolutions (480p, 720p)');
    expect(spec({ last_frame: false, last_frame_alone: true })).toBe('models[0].spec.last_frame_alone needs last_frame: true');
    expect(spec({ reference_images: 0, references_with_frames: true })).toBe('models[0].spec.references_with_frames needs reference_images above 0');
    expect(spec({ first_frame: false, reference_images: 0 })).toBe('models[0].spec says of no way the model starts a video: set text_to_video, first_frame or reference_images');
    expect(spec({ first_frame: false, reference_images: 1 })).toBe('');
  });

  it("refuses a capability the protocol's adapter has no words for (none of its catalog models has it)", () => {
    expect(videoCatalogOf('seedance').some((m) => m.loop)).toBe(false);
    expect(spec({ loop: true })).toBe("models[0].spec.loop: the seedance adapter has no words for it (no seedance model the gateway knows takes it), so a request asking it could not be sent as asked");
    expect(spec({ loop: false })).toBe('');
    expect(videoCatalogOf('luma').some((m) => (m.referenceImages ?? 0) > 0)).toBe(false);
    expect(refusal(() => declare(liteSpec({ seed: false, reference_images: 1 }), 'luma'))).toMatch(/^models\[0\]\.spec\.reference_images: the luma adapter has no words for it/);
  });

  it('a catalog model keeps its spec; an unknown model needs one; a channel of video and image says which', () => {
    expect(refusal(() => checkModels('seedance', ['video'], [{ name: 'pro', vendor_model: 'seedance-1-0-pro-250528', spec: liteSpec() }]))).toMatch(/^models\[0\]\.spec: seedance-1-0-pro-250528 is a seedance model the gateway knows, which keeps its catalog's spec/);
    // an id that differs from a catalog one only in case is that model mistyped, with a spec or without
    expect(refusal(() => checkModels('seedance', ['video'], [{ name: 'pro', vendor_model: 'SEEDANCE-1-0-PRO-250528', spec: liteSpec() }]))).toBe(
      "models[0].vendor_model: SEEDANCE-1-0-PRO-250528 differs only in case from seedance-1-0-pro-250528, a seedance model the gateway knows (vendors' ids are case-sensitive): write seedance-1-0-pro-250528, and leave spec out (it keeps its catalog's spec)",
    );
    expect(refusal(() => checkModels('seedance', ['video'], [{ name: 'pro', vendor_model: 'Seedance-1-0-Pro-250528' }]))).toMatch(/^models\[0\]\.vendor_model: Seedance-1-0-Pro-250528 differs only in case from seedance-1-0-pro-250528, .*: write seedance-1-0-pro-250528$/);
    expect(refusal(() => checkModels('seedance', ['video'], [{ name: 'lite', vendor_model: LITE }]))).toMatch(/^models\[0\]\.vendor_model must be one of the seedance models: seedance-1-0-pro-250528, .* \(not seedance-1-0-lite-i2v-250428\), or come with a spec declaring what it can do \(models\[0\]\.spec/);
    expect(refusal(() => declare(liteSpec({ seed: false, last_frame: false, reference_images: 0 }), 'kling', ['video', 'image']))).toBe('models[0].operation is required for a declared model on a channel that takes video and image: video or image');
    expect(refusal(() => declare(liteSpec({ seed: false, last_frame: false, reference_images: 0 }), 'kling', ['video', 'image'], { operation: 'video' }))).toBe('');
    expect(refusal(() => declare(liteSpec(), 'seedance', ['video'], { operation: 'image' }))).toBe('models[0].operation must be video, an operation the channel takes that has seedance models (not image)');
  });

  it('default_duration_s and default_resolution: what a request naming neither is made and priced at, one of the lists', () => {
    expect(spec({ default_duration_s: 5, default_resolution: '720p' })).toBe('');
    expect(spec({ default_duration_s: 2, default_resolution: '480p' })).toBe('');
    expect(spec({ default_duration_s: 13 })).toBe('models[0].spec.default_duration_s must be one of durations (2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12), not 13');
    expect(spec({ default_duration_s: 0 })).toBe('models[0].spec.default_duration_s must be a whole number of seconds from 1 to 99 (not 0)');
    expect(spec({ default_duration_s: '5' })).toMatch(/^models\[0\]\.spec\.default_duration_s must be a whole number of seconds from 1 to 99 \(not "5"\)/);
    expect(spec({ default_resolution: '1080p' })).toBe('models[0].spec.default_resolution must be one of resolutions (480p, 720p), not 1080p');
    expect(spec({ default_resolution: '360p' })).toMatch(/^models\[0\]\.spec\.default_resolution must be one of 480p, 540p/);
    const [lite] = servedVideoModels({ protocol: 'seedance', operations: ['video'], frameFit: null, models: declare(liteSpec({ default_duration_s: 5, default_resolution: '720p' })) });
    expect([lite.spec.defaultDurationS, lite.spec.defaultResolution]).toEqual([5, '720p']);
    // left out: the lists' first, stated so that the vendor is sent it (sentDurationS: a declared model's own default is unknown)
    const [plain] = servedVideoModels({ protocol: 'seedance', operations: ['video'], frameFit: null, models: declare(liteSpec()) });
    expect([plain.spec.defaultDurationS, plain.spec.defaultResolution]).toEqual([2, '480p']);
  });

  it('prices a declared video model per second, at any resolution class', () => {
    expect(refusal(() => declare(liteSpec(), 'seedance', ['video'], { price: { per_second: { '480p': 0.02, '720p': 0.04 } } }))).toBe('');
    expect(refusal(() => declare(liteSpec(), 'seedance', ['video'], { price: { per_image: 0.04 } }))).toBe('models[0].price: a video model is priced per_second, not per_image');
    expect(refusal(() => declare(liteSpec(), 'seedance', ['video'], { price: { per_second: { '360p': 0.04 } } }))).toMatch(/^models\[0\]\.price\.per_second must map 480p, 540p, 720p, 768p, 1080p, 4k or \* to a number from 0/);
    // a price on a resolution the model does not make would never be used, while those it makes went unpriced
    expect(refusal(() => declare(liteSpec(), 'seedance', ['video'], { price: { per_second: { '1080p': 0.1 } } }))).toBe(`models[0].price.per_second.1080p: ${LITE} makes no 1080p video (it makes 480p, 720p); price those, or * for any`);
    expect(refusal(() => declare(liteSpec(), 'seedance', ['video'], { price: { per_second: { '*': 0.03 } } }))).toBe('');
    // a catalog model by its catalog's resolutions (Seedance 1.0 Pro makes 720p and 1080p)
    expect(refusal(() => checkModels('seedance', ['video'], [{ name: 'pro', vendor_model: 'seedance-1-0-pro-250528', price: { per_second: { '4k': 1 } } }]))).toMatch(/^models\[0\]\.price\.per_second\.4k: seedance-1-0-pro-250528 makes no 4k video/);
  });
});

describe('a declared image spec at the admin API', () => {
  const image = (over: Record<string, unknown> = {}) => refusal(() => checkModels('openai', ['image'], [{ name: 'next', vendor_model: 'gpt-image-9', spec: { aspect_ratios: ['1:1'], resolutions: ['1k'], ...over } }]));

  it('takes the least spec, and bounds n from 1 to 10, references and edits from 0 to 16', () => {
    expect(image()).toBe('');
    expect(image({ max_n: 10 })).toBe('');
    expect(image({ max_n: 11 })).toBe('models[0].spec.max_n must be a whole number from 1 to 10 (not 11)');
    expect(image({ max_n: 0 })).toBe('models[0].spec.max_n must be a whole number from 1 to 10 (not 0)');
    expect(image({ max_references: 16 })).toBe('');
    expect(image({ max_references: 17 })).toBe('models[0].spec.max_references must be a whole number from 0 to 16 (not 17)');
    expect(image({ max_prompt_chars: 32_000 })).toBe('');
    expect(image({ max_prompt_chars: 32_001 })).toBe('models[0].spec.max_prompt_chars must be a whole number of characters from 1 to 32000 (not 32001)');
  });

  it('sizes: "any" within a size rule, or listed WxH; classes 1k, 2k, 4k', () => {
    expect(image({ sizes: 'any', size_rule: { multiple_of: 16, min_side: 256, max_side: 2048, max_pixels: 4_194_304 } })).toBe('');
    expect(image({ sizes: ['1024x1024'], size_rule: { multiple_of: 16, min_side: 256, max_side: 2048, max_pixels: 4_194_304 } })).toBe('models[0].spec.size_rule bounds a free size: only with sizes "any"');
    expect(image({ sizes: 'any', size_rule: { multiple_of: 16, min_side: 4096, max_side: 2048, max_pixels: 4_194_304 } })).toBe('models[0].spec.size_rule.min_side must be at most max_side (2048)');
    expect(image({ sizes: ['1024*1024'] })).toMatch(/^models\[0\]\.spec\.sizes\[0\] must be a size WxH/);
    expect(image({ resolutions: ['8k'] })).toBe('models[0].spec.resolutions[0] must be one of 1k, 2k, 4k (not "8k")');
    expect(image({ qualities: ['ultra'] })).toBe('models[0].spec.qualities[0] must be one of low, medium, high (not "ultra")');
    expect(image({ mask: true })).toBe('models[0].spec.mask needs max_edit_images above 0 (a mask goes with an edit)');
    expect(image({ mask: true, max_edit_images: 1 })).toBe('');
  });

  it("refuses what the protocol's adapter has no words for, and prices per image", () => {
    expect(refusal(() => checkModels('bfl', ['image'], [{ name: 'next', vendor_model: 'flux-9', spec: { aspect_ratios: ['1:1'], resolutions: ['1k'], qualities: ['high'] } }]))).toMatch(/^models\[0\]\.spec\.qualities: the bfl adapter has no words for it/);
    expect(refusal(() => checkModels('openai', ['image'], [{ name: 'next', vendor_model: 'gpt-image-9', spec: { aspect_ratios: ['1:1'], resolutions: ['1k'] }, price: { per_second: { '*': 1 } } }]))).toMatch(/^models\[0\]\.price: an image model is priced per_image/);
  });
});

describe('declared models served', () => {
  const channel = { protocol: 'seedance', operations: ['video'], frameFit: null, models: declare(liteSpec(), 'seedance', ['video'], { price: { per_second: { '480p': 0.02 } } }) };

  it('a channel listing only a declared model serves it alone, with its spec, marked declared', () => {
    const served = servedVideoModels(channel);
    expect(served).toEqual([{ name: 'lite', declared: true, price: { per_second: { '480p': 0.02 } }, spec: expect.objectContaining({ id: LITE, durations: liteSpec().durations, resolutions: ['480p', '720p'], textToVideo: false, firstFrame: true, lastFrame: true, seed: true, audio: false, loop: false, referenceImages: 4, referencesWithFrames: false, maxPromptChars: 2000 }) }]);
  });

  it('beside catalog models; a declared model of the other operation is not served here', () => {
    const models = [{ name: 'pro', vendor_model: 'seedance-1-0-pro-250528' }, ...channel.models];
    expect(servedVideoModels({ ...channel, models }).map((m) => [m.name, m.declared ?? false])).toEqual([['pro', false], ['lite', true]]);
    const image = checkModels('kling', ['video', 'image'], [{ name: 'pic', vendor_model: 'kling-v9', operation: 'image', spec: { aspect_ratios: ['1:1'], resolutions: ['1k'] } }]);
    expect(servedImageModels({ protocol: 'kling', models: image }).map((m) => [m.name, m.declared])).toEqual([['pic', true]]);
    // the video side lists none of its own: the vendor's whole catalog
    expect(servedVideoModels({ protocol: 'kling', models: image }).map((m) => m.name)).toEqual(videoCatalogOf('kling').map((m) => m.id));
  });
});

describe('a channel of several operations', () => {
  it("lists a single-model operation's model beside the others (Kling's expand, to price it), and names each catalog id once when refusing", () => {
    expect(refusal(() => checkModels('kling', ['expand', 'video'], [{ name: 'kling-expand', vendor_model: 'kling-expand', price: { per_image: 0.03 } }, { name: 'v16', vendor_model: 'kling-v1-6' }]))).toBe('');
    const words = refusal(() => checkModels('kling', ['video', 'image', 'expand'], [{ name: 'x', vendor_model: 'kling-v9' }]));
    const ids = /must be one of the kling models: ([^(]*) \(not/.exec(words)![1].split(', ');
    expect([ids.includes('kling-expand'), new Set(ids).size === ids.length]).toEqual([true, true]);
  });
});

describe('lyrics models on a channel', () => {
  it('are named from the catalog and never priced (a task is charged PRICE_LYRICS whoever writes it)', () => {
    expect(checkModels('suno', ['music', 'lyrics'], [{ name: 'words', vendor_model: 'suno_lyrics' }])).toEqual([{ name: 'words', vendor_model: 'suno_lyrics' }]);
    expect(refusal(() => checkModels('suno', ['lyrics'], [{ name: 'words', vendor_model: 'suno_lyrics', price: { per_song: 1 } }]))).toBe('models[0].price: lyrics models are not priced per channel (suno_lyrics is a lyrics model); leave price out');
    expect(refusal(() => checkModels('suno', ['lyrics'], [{ name: 'words', vendor_model: 'gpt-lyrics' }]))).toMatch(/^models\[0\]\.vendor_model must be one of the suno models: suno_lyrics \(not gpt-lyrics\)$/);
  });
});

describe("a speech channel's voices at the admin API", () => {
  const voices = (vendorModel: string, mapped: Record<string, string>) => refusal(() => checkModels('openai', ['speech'], [{ name: 'narrator', vendor_model: vendorModel, voices: mapped }]));

  it('maps a name to one of its own voices on a model that takes no other voice id (tts-1), and refuses any other id, naming the voice', () => {
    expect(voices('tts-1', { narrator: 'onyx', host: 'alloy' })).toBe('');
    expect(voices('tts-1-hd', { bogus: 'x' })).toBe('models[0].voices.bogus: tts-1-hd speaks only its own voices (alloy, ash, coral, echo, fable, nova, onyx, sage, shimmer) and takes no other voice id (not "x")');
    expect(voices('tts-1', { narrator: 'onyx', bogus: 'Onyx' })).toMatch(/^models\[0\]\.voices\.bogus: tts-1 speaks only its own voices .* \(not "Onyx"\)$/);
  });

  it('maps a name to any voice id on a model that takes ids (gpt-4o-mini-tts)', () => {
    expect(voices('gpt-4o-mini-tts', { bogus: 'a-custom-voice-id' })).toBe('');
  });
});

describe("a gateway channel's speech voices", () => {
  it("maps a name to any of the other gateway's voice names, even on tts-1 (its names are its own channels')", () => {
    expect(refusal(() => checkModels('gateway', ['speech'], [{ name: 'narrator', vendor_model: 'tts-1', voices: { host: 'narrator' } }]))).toBe('');
  });
});

describe('a declared speech spec at the admin API', () => {
  const speech = (protocol: string, spec: Record<string, unknown>, operations = ['speech']) => checkModels(protocol, operations, [{ name: 'next', vendor_model: 'next-tts', spec: spec as ChannelModel['spec'] }]);

  it('takes a model the catalog does not know with its voices, and serves it marked declared, 4,096 characters and speed 1 unless it says', () => {
    const models = speech('openai', { voices: ['coral', 'verse'], instructions: true });
    expect(models).toEqual([{ name: 'next', vendor_model: 'next-tts', operation: 'speech', spec: { voices: ['coral', 'verse'], instructions: true } }]);
    expect(servedModels({ protocol: 'openai', models, operations: ['speech'] }, 'speech')).toEqual([
      { name: 'next', declared: true, spec: { id: 'next-tts', voices: { coral: 'coral', verse: 'verse' }, voiceIds: false, maxInput: 4096, instructions: true, speed: null } },
    ]);
  });

  it('refuses what says of no voice, a speed range without 1, a field it does not have, naming each', () => {
    expect(refusal(() => speech('elevenlabs', { voice_ids: true, max_input_chars: 5000 }))).toBe('models[0].spec.max_input_chars must be a whole number of characters from 1 to 4096 (not 5000)');
    expect(refusal(() => speech('elevenlabs', { voice_ids: true, max_input_chars: 4096, speed: { min: 0.7, max: 1.2 } }))).toBe('');
    expect(refusal(() => speech('openai', {}))).toBe('models[0].spec says of no voice the model speaks: list its voices, or set voice_ids (it takes any voice id of its vendor)');
    expect(refusal(() => speech('openai', { voices: ['alloy'], speed: { min: 1.5, max: 4 } }))).toMatch(/^models\[0\]\.spec\.speed must take 1 /);
    expect(refusal(() => speech('openai', { voices: ['alloy'], style: 'calm' }))).toBe("models[0].spec has no field style (a speech spec's fields: voices, voice_ids, max_input_chars, instructions, speed)");
  });

  it("refuses a capability the protocol's adapter has no words for: a speed to Gemini (it takes none)", () => {
    expect(refusal(() => speech('gemini', { voice_ids: true, speed: { min: 0.5, max: 2 } }))).toBe('models[0].spec.speed: the gemini adapter has no words for it (no gemini model the gateway knows takes it), so a request asking it could not be sent as asked');
    expect(refusal(() => speech('gemini', { voice_ids: true, instructions: true }))).toBe('');
  });

  it('on a channel of video and speech, asks which operation a declared model serves', () => {
    expect(refusal(() => speech('gemini', { voice_ids: true }, ['video', 'speech']))).toBe('models[0].operation is required for a declared model on a channel that takes video and speech: video or speech');
  });
});
