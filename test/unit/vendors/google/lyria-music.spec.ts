import { UpstreamBusy, UpstreamRefused, UpstreamGenerationFailed } from '../../../../src/infra/relay/upstream-client.js';
import type { MusicCreate, MusicRequest } from '../../../../src/vendors/contracts/music-vendor.js';
import { UnusableAnswer, type VendorAccount } from '../../../../src/vendors/contracts/vendor.js';
import { GOOGLE } from '../../../../src/vendors/google/google.vendor.js';
import { LYRIA_MODELS, LyriaMusicVendor, lyriaBody, lyriaPromptOf, lyriaSongOf } from '../../../../src/vendors/google/lyria-music.vendor.js';
import { MUSIC_VENDORS } from '../../../../src/vendors/music-vendors.js';
import { refusesContent } from '../../../../src/vendors/registry.js';
import { type FakeGemini, startFakeGemini } from '../../../support/vendors/google/gemini.fake.js';
import { songLike } from '../../../support/vendors/google/lyria-song.js';
import { decodedSeconds, probedAudio } from '../../../support/vendors/speech-audio.js';
import { loopbackUpstreamClient } from '../../../support/vendors/upstream-client.js';

const request = (over: Partial<MusicRequest> = {}): MusicRequest => ({
  lyrics: null,
  description: 'A cheerful acoustic folk song with guitar and harmonica',
  style: null,
  avoidStyle: null,
  title: null,
  model: 'lyria-3-clip-preview',
  instrumental: false,
  durationS: null,
  continues: null,
  ...over,
});
const create = (over: Partial<MusicRequest> = {}): MusicCreate => {
  const r = request(over);
  return { request: r, model: LYRIA_MODELS.find((m) => m.id === r.model)!, taskId: 'task-1' };
};
/** A real (tiny) MP3 frame header: what the reader checks the bytes by. */
const MP3 = Buffer.from([0xff, 0xfb, 0x90, 0x64, 0, 0, 0, 0]);
const WAV = Buffer.concat([Buffer.from('RIFF'), Buffer.alloc(4), Buffer.from('WAVEfmt '), Buffer.alloc(8)]);
/** A generateContent answer as Google's guide shows Lyria's: the lyrics as text, then the song inline. */
const answered = (parts: unknown[], finishReason = 'STOP') => ({ candidates: [{ content: { role: 'model', parts }, finishReason, index: 0 }] });
const audioPart = (bytes: Buffer, mimeType = 'audio/mpeg') => ({ inlineData: { mimeType, data: bytes.toString('base64') } });

describe("Lyria 3's music: the request's mapping", () => {
  it('the style, what the song is about, what to avoid and the lyrics after "Lyrics:", in one user turn; AUDIO and TEXT asked', () => {
    expect(lyriaBody(request({ style: 'indie folk, acoustic guitar, 90 BPM', description: 'A song about a lighthouse keeper', avoidStyle: 'drums', lyrics: '[Verse]\nThe light goes round' }))).toEqual({
      contents: [{ role: 'user', parts: [{ text: 'Style: indie folk, acoustic guitar, 90 BPM\nA song about a lighthouse keeper\nAvoid: drums\n\nLyrics:\n[Verse]\nThe light goes round' }] }],
      generationConfig: { responseModalities: ['AUDIO', 'TEXT'] },
    });
  });

  it('lyrics alone are the prompt after "Lyrics:"; a description alone is the prompt as written (it writes its own lyrics)', () => {
    expect(lyriaPromptOf(request({ description: null, lyrics: '  [Chorus]\nLa la  ' }))).toBe('Lyrics:\n[Chorus]\nLa la');
    expect(lyriaPromptOf(request({ description: 'A cheerful acoustic folk song with guitar and harmonica.' }))).toBe('A cheerful acoustic folk song with guitar and harmonica.');
  });

  it('instrumental: "Instrumental only, no vocals." as the guide asks, and no lyrics sent to be sung; no title, ever', () => {
    expect(lyriaPromptOf(request({ description: null, style: 'lo-fi hip hop', instrumental: true, lyrics: 'Not to be sung', title: 'Night Shift' }))).toBe('Style: lo-fi hip hop\nInstrumental only, no vocals.');
    expect(lyriaPromptOf(request({ description: null, instrumental: true }))).toBe('Instrumental only, no vocals.');
    expect(lyriaPromptOf(request({ description: 'x', title: 'Night Shift' }))).not.toContain('Night Shift');
  });

  it('the catalog: the 30 s clip model and the full-song model, both singing lyrics given or their own, instrumental when asked; no duration, no continuation, one MP3 take', () => {
    expect(LYRIA_MODELS.map((m) => m.id)).toEqual(['lyria-3-clip-preview', 'lyria-3-pro-preview']);
    for (const m of LYRIA_MODELS) {
      expect([m.id, m.lyrics, m.description, m.instrumental, m.instrumentalOnly, m.continueUpload, m.continueOwn, m.durationS, m.takes, m.format]).toEqual([m.id, true, true, true, undefined, false, false, null, 1, 'mp3']);
    }
    expect(MUSIC_VENDORS).toContain(LyriaMusicVendor);
    expect([LyriaMusicVendor.protocol, GOOGLE.operations.includes('music')]).toEqual(['gemini', true]);
  });
});

