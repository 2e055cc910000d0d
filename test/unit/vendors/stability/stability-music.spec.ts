import { UpstreamBusy, UpstreamRefused } from '../../../../src/infra/relay/upstream-client.js';
import type { MusicCreate, MusicFormat, MusicRequest } from '../../../../src/vendors/contracts/music-vendor.js';
import { UnusableAnswer, type VendorAccount } from '../../../../src/vendors/contracts/vendor.js';
import { MUSIC_VENDORS } from '../../../../src/vendors/music-vendors.js';
import { refusesContent } from '../../../../src/vendors/registry.js';
import { formOf } from '../../../../src/vendors/stability/stability-image.vendor.js';
import { seedOf, STABLE_AUDIO_MODELS, stableAudioCall, stableAudioOf, StabilityMusicVendor } from '../../../../src/vendors/stability/stability-music.vendor.js';
import { STABILITY } from '../../../../src/vendors/stability/stability.vendor.js';
import { correlation, decodeMono, musicalWav, relativeError, testMp3 } from '../../../support/media.js';
import { decodedSeconds } from '../../../support/vendors/speech-audio.js';
import { type FakeStableAudio, startFakeStableAudio } from '../../../support/vendors/stability/stable-audio.fake.js';
import { loopbackUpstreamClient } from '../../../support/vendors/upstream-client.js';

const song = (over: Partial<MusicRequest> = {}): MusicRequest => ({ lyrics: null, description: 'a calm song about the sea', style: 'ambient, piano', avoidStyle: null, title: null, model: 'stable-audio-2.5', instrumental: true, durationS: 30, continues: null, ...over });
const clipOf = (format: MusicFormat, durationS: number, bytes = Buffer.from('clip')) => ({ bytes, format, durationS });
const TASK = 'task-7f3a';

/**
 * Stable Audio 2.5 on Stability's API (platform.stability.ai/docs/api-reference, "Stable Audio 2"): multipart
 * `POST /v2beta/audio/stable-audio-2/text-to-audio` and `/inpaint`, answered with the song's bytes (`accept:
 * audio/*`) or its JSON `{audio, finish_reason, seed}`; its errors `{id, name, errors}`.
 */
