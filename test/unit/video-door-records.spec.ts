import { KlingVideoRecords } from '../../src/doors/kling/kling-video.records.js';
import { LumaVideoRecords, toGenerationDto } from '../../src/doors/luma/luma-video.records.js';
import { OpenAiVideoRecords } from '../../src/doors/openai/openai-video.records.js';
import type { VideoParams, VideoTask } from '../../src/modules/video/video-task.js';

// Each video door renders a stored generation (the normalized request and its door) in its own words: Luma's
// record echoes Luma's fields back, and a failing input image is named by the field the door took it in.

function task(params: VideoParams, extra: Partial<VideoTask> = {}): VideoTask {
  return {
    id: '00000000-0000-4000-8000-000000000001',
    kind: 'video',
    state: 'queued',
    params,
    externalId: null,
    callbackUrl: null,
    createdAt: new Date('2026-11-29T10:00:00Z'),
    updatedAt: new Date('2026-11-29T10:00:00Z'),
    finishedAt: null,
    mediaExpiredAt: null,
    ...extra,
  } as unknown as VideoTask;
}

const none = null as never;

describe("Luma's record of a stored generation", () => {
  it("echoes Luma's own fields from the normalized request: its defaults where nothing was asked, duration as \"<n>s\", concepts by key, enhance for its own generations", () => {
    const own = toGenerationDto(task({ prompt: 'p', loop: true, durationS: 5, resolution: '720p', concepts: ['dolly_zoom'], firstFrame: { type: 'image', id: 'f0', url: 'https://example.com/f0.jpg' }, door: 'luma' }, { callbackUrl: 'https://hooks.example.com/x' }));
    expect(own.request).toEqual({
      prompt: 'p',
      aspect_ratio: '16:9',
      enhance: true,
      request_type: 'image_to_video',
      generation_type: 'video',
      model: 'ray-2',
      loop: true,
      resolution: '720p',
      duration: '5s',
      keyframes: { frame0: { type: 'image', url: 'https://example.com/f0.jpg' } },
      concepts: [{ key: 'dolly_zoom' }],
      callback_url: 'https://hooks.example.com/x',
    });
    expect(own.media_request).toEqual({ end: null, loop: true, prompt_type: 'keyframe', start: { id: 'f0', media_type: null, thumbnail: null, type: 'upload' }, text: 'p' });
  });

  it("shows another door's generation as Luma would: no enhance, an uploaded frame only in media_request, the model asked", () => {
    const kling = toGenerationDto(task({ prompt: 'k', loop: false, model: 'kling-v1', aspectRatio: '1:1', firstFrame: { type: 'image', id: 'up', upload: true }, lastFrame: { type: 'generation', generationId: 'g1' }, door: 'kling' }));
    expect(kling.model).toBe('kling-v1');
    expect(kling.request).toEqual(expect.objectContaining({ aspect_ratio: '1:1', enhance: false, request_type: 'image_to_video', keyframes: { frame1: { type: 'generation', id: 'g1' } } }));
    expect(kling.media_request.start).toEqual({ id: 'up', media_type: null, thumbnail: null, type: 'upload' });
    expect(kling.media_request.end).toEqual({ id: 'g1', media_type: null, thumbnail: null, type: 'generation' });
  });
});

describe('the field a failing input image is named by', () => {
  const luma = new LumaVideoRecords(none);
  const kling = new KlingVideoRecords(none);
  const openai = new OpenAiVideoRecords(none, none);

  it("is Luma's keyframe field: its URL for an image, the keyframe for a generation", () => {
    const t = task({ prompt: 'p', loop: false, firstFrame: { type: 'image', id: 'a', url: 'https://x/a.jpg' }, lastFrame: { type: 'generation', generationId: 'g' }, door: 'luma' });
    expect([luma.field('firstFrame', t), luma.field('lastFrame', t), luma.field('prompt', t)]).toEqual(['keyframes.frame0.url', 'keyframes.frame1', 'prompt']);
    expect([luma.door, luma.kind, luma.fallback]).toEqual(['luma', 'video', true]);
  });

  it("is Kling's image and image_tail", () => {
    expect([kling.field('firstFrame'), kling.field('lastFrame'), kling.field('referenceImages[0]')]).toEqual(['image', 'image_tail', 'referenceImages[0]']);
    expect([kling.door, kling.kind, 'fallback' in kling]).toEqual(['kling', 'video', false]);
  });

  it("is OpenAI's input_reference when uploaded, its image_url when linked, as a first frame or a reference image", () => {
    const uploaded = task({ prompt: 'p', loop: false, firstFrame: { type: 'image', id: 'u', upload: true }, door: 'openai' });
    const linked = task({ prompt: 'p', loop: false, referenceImages: [{ type: 'image', id: 'r', url: 'https://x/r.png' }], door: 'openai' });
    expect([openai.field('firstFrame', uploaded), openai.field('referenceImages[0]', linked), openai.field('firstFrame', linked)]).toEqual(['input_reference', 'input_reference.image_url', 'firstFrame']);
    expect([openai.door, openai.kind]).toEqual(['openai', 'video']);
  });
});