describe("Lyria 3's answer, read (lyriaSongOf)", () => {
  it('the first inlineData after the text part: MP3 (audio/mpeg), its text kept as the lyrics; WAV where its type says so; snake_case from a relay', () => {
    expect(lyriaSongOf(answered([{ text: '[Verse 1]\nThe light goes round' }, audioPart(MP3)]), 200, false)).toEqual({ audio: { bytes: MP3, format: 'mp3' }, lyrics: '[Verse 1]\nThe light goes round' });
    expect(lyriaSongOf(answered([audioPart(WAV, 'audio/wav')]), 200, false)).toEqual({ audio: { bytes: WAV, format: 'wav' } });
    expect(lyriaSongOf(answered([{ inline_data: { mime_type: 'audio/mpeg', data: MP3.toString('base64') } }]), 200, false).audio).toEqual({ bytes: MP3, format: 'mp3' });
    // an ID3 tag opens an MP3 as well
    const id3 = Buffer.concat([Buffer.from('ID3'), Buffer.alloc(7)]);
    expect(lyriaSongOf(answered([audioPart(id3, 'audio/mpeg; charset=binary')]), 200, false).audio?.bytes).toEqual(id3);
  });

  it("several text parts are the lyrics joined; a thought's words are not; an instrumental's text (its structure only) is not kept as lyrics", () => {
    const parts = [{ text: 'Planning the arrangement', thought: true }, { text: '[Verse]\nOne' }, { text: ' [Chorus]\nTwo ' }, audioPart(MP3)];
    expect(lyriaSongOf(answered(parts), 200, false).lyrics).toBe('[Verse]\nOne\n\n[Chorus]\nTwo');
    expect(lyriaSongOf(answered([{ text: '[0:00 - 0:10] Intro' }, audioPart(MP3)]), 200, true)).toEqual({ audio: { bytes: MP3, format: 'mp3' } });
  });

  it("a blocked prompt or a finish of Google's filters is a content refusal, by the descriptor's words", () => {
    const read = (json: unknown) => {
      try {
        lyriaSongOf(json, 200, false);
        return null;
      } catch (err) {
        return err instanceof UpstreamRefused ? [err.kind, err.status, err.message, refusesContent('gemini', err.message)] : err;
      }
    };
    expect(read({ promptFeedback: { blockReason: 'PROHIBITED_CONTENT', blockReasonMessage: 'Not allowed.' } })).toEqual(['request', 200, "the upstream's safety filters blocked the prompt (blockReason PROHIBITED_CONTENT): Not allowed.", true]);
    expect(read({ candidates: [{ finishReason: 'SAFETY', index: 0 }] })).toEqual(['request', 200, "the upstream's safety filters refused the song (finishReason SAFETY)", true]);
    expect(read({ candidates: [{ finishReason: 'RECITATION', finishMessage: 'Too close to an existing song.' }] })).toEqual(['request', 200, "the upstream's safety filters refused the song (finishReason RECITATION): Too close to an existing song.", true]);
    for (const finish of ['PROHIBITED_CONTENT', 'BLOCKLIST', 'SPII']) expect((read({ candidates: [{ finishReason: finish }] }) as unknown[])[3]).toBe(true);
    // an unspecified block reason is no block: the answer is read on
    expect(read({ promptFeedback: { blockReason: 'BLOCKED_REASON_UNSPECIFIED' }, ...answered([audioPart(MP3)]) })).toBeNull();
  });

  it('no song is an unusable answer naming the field it lacks, the finish reason and its words; audio of another type, or bytes not of the type, names the field', () => {
    const read = (json: unknown) => {
      try {
        lyriaSongOf(json, 200, false);
        return null;
      } catch (err) {
        return err instanceof UnusableAnswer ? [err.message, refusesContent('gemini', err.message)] : err;
      }
    };
    expect(read({})).toEqual(['the upstream answered without a song: no candidates[0] (finishReason none)', false]);
    expect(read({ candidates: [{ finishReason: 'OTHER', index: 0 }] })).toEqual(['the upstream answered without a song: no candidates[0].content.parts (finishReason OTHER)', false]);
    expect(read(answered([{ text: "I can't imitate a specific artist's voice." }]))).toEqual(["the upstream answered without a song: no candidates[0].content.parts[].inlineData (finishReason STOP): I can't imitate a specific artist's voice.", false]);
    expect(read(answered([{ text: 'x' }, audioPart(MP3, 'audio/ogg')]))).toEqual(["the upstream's candidates[0].content.parts[1].inlineData.mimeType is audio/ogg, not MP3 (audio/mpeg) or WAV (audio/wav)", false]);
    expect(read(answered([{ inlineData: { data: MP3.toString('base64') } }]))).toEqual(["the upstream's candidates[0].content.parts[0].inlineData.mimeType is missing, not MP3 (audio/mpeg) or WAV (audio/wav)", false]);
    expect(read(answered([audioPart(Buffer.from('<html>oops</html>'))]))).toEqual(["the upstream's candidates[0].content.parts[0].inlineData.data is 17 bytes that are not an MP3, though its mimeType says audio/mpeg", false]);
    expect(read(answered([audioPart(MP3, 'audio/wav')]))).toEqual(["the upstream's candidates[0].content.parts[0].inlineData.data is 8 bytes that are not a WAV file, though its mimeType says audio/wav", false]);
    expect((read({ candidates: 'none' }) as string[])[0]).toMatch(/^the upstream answered the song without a usable candidates \(expected array, received string\)/);
    expect((read({ candidates: [{ content: { parts: [{ inlineData: { mimeType: 'audio/mpeg', data: 7 } }] } }] }) as string[])[0]).toMatch(/^the upstream answered the song without a usable candidates\[0\]\.content\.parts\[0\]\.inlineData\.data/);
  });
});