describe('Stable Audio: the model and the calls', () => {
  it('declares stable-audio-2.5 (instrumental only, 1–190 s, one MP3 take, continues any clip by its bytes) and takes its protocol from the descriptor', () => {
    expect(STABLE_AUDIO_MODELS).toEqual([
      { id: 'stable-audio-2.5', lyrics: false, description: true, instrumental: true, instrumentalOnly: true, continueUpload: true, continueOwn: true, durationS: { min: 1, max: 190 }, takes: 1, lyricsMax: null, descriptionMax: 9000, styleMax: 998, format: 'mp3', avoidStyle: false },
    ]);
    expect([StabilityMusicVendor.protocol, new StabilityMusicVendor(loopbackUpstreamClient()).minPollS]).toEqual([STABILITY.protocol, STABILITY.pollFloorS]);
    expect(STABILITY.operations).toContain('music');
    expect(MUSIC_VENDORS).toContain(StabilityMusicVendor);
  });

  it('a new song: text-to-audio with the prompt (description then style), duration, model, mp3, the task seed, 8 steps, guidance 1', () => {
    expect(stableAudioCall(song({ description: 'a calm song about the sea. ' }), TASK, null)).toEqual({
      path: '/v2beta/audio/stable-audio-2/text-to-audio',
      fields: { prompt: 'a calm song about the sea. ambient, piano', duration: '30', model: 'stable-audio-2.5', output_format: 'mp3', seed: String(seedOf(TASK)), steps: '8', cfg_scale: '1' },
      files: [],
    });
    expect(stableAudioCall(song({ description: null, durationS: 1 }), TASK, null).fields).toMatchObject({ prompt: 'ambient, piano', duration: '1' });
    expect(stableAudioCall(song({ style: null, durationS: 190 }), TASK, null).fields).toMatchObject({ prompt: 'a calm song about the sea', duration: '190' });
    // no duration asked: its longest, 190 s (its own default), said outright
    expect(stableAudioCall(song({ durationS: null }), TASK, null).fields.duration).toBe('190');
  });

  it("the seed: the task's own (the same task makes the same song on any channel), never 0 (a random one), within its seeds", () => {
    expect(seedOf(TASK)).toBe(seedOf(TASK));
    expect(seedOf('task-other')).not.toBe(seedOf(TASK));
    for (const id of ['a', 'b', 'c', TASK]) expect(seedOf(id)).toBeGreaterThanOrEqual(1), expect(seedOf(id)).toBeLessThanOrEqual(4_294_967_294);
  });

  it('a continuation: inpaint with the clip as audio, mask_start at the cut (whole seconds down, else the clip\'s end), mask_end at the song\'s end', () => {
    const mp3 = clipOf('mp3', 30, Buffer.from('ID3-clip'));
    const call = stableAudioCall(song({ durationS: 60, continues: { upstreamClipId: null, atS: 12, upload: true } }), TASK, mp3);
    expect(call).toEqual({
      path: '/v2beta/audio/stable-audio-2/inpaint',
      fields: { prompt: 'a calm song about the sea. ambient, piano', duration: '60', model: 'stable-audio-2.5', output_format: 'mp3', seed: String(seedOf(TASK)), steps: '8', cfg_scale: '1', mask_start: '12', mask_end: '60' },
      files: [{ name: 'audio', bytes: mp3.bytes, type: 'audio/mpeg', filename: 'audio.mp3' }],
    });
    expect(stableAudioCall(song({ durationS: 60, continues: { upstreamClipId: null, atS: 12.9, upload: false } }), TASK, clipOf('wav', 30)).fields).toMatchObject({ mask_start: '12', mask_end: '60' });
    expect(stableAudioCall(song({ durationS: 60, continues: { upstreamClipId: null, atS: 12, upload: true } }), TASK, clipOf('wav', 30)).files[0]).toMatchObject({ type: 'audio/wav', filename: 'audio.wav' });
    expect(stableAudioCall(song({ durationS: null, continues: { upstreamClipId: null, atS: null, upload: true } }), TASK, clipOf('mp3', 30.6)).fields).toMatchObject({ mask_start: '30', mask_end: '190', duration: '190' });
    // the boundaries of the cut: one second before the song's end is served, at its end refused
    expect(stableAudioCall(song({ durationS: 13, continues: { upstreamClipId: null, atS: 12, upload: true } }), TASK, clipOf('mp3', 30)).fields).toMatchObject({ mask_start: '12', mask_end: '13' });
    expect(() => stableAudioCall(song({ durationS: 12, continues: { upstreamClipId: null, atS: 12, upload: true } }), TASK, clipOf('mp3', 30))).toThrow('Stable Audio makes the song up to its end at 12 s, which must be after the cut at 12 s');
  });

  it("the multipart body carries every field whole and the clip's bytes", async () => {
    const bytes = Buffer.from([0x49, 0x44, 0x33, 0, 1, 2, 255]);
    const call = stableAudioCall(song({ durationS: 45, continues: { upstreamClipId: null, atS: 20, upload: true } }), TASK, clipOf('mp3', 30, bytes));
    const form = formOf(call);
    const text = Object.fromEntries([...form.entries()].filter(([, v]) => typeof v === 'string'));
    expect(text).toEqual(call.fields);
    const audio = form.get('audio') as File;
    expect([audio.type, audio.name, Buffer.from(await audio.arrayBuffer())]).toEqual(['audio/mpeg', 'audio.mp3', bytes]);
  });

  it("what it cannot do is refused as this channel's (another may take the task), never dropped", () => {
    const refusal = (request: MusicRequest, clip: ReturnType<typeof clipOf> | null = null) => {
      try {
        stableAudioCall(request, TASK, clip);
        return null;
      } catch (err) {
        return err instanceof UpstreamRefused ? [err.kind, err.internal, err.message] : err;
      }
    };
    const upload = { upstreamClipId: null, atS: 12, upload: true };
    expect(refusal(song({ lyrics: '[Verse] the tide', instrumental: false }))).toEqual(['request', true, 'Stable Audio makes instrumental music only: it sings no lyrics']);
    expect(refusal(song({ instrumental: false }))).toEqual(['request', true, 'Stable Audio makes instrumental music only: it sings no lyrics']);
    expect(refusal(song({ avoidStyle: 'drums' }))).toEqual(['request', true, 'Stable Audio takes no style to avoid']);
    expect(refusal(song({ description: '  ', style: null }))).toEqual(['request', true, 'Stable Audio needs a description or a style (its prompt)']);
    expect(refusal(song({ description: 'd'.repeat(9000), style: 's'.repeat(998) }))).toBeNull();
    expect(refusal(song({ description: 'd'.repeat(9000), style: 's'.repeat(999) }))).toEqual(['request', true, 'Stable Audio takes a prompt of at most 10000 characters (the description and the style together)']);
    expect(refusal(song({ durationS: 191 }))).toEqual(['request', true, 'Stable Audio makes songs of 1 to 190 whole seconds, not 191']);
    expect(refusal(song({ durationS: 0 }))).toEqual(['request', true, 'Stable Audio makes songs of 1 to 190 whole seconds, not 0']);
    expect(refusal(song({ continues: upload }))).toEqual(['request', true, 'Stable Audio continues a clip only from its bytes, and none was given']);
    expect(refusal(song({ continues: upload }), clipOf('flac', 30))).toEqual(['request', true, 'Stable Audio takes the clip it continues as MP3 or WAV, not FLAC']);
    // its inpaint takes clips of 6 to 190 s: both sides of each bound
    expect(refusal(song({ continues: { ...upload, atS: 5 } }), clipOf('mp3', 5.99))).toEqual(['request', true, 'Stable Audio continues clips of 6 to 190 s, not one of 5.99 s']);
    expect(refusal(song({ continues: { ...upload, atS: 5 } }), clipOf('mp3', 6))).toBeNull();
    expect(refusal(song({ durationS: 190, continues: upload }), clipOf('mp3', 190))).toBeNull();
    expect(refusal(song({ durationS: 190, continues: upload }), clipOf('mp3', 190.5))).toEqual(['request', true, 'Stable Audio continues clips of 6 to 190 s, not one of 190.5 s']);
  });
});

