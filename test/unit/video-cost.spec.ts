import { costOf } from '../../src/modules/video/providers/relay-video.provider.js';
import { madeDurationS, madeResolution, type VideoModelSpec, type VideoRequest } from '../../src/vendors/contracts/video-request.js';
import { SEEDANCE_MODELS } from '../../src/vendors/seedance/seedance-video.vendor.js';
import { RUNWAY_MODELS } from '../../src/vendors/runway/runway-video.vendor.js';
import { WAN_MODELS } from '../../src/vendors/wan/wan-video.vendor.js';
import { KLING_VIDEO_MODELS } from '../../src/vendors/kling/kling-video.vendor.js';

/**
 * What a video generation costs the company when its request names no duration or resolution: what the model
 * makes then (its API's default), not the first of its lists. Both sides: asked values win; a catalog model
 * with no default of its own, and a declared one, take their first listed. No app.
 */
const spec = (list: readonly VideoModelSpec[], id: string) => list.find((m) => m.id === id)!;
const ask = (over: Partial<VideoRequest> = {}): VideoRequest => ({ prompt: 'A red fox running through snow', ...over }) as VideoRequest;
const PRICE = { per_second: { '720p': 0.1, '1080p': 0.25 } };

describe('video cost at what the model makes', () => {
  it('Seedance 1.0 Pro without a duration or resolution: 5 s at 1080p (its defaults), not 2 s at 720p', () => {
    const pro = spec(SEEDANCE_MODELS, 'seedance-1-0-pro-250528');
    expect([madeDurationS(pro, ask()), madeResolution(pro, ask())]).toEqual([5, '1080p']);
    expect(costOf({ name: 'pro', spec: pro, price: PRICE }, ask())).toBe(1.25);
    // asked ones win
    expect(costOf({ name: 'pro', spec: pro, price: PRICE }, ask({ durationS: 2, resolution: '720p' }))).toBe(0.2);
  });

  it('Seedance 1.5 Pro and 2.0 make 720p by default, 5 s', () => {
    for (const id of ['seedance-1-5-pro-251215', 'dreamina-seedance-2-0-260128']) {
      const model = spec(SEEDANCE_MODELS, id);
      expect([id, madeDurationS(model, ask()), madeResolution(model, ask())]).toEqual([id, 5, '720p']);
    }
  });

  it('Wan 2.6 and Runway gen4.5: 5 s when none is asked (what Runway is sent, too)', () => {
    expect(madeDurationS(spec(WAN_MODELS, 'wan2.6-t2v'), ask())).toBe(5);
    expect(madeDurationS(spec(RUNWAY_MODELS, 'gen4.5'), ask())).toBe(5);
    expect(madeDurationS(spec(RUNWAY_MODELS, 'veo3.1'), ask())).toBe(4);
  });

  it('a model without defaults of its own (Kling, or one a channel declares) takes its first listed', () => {
    const kling = KLING_VIDEO_MODELS.find((m) => m.id === 'kling-v2-1')!;
    expect([madeDurationS(kling, ask()), madeResolution(kling, ask())]).toEqual([5, '720p']);
    // a last frame without a resolution is made (and priced) at the one Kling needs for it (pro: 1080p)
    expect(madeResolution(kling, ask({ lastFrame: { url: 'https://img/end.png' } } as Partial<VideoRequest>))).toBe(kling.lastFrameResolution ?? '720p');
    const declared = { ...kling, durations: [3, 6], resolutions: ['1080p', '720p'] };
    expect(costOf({ name: 'mine', spec: declared, price: PRICE, declared: true }, ask())).toBe(0.75);
  });

  it('a default duration the made resolution does not make (durationsAt) gives way to the first it does; an asked one is kept', () => {
    const model = { ...spec(KLING_VIDEO_MODELS, 'kling-v2-1'), durations: [5, 10], defaultDurationS: 10, durationsAt: { '1080p': [5] } };
    expect(madeDurationS(model, ask())).toBe(10);
    expect(madeDurationS(model, ask({ resolution: '1080p' }))).toBe(5);
    expect(costOf({ name: 'mine', spec: model, price: PRICE, declared: true }, ask({ resolution: '1080p' }))).toBe(1.25);
    expect(madeDurationS(model, ask({ resolution: '1080p', durationS: 10 }))).toBe(10);
  });
});
