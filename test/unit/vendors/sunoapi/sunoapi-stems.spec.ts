import { UpstreamBusy, UpstreamRefused } from '../../../../src/infra/relay/upstream-client.js';
import { unmetStemsFields } from '../../../../src/vendors/contracts/stems-vendor.js';
import { UnusableAnswer } from '../../../../src/vendors/contracts/vendor.js';
import { SUNOAPI_STEMS_MODELS, sunoapiStemsBody, sunoapiStemsStatus } from '../../../../src/vendors/sunoapi/sunoapi-stems.vendor.js';
import { stemsCatalogOf } from '../../../../src/vendors/stems-vendors.js';

const model = SUNOAPI_STEMS_MODELS[0];
const own = { upstreamClipId: 'e231aaaa-bbbb-cccc-dddd-eeee8cadc7dc', upstreamTaskId: '3e63b4cc88d52611159371f6af5571e7' };

/** A record-info answer as its docs show it, with these links set. */
function record(flag: string, links: Record<string, string | null>, extra: Record<string, unknown> = {}) {
  return {
    code: 200,
    msg: 'success',
    data: {
      taskId: 'vr-task-1',
      musicId: '376c687e-d439-42c1-b1e4-bcb43b095ec2',
      callbackUrl: 'https://example.com/callback',
      completeTime: 1753782937000,
      response: { originUrl: null, instrumentalUrl: null, vocalUrl: null, backingVocalsUrl: null, drumsUrl: null, bassUrl: null, guitarUrl: null, keyboardUrl: null, percussionUrl: null, stringsUrl: null, synthUrl: null, fxUrl: null, brassUrl: null, woodwindsUrl: null, ...links },
      successFlag: flag,
      createTime: 1753782854000,
      errorCode: null,
      errorMessage: null,
      ...extra,
    },
  };
}

describe("sunoapi.org's vocal removal: its mapping and its answers", () => {
  it('its model splits only its own takes, in two (separate_vocal) or all it finds (split_stem); registered for its protocol', () => {
    expect(model.source).toBe('own');
    expect(Object.keys(model.splits)).toEqual(['two', 'all']);
    expect(unmetStemsFields(model, { split: 'two', clip: 'stored' })).toEqual(['clip']);
    expect(unmetStemsFields(model, { split: 'all', clip: 'own' })).toEqual([]);
    expect(stemsCatalogOf('sunoapi')).toBe(SUNOAPI_STEMS_MODELS);
  });

  it('the body names the take by the task that made it and its audio id, the type of the split, and a callBackUrl (the gateway\'s, else the placeholder it requires)', () => {
    expect(sunoapiStemsBody({ request: { model: model.id, split: 'two' }, own, callbackUrl: 'https://gw.example/upstream-callbacks/t/tok' })).toEqual({
      taskId: own.upstreamTaskId,
      audioId: own.upstreamClipId,
      type: 'separate_vocal',
      callBackUrl: 'https://gw.example/upstream-callbacks/t/tok',
    });
    expect(sunoapiStemsBody({ request: { model: model.id, split: 'all' }, own })).toEqual({ taskId: own.upstreamTaskId, audioId: own.upstreamClipId, type: 'split_stem', callBackUrl: 'https://example.com/callback' });
    // a clip it did not make, or whose task id was not kept, is not for it: refused as this channel's
    expect(() => sunoapiStemsBody({ request: { model: model.id, split: 'two' } })).toThrow(UpstreamRefused);
    expect(() => sunoapiStemsBody({ request: { model: model.id, split: 'two' }, own: { ...own, upstreamTaskId: null } })).toThrow(UpstreamRefused);
  });

  it('SUCCESS of separate_vocal: vocals and instrumental by their links; the original mix left out', () => {
    const status = sunoapiStemsStatus(record('SUCCESS', { originUrl: 'https://cdn.example/o.mp3', vocalUrl: 'https://cdn.example/v.mp3', instrumentalUrl: 'https://cdn.example/i.mp3' }));
    expect(status).toEqual({ state: 'succeeded', stems: [{ name: 'vocals', audioUrl: 'https://cdn.example/v.mp3' }, { name: 'instrumental', audioUrl: 'https://cdn.example/i.mp3' }] });
  });

  it('SUCCESS of split_stem: the stems the song has, in order; CALLBACK_EXCEPTION with links is a success too', () => {
    const links = { vocalUrl: 'https://cdn.example/v.mp3', drumsUrl: 'https://cdn.example/d.mp3', bassUrl: 'https://cdn.example/b.mp3', woodwindsUrl: 'https://cdn.example/w.mp3' };
    const names = (s: ReturnType<typeof sunoapiStemsStatus>) => (s.state === 'succeeded' ? s.stems.map((x) => x.name) : s.state);
    expect(names(sunoapiStemsStatus(record('SUCCESS', links)))).toEqual(['vocals', 'drums', 'bass', 'woodwinds']);
    expect(names(sunoapiStemsStatus(record('CALLBACK_EXCEPTION', links)))).toEqual(['vocals', 'drums', 'bass', 'woodwinds']);
  });

  it('PENDING works on; its failures end with their words; SUCCESS without a link fails', () => {
    expect(sunoapiStemsStatus(record('PENDING', {}))).toEqual({ state: 'working' });
    expect(sunoapiStemsStatus(record('GENERATE_AUDIO_FAILED', {}, { errorCode: 500, errorMessage: 'separation failed' }))).toEqual({ state: 'failed', reason: 'separation failed (500) (GENERATE_AUDIO_FAILED)', secrets: [] });
    expect(sunoapiStemsStatus(record('CALLBACK_EXCEPTION', {}))).toMatchObject({ state: 'failed' });
    expect(sunoapiStemsStatus(record('SUCCESS', {}))).toMatchObject({ state: 'failed', reason: expect.stringContaining('without a link') });
  });

  it("its codes under HTTP 200 are read as the family's: 401 the key, 430 busy; a body without data is unusable", () => {
    expect(() => sunoapiStemsStatus({ code: 401, msg: 'Unauthorized' })).toThrow(UpstreamRefused);
    expect(() => sunoapiStemsStatus({ code: 430, msg: 'Call frequency too high' })).toThrow(UpstreamBusy);
    expect(() => sunoapiStemsStatus({ code: 200, msg: 'success' })).toThrow(UnusableAnswer);
  });
});