describe('Stable Audio: the answers', () => {
  const answer = (headers: Record<string, string>, body: Buffer, json: Record<string, unknown> = {}) => ({ status: 200, headers, body, json });
  const mp3 = Buffer.from('ID3-song');

  it('the bytes it answered (accept audio/*), their format from the content type; a continuation holds the clip up to the cut (fromStart)', () => {
    expect(stableAudioOf(answer({ 'content-type': 'audio/mpeg', 'finish-reason': 'SUCCESS', seed: '42' }, mp3), 'mp3', false)).toEqual({ audio: { bytes: mp3, format: 'mp3' } });
    expect(stableAudioOf(answer({ 'content-type': 'audio/wav', 'finish-reason': 'SUCCESS' }, mp3), 'mp3', true)).toEqual({ audio: { bytes: mp3, format: 'wav' }, fromStart: true });
    expect(stableAudioOf(answer({ 'content-type': 'audio/x-wav' }, mp3), 'mp3', false).audio?.format).toBe('wav');
    expect(stableAudioOf(answer({ 'content-type': 'audio/*' }, mp3), 'wav', false).audio?.format).toBe('wav');
  });

  it('its JSON answer: the base64 audio and its finish_reason', () => {
    const json = { audio: mp3.toString('base64'), finish_reason: 'SUCCESS', seed: 42 };
    expect(stableAudioOf(answer({ 'content-type': 'application/json' }, Buffer.from(JSON.stringify(json)), json), 'mp3', false)).toEqual({ audio: { bytes: mp3, format: 'mp3' } });
    expect(() => stableAudioOf(answer({ 'content-type': 'application/json; charset=utf-8' }, Buffer.from('{}'), { finish_reason: 'SUCCESS' }), 'mp3', false)).toThrow(UnusableAnswer);
  });

  it("its moderation's CONTENT_FILTERED a content refusal (header or JSON); no audio, or none at all, refused as no song", () => {
    const filtered = [
      () => stableAudioOf(answer({ 'content-type': 'audio/mpeg', 'finish-reason': 'CONTENT_FILTERED' }, mp3), 'mp3', false),
      () => stableAudioOf(answer({ 'content-type': 'application/json' }, Buffer.alloc(0), { audio: mp3.toString('base64'), finish_reason: 'CONTENT_FILTERED' }), 'mp3', false),
    ];
    for (const read of filtered) {
      const err = (() => {
        try {
          return read();
        } catch (e) {
          return e as UpstreamRefused;
        }
      })() as UpstreamRefused;
      expect([err.constructor, err.kind, err.internal, refusesContent('stability', err.message)]).toEqual([UpstreamRefused, 'request', false, true]);
    }
    expect(() => stableAudioOf(answer({ 'content-type': 'text/html' }, Buffer.from('<html>')), 'mp3', false)).toThrow(new UnusableAnswer('the upstream answered without audio'));
    expect(() => stableAudioOf(answer({ 'content-type': 'audio/mpeg' }, Buffer.alloc(0)), 'mp3', false)).toThrow(new UnusableAnswer('the upstream answered an empty song'));
  });
});