describe("Lyria 3's adapter against the Gemini fake (the real UpstreamClient, no app)", () => {
  let fake: FakeGemini;
  let account: VendorAccount;
  const vendor = new LyriaMusicVendor(loopbackUpstreamClient());
  beforeAll(async () => {
    fake = await startFakeGemini('AIza-lyria');
    account = { baseUrl: fake.baseUrl, auth: GOOGLE.auth({ api_key: 'AIza-lyria' }) };
  });
  afterAll(() => fake.close());
  beforeEach(() => {
    fake.received.length = 0;
    for (const k of Object.keys(fake.knobs)) delete (fake.knobs as Record<string, unknown>)[k];
  });

  it('the clip model: one take, a 30 s stereo MP3 that decodes, the lyrics it sang; the fake received the mapped body whole under x-goog-api-key', async () => {
    const asked = create({ style: 'indie folk', lyrics: '[Verse]\nThe light goes round\n[Chorus]\nHome again' });
    const answer = await vendor.create(account, asked);
    expect('made' in answer && answer.made).toHaveLength(1);
    const [take] = (answer as { made: { audio?: { bytes: Buffer; format: string }; lyrics?: string }[] }).made;
    expect([take.audio?.format, take.lyrics]).toEqual(['mp3', '[Verse]\nThe light goes round\n[Chorus]\nHome again']);
    expect(await decodedSeconds(take.audio!.bytes, 'mp3')).toBeCloseTo(30, 0);
    expect(await probedAudio(take.audio!.bytes)).toEqual({ channels: 2, sampleRate: 48_000 });
    expect(fake.received.map((r) => [r.path, r.model, r.key, r.status, r.body, r.song?.seconds])).toEqual([['/v1beta/models/lyria-3-clip-preview:generateContent', 'lyria-3-clip-preview', 'header', 200, lyriaBody(asked.request), 30]]);
    expect([vendor.protocol, vendor.minPollS, vendor.models]).toEqual(['gemini', GOOGLE.pollFloorS, LYRIA_MODELS]);
  });

  it('the full-song model: as long as its prompt asks in words (it takes no duration field); its own lyrics from a description; an instrumental keeps none', async () => {
    const sung = (await vendor.create(account, create({ model: 'lyria-3-pro-preview', description: 'A 45-second synth-pop song about trains' }))) as { made: { audio?: { bytes: Buffer }; lyrics?: string }[] };
    expect(await decodedSeconds(sung.made[0].audio!.bytes, 'mp3')).toBeCloseTo(45, 0);
    expect(sung.made[0].lyrics).toMatch(/^\[Verse 1\]/);
    const instrumental = (await vendor.create(account, create({ model: 'lyria-3-pro-preview', description: 'A 40-second ambient piece', instrumental: true }))) as { made: { lyrics?: string }[] };
    expect(instrumental.made[0]).not.toHaveProperty('lyrics');
    expect(fake.received.map((r) => [r.model, r.song?.seconds, r.song?.mimeType])).toEqual([
      ['lyria-3-pro-preview', 45, 'audio/mpeg'],
      ['lyria-3-pro-preview', 40, 'audio/mpeg'],
    ]);
  });

  it("its failures as the relay reads them: 500, 503 and 429 busy, a bad key the credentials', a free-tier key the account's, refusals of content, words only a failed generation (another channel may make it)", async () => {
    const failure = (c = create(), on = account) => vendor.create(on, c).then(() => null, (err: unknown) => err);
    fake.knobs.serverError = 1;
    expect(await failure()).toBeInstanceOf(UpstreamBusy);
    fake.knobs.overloaded = 1;
    expect(await failure()).toBeInstanceOf(UpstreamBusy);
    fake.knobs.busy = 1;
    expect(await failure()).toBeInstanceOf(UpstreamBusy);
    expect(await failure(create(), { baseUrl: fake.baseUrl, auth: GOOGLE.auth({ api_key: 'AIza-wrong' }) })).toMatchObject({ constructor: UpstreamRefused, kind: 'auth' });
    fake.knobs.noQuota = true;
    expect(await failure()).toMatchObject({ constructor: UpstreamRefused, kind: 'account' });
    fake.knobs.noQuota = false;
    for (const knob of ['blockPrompt', 'refuse'] as const) {
      fake.knobs[knob] = true;
      const refused = (await failure()) as UpstreamRefused;
      expect([knob, refused.constructor, refused.kind, refusesContent('gemini', refused.message)]).toEqual([knob, UpstreamRefused, 'request', true]);
      fake.knobs[knob] = false;
    }
    fake.knobs.textOnly = true;
    expect(await failure()).toMatchObject({ constructor: UpstreamGenerationFailed, answer: { status: 200 }, message: expect.stringMatching(/^the upstream answered without a song: no candidates\[0\]\.content\.parts\[\]\.inlineData \(finishReason STOP\): I can't create music/) });
    // a model it does not have: Google's 404, the request's
    expect(await failure({ ...create(), model: { ...LYRIA_MODELS[0], id: 'lyria-realtime-exp' } })).toMatchObject({ constructor: UpstreamRefused, kind: 'request', status: 404 });
  });

  it('a continuation is never sent (no model of its continues a clip): refused as the gateway\'s own, nothing reaches Google', async () => {
    const refused = await vendor.create(account, create({ continues: { upstreamClipId: null, atS: 12, upload: true } })).then(() => null, (err: unknown) => err);
    expect(refused).toMatchObject({ constructor: UpstreamRefused, kind: 'request', internal: true });
    expect(fake.received).toEqual([]);
  });
});

describe("the fake's song", () => {
  it('is made as Lyria answers it, and is the same bytes for the same words', async () => {
    const wav = await songLike('wav', 3, 'x');
    expect(wav.toString('latin1', 0, 4)).toBe('RIFF');
    expect(await probedAudio(wav)).toEqual({ channels: 2, sampleRate: 48_000 });
    expect((await songLike('mp3', 3, 'x')).equals(await songLike('mp3', 3, 'x'))).toBe(true);
  });
});