describe("Stable Audio's adapter against the Stable Audio fake (the real UpstreamClient, no app)", () => {
  let fake: FakeStableAudio;
  let account: VendorAccount;
  const vendor = new StabilityMusicVendor(loopbackUpstreamClient());
  const model = STABLE_AUDIO_MODELS[0];
  const create = (request: MusicRequest, source?: { bytes: Buffer; format: MusicFormat; durationS: number }): MusicCreate => ({
    request,
    model,
    taskId: TASK,
    ...(source ? { source: { url: () => Promise.reject(new Error('Stable Audio takes the bytes')), bytes: () => Promise.resolve(source) } } : {}),
  });
  const failure = (c: MusicCreate, on = account) => vendor.create(on, c).then(() => null, (err: unknown) => err);
  beforeAll(async () => {
    fake = await startFakeStableAudio('sk-stable');
    account = { baseUrl: fake.url, auth: STABILITY.auth({ api_key: 'sk-stable' }) };
  });
  afterAll(() => fake.close());
  beforeEach(() => {
    fake.received.length = 0;
    for (const k of Object.keys(fake.knobs)) delete (fake.knobs as Record<string, unknown>)[k];
  });

  it('a new song: an MP3 of the asked length; the fake received the fields whole, as multipart, asking for audio', async () => {
    const answer = await vendor.create(account, create(song({ durationS: 7 })));
    if (!('made' in answer)) throw new Error('a synchronous vendor answers the song');
    expect(answer.made).toHaveLength(1);
    const [take] = answer.made;
    expect([take.audio?.format, take.fromStart, take.upstreamId]).toEqual(['mp3', undefined, undefined]);
    expect(await decodedSeconds(take.audio!.bytes, 'mp3')).toBeCloseTo(7, 1);
    expect(fake.received).toEqual([
      {
        path: 'text-to-audio',
        fields: { prompt: 'a calm song about the sea. ambient, piano', duration: '7', model: 'stable-audio-2.5', output_format: 'mp3', seed: String(seedOf(TASK)), steps: '8', cfg_scale: '1' },
        audio: null,
        accept: 'audio/*',
        status: 200,
        made: { durationS: 7, format: 'mp3', keptS: 0 },
      },
    ]);
  });

  it("a continuation of a 20 s upload at its 12th second: inpaint; the song lasts what was asked (16 s) and holds the upload's own samples up to the cut", async () => {
    const upload = musicalWav(20, 7);
    const answer = await vendor.create(account, create(song({ durationS: 16, continues: { upstreamClipId: null, atS: 12, upload: true } }), { bytes: upload, format: 'wav', durationS: 20 }));
    if (!('made' in answer)) throw new Error('a synchronous vendor answers the song');
    const [take] = answer.made;
    expect([take.audio?.format, take.fromStart]).toEqual(['mp3', true]);
    expect(fake.received.map((r) => [r.path, r.fields.mask_start, r.fields.mask_end, r.fields.duration, r.audio?.type, r.audio?.durationS, r.made])).toEqual([
      ['inpaint', '12', '16', '16', 'audio/wav', 20, { durationS: 16, format: 'mp3', keptS: 12 }],
    ]);
    const made = await decodeMono(take.audio!.bytes, 'mp3');
    const original = await decodeMono(upload, 'wav');
    expect(made.length / 44_100).toBeCloseTo(16, 1);
    // up to the cut, the upload's own samples (through an MP3: close, not exact); past it, something else
    const rate = 44_100;
    expect(relativeError(made.subarray(rate, 11 * rate), original.subarray(rate, 11 * rate))).toBeLessThan(0.1);
    expect(Math.abs(correlation(made.subarray(13 * rate, 16 * rate), original.subarray(13 * rate, 16 * rate)))).toBeLessThan(0.2);
  });

  it('an MP3 upload is sent as MP3, and the continuation at its end when no cut was asked', async () => {
    const upload = testMp3(8, 330);
    await vendor.create(account, create(song({ durationS: 10, continues: { upstreamClipId: null, atS: null, upload: true } }), { bytes: upload, format: 'mp3', durationS: 8 }));
    expect(fake.received.map((r) => [r.status, r.audio?.type, r.audio?.filename, r.fields.mask_start, r.fields.mask_end, r.made?.keptS])).toEqual([[200, 'audio/mpeg', 'audio.mp3', '8', '10', 8]]);
  });

  it('its JSON answer read as well as its bytes', async () => {
    fake.knobs.json = true;
    const answer = await vendor.create(account, create(song({ durationS: 3 })));
    expect('made' in answer && (await decodedSeconds(answer.made[0].audio!.bytes, 'mp3'))).toBeCloseTo(3, 1);
  });

  it("its failures as the relay reads them: 403 content_moderation and CONTENT_FILTERED content refusals with its words, 402 the account's, a bad key the credentials', 429 and 500 busy (another channel may take it)", async () => {
    fake.knobs.moderate = true;
    const moderated = (await failure(create(song()))) as UpstreamRefused;
    expect([moderated.constructor, moderated.kind, moderated.status, refusesContent('stability', moderated.message)]).toEqual([UpstreamRefused, 'request', 403, true]);
    expect(moderated.message).toContain('Your request was flagged by our content moderation system');
    fake.knobs.moderate = false;
    fake.knobs.filter = true;
    const filtered = (await failure(create(song()))) as UpstreamRefused;
    expect([filtered.kind, refusesContent('stability', filtered.message)]).toEqual(['request', true]);
    fake.knobs.filter = false;
    fake.knobs.noCredit = true;
    expect(await failure(create(song()))).toMatchObject({ constructor: UpstreamRefused, kind: 'account', status: 402 });
    fake.knobs.noCredit = false;
    expect(await failure(create(song()), { baseUrl: fake.url, auth: STABILITY.auth({ api_key: 'sk-wrong' }) })).toMatchObject({ constructor: UpstreamRefused, kind: 'auth', status: 401 });
    fake.knobs.busy = true;
    expect(await failure(create(song()))).toBeInstanceOf(UpstreamBusy);
    fake.knobs.busy = false;
    fake.knobs.fail = true;
    expect(await failure(create(song()))).toBeInstanceOf(UpstreamBusy);
    // one call each: a synchronous create is never sent twice here
    expect(fake.received.map((r) => r.status)).toEqual([403, 200, 402, 429, 500]);
  });

  it("Stability's own 400 (a clip shorter than 6 s it decodes) is the request's, in its words", async () => {
    const short = await failure(create(song({ durationS: 20, continues: { upstreamClipId: null, atS: 3, upload: true } }), { bytes: testMp3(4), format: 'mp3', durationS: 6 }));
    expect(short).toMatchObject({ constructor: UpstreamRefused, kind: 'request', status: 400 });
    expect((short as Error).message).toMatch(/^bad_request: audio: must last 6 to 190 seconds, not 4\.\d+$/);
  });
});
