import { ElevenLabsClient, ElevenLabsError } from '@elevenlabs/elevenlabs-js';
import { UpstreamBusy, UpstreamRefused } from '../../../../src/infra/relay/upstream-client.js';
import type { MusicRequest } from '../../../../src/vendors/contracts/music-vendor.js';
import { UnusableAnswer, type VendorAccount } from '../../../../src/vendors/contracts/vendor.js';
import { ELEVENLABS_MUSIC_MODELS, ElevenLabsMusicVendor, elevenlabsMusicRequest, lyricSections, readElevenLabsSong, timedSections } from '../../../../src/vendors/elevenlabs/elevenlabs-music.vendor.js';
import { ELEVENLABS, elevenlabsError, elevenlabsRefusal } from '../../../../src/vendors/elevenlabs/elevenlabs.vendor.js';
import { MUSIC_VENDORS } from '../../../../src/vendors/music-vendors.js';
import { refusesContent } from '../../../../src/vendors/registry.js';
import { type FakeElevenLabs, startFakeElevenLabs } from '../../../support/vendors/elevenlabs/elevenlabs.fake.js';
import { decodedSeconds, probedAudio, speechLike } from '../../../support/vendors/speech-audio.js';
import { loopbackUpstreamClient } from '../../../support/vendors/upstream-client.js';

const model = ELEVENLABS_MUSIC_MODELS[0];
const request = (over: Partial<MusicRequest> = {}): MusicRequest => ({
  lyrics: null,
  description: null,
  style: null,
  avoidStyle: null,
  title: null,
  model: 'music_v1',
  instrumental: false,
  durationS: 30,
  continues: null,
  ...over,
});
const lyrics = '[Verse]\nCity lights are calling\nI hear them through the rain\n[Chorus: anthemic, full band]\nWe run, we run\nUntil the morning\nWe run, we run\nAnd start again\n[Outro]';
const sum = (sections: { duration_ms: number }[]) => sections.reduce((total, s) => total + s.duration_ms, 0);

describe("ElevenLabs' music: the request's mapping", () => {
  it('a description is a prompt with its length in ms, model_id and force_instrumental, to POST /v1/music?output_format=mp3_44100_128', () => {
    expect(elevenlabsMusicRequest(request({ description: 'A chill lo-fi hip hop beat with jazzy piano chords', durationS: 30 }), model)).toEqual({
      path: '/v1/music?output_format=mp3_44100_128',
      body: { model_id: 'music_v1', prompt: 'A chill lo-fi hip hop beat with jazzy piano chords', music_length_ms: 30_000, force_instrumental: false },
    });
  });

  it('the style, what to avoid and the title are folded into the prompt in words; a style alone is the prompt; no duration asked sends no music_length_ms', () => {
    const folded = elevenlabsMusicRequest(request({ description: 'a song about leaving home', style: 'indie folk, acoustic guitar', avoidStyle: 'drums', title: 'Northbound', durationS: 3 }), model).body;
    expect(folded).toEqual({ model_id: 'music_v1', prompt: 'a song about leaving home\nStyle: indie folk, acoustic guitar\nAvoid: drums\nTitle: Northbound', music_length_ms: 3_000, force_instrumental: false });
    expect(elevenlabsMusicRequest(request({ style: 'synthwave, 120 bpm', instrumental: true, durationS: null }), model).body).toEqual({ model_id: 'music_v1', prompt: 'synthwave, 120 bpm', force_instrumental: true });
    expect(elevenlabsMusicRequest(request({ description: 'calm piano', durationS: 600 }), model).body).toMatchObject({ music_length_ms: 600_000 });
  });

  it("lyrics are a composition plan: the style and what to avoid as global styles (one a tag), the lyrics' sections with their lines and local styles, the length shared by lines; no music_length_ms nor force_instrumental", () => {
    expect(elevenlabsMusicRequest(request({ lyrics, style: 'synthwave, female vocals', avoidStyle: 'metal, screaming', description: 'a night drive', durationS: 30 }), model)).toEqual({
      path: '/v1/music?output_format=mp3_44100_128',
      body: {
        model_id: 'music_v1',
        composition_plan: {
          positive_global_styles: ['synthwave', 'female vocals', 'a night drive'],
          negative_global_styles: ['metal', 'screaming'],
          sections: [
            // weights 2, 4 and 2 (an instrumental outro two lines' worth): 3 s each, the other 21 s shared by weight
            { section_name: 'Verse', positive_local_styles: [], negative_local_styles: [], duration_ms: 8_250, lines: ['City lights are calling', 'I hear them through the rain'] },
            { section_name: 'Chorus', positive_local_styles: ['anthemic', 'full band'], negative_local_styles: [], duration_ms: 13_500, lines: ['We run, we run', 'Until the morning', 'We run, we run', 'And start again'] },
            { section_name: 'Outro', positive_local_styles: [], negative_local_styles: [], duration_ms: 8_250, lines: [] },
          ],
        },
      },
    });
  });

  it('an instrumental song with lyrics is a forced-instrumental prompt (a plan cannot force it): its lyrics not sung', () => {
    expect(elevenlabsMusicRequest(request({ lyrics, style: 'ambient', instrumental: true, durationS: 20 }), model).body).toEqual({ model_id: 'music_v1', prompt: 'ambient', music_length_ms: 20_000, force_instrumental: true });
    expect(elevenlabsMusicRequest(request({ lyrics: '  \n ', description: 'x', durationS: 20 }), model).body).toMatchObject({ prompt: 'x' });
  });

  it('lyrics without tags are a verse a stanza (one stanza: Verse); lines before the first tag a Verse; lines over 200 characters cut at a space; names at 100 characters', () => {
    expect(lyricSections('one\ntwo\n\nthree\n').map((s) => [s.name, s.lines])).toEqual([
      ['Verse 1', ['one', 'two']],
      ['Verse 2', ['three']],
    ]);
    expect(lyricSections('one\ntwo').map((s) => [s.name, s.lines])).toEqual([['Verse', ['one', 'two']]]);
    expect(lyricSections('hello\n\n[Chorus]\nla\n\nla').map((s) => [s.name, s.lines])).toEqual([
      ['Verse', ['hello']],
      ['Chorus', ['la', 'la']],
    ]);
    const long = `${'word '.repeat(50)}end`;
    const cut = lyricSections(long)[0].lines;
    expect(cut.every((line) => line.length <= 200)).toBe(true);
    expect(cut.join(' ')).toBe(long);
    expect(lyricSections('x'.repeat(201))[0].lines.map((l) => l.length)).toEqual([200, 1]);
    expect(lyricSections(`[${'n'.repeat(150)}]\nla`)[0].name).toHaveLength(100);
    expect(lyricSections('[]\nla')[0].name).toBe('Section');
  });

  it('sections last 3 s to 120 s and the song exactly its length: too many are joined, one over 120 s split in two, at either side of each bound', () => {
    const sections = (n: number) => Array.from({ length: n }, (_, i) => ({ name: `S${i}`, styles: [], lines: ['a', 'b'] }));
    // 2 sections in 6 s: 3 s each; 3 in 6 s: two joined
    expect(timedSections(sections(2), 6_000).map((s) => s.duration_ms)).toEqual([3_000, 3_000]);
    expect(timedSections(sections(3), 6_000).map((s) => [s.section_name, s.duration_ms, s.lines])).toEqual([
      ['S0', 3_000, ['a', 'b', 'a', 'b']],
      ['S2', 3_000, ['a', 'b']],
    ]);
    expect(timedSections(sections(5), 3_000)).toHaveLength(1);
    // 2 sections in 240 s: 120 s each; in 241 s one is split
    expect(timedSections(sections(2), 240_000).map((s) => s.duration_ms)).toEqual([120_000, 120_000]);
    const split = timedSections(sections(2), 241_000);
    expect(split.map((s) => [s.section_name, s.lines])).toEqual([
      ['S0', ['a']],
      ['S0', ['b']],
      ['S1', ['a', 'b']],
    ]);
    expect(sum(split)).toBe(241_000);
    const tenMinutes = timedSections(lyricSections(lyrics), 600_000);
    expect(sum(tenMinutes)).toBe(600_000);
    expect(tenMinutes.every((s) => s.duration_ms >= 3_000 && s.duration_ms <= 120_000)).toBe(true);
    // uneven shares still sum exactly
    const odd = timedSections([{ name: 'A', styles: [], lines: ['1', '2', '3'] }, { name: 'B', styles: [], lines: ['1', '2', '3', '4', '5', '6', '7'] }], 10_001);
    expect(sum(odd)).toBe(10_001);
  });

  it('no length asked: four seconds a line (an instrumental section two lines), within 3 s to 10 minutes', () => {
    expect(sum(timedSections(lyricSections(lyrics), null))).toBe((2 + 4 + 2) * 4_000);
    expect(sum(timedSections(lyricSections('la\n'.repeat(400)), null))).toBe(600_000);
    expect(sum(timedSections([], null))).toBe(8_000);
  });

  it('the catalog: music_v1 sings lyrics, writes its own, makes instrumentals, continues nothing, 3-600 s, one take of MP3; registered for the elevenlabs protocol', () => {
    expect(ELEVENLABS_MUSIC_MODELS).toEqual([
      { id: 'music_v1', lyrics: true, description: true, instrumental: true, continueUpload: false, continueOwn: false, durationS: { min: 3, max: 600 }, takes: 1, lyricsMax: null, descriptionMax: 1_900, styleMax: 1_000, format: 'mp3' },
    ]);
    // the longest description and styles folded stay within the prompt's 4,100 characters
    const longest = elevenlabsMusicRequest(request({ description: 'd'.repeat(1_900), style: 's'.repeat(1_000), avoidStyle: 'a'.repeat(1_000), title: 't'.repeat(100) }), model).body;
    expect('prompt' in longest && longest.prompt.length).toBeLessThanOrEqual(4_100);
    expect(MUSIC_VENDORS).toContain(ElevenLabsMusicVendor);
    expect(ELEVENLABS.operations).toEqual(['speech', 'music', 'stems']);
    expect(ELEVENLABS.groups).toBeUndefined();
  });
});

describe("ElevenLabs Music's errors and answers, read", () => {
  it('bad_prompt and bad_composition_plan are content refusals carrying its suggestion (none for harmful content)', () => {
    const prompt = elevenlabsRefusal(400, { detail: { status: 'bad_prompt', message: 'The prompt references copyrighted material.', data: { prompt_suggestion: 'An upbeat pop song' } } })!;
    expect([prompt.kind, prompt.status, prompt.message, refusesContent('elevenlabs', prompt.message)]).toEqual([
      'request',
      400,
      "the upstream's moderation refused the text: The prompt references copyrighted material. (bad_prompt); it suggests: An upbeat pop song",
      true,
    ]);
    const plan = elevenlabsRefusal(400, { detail: { status: 'bad_composition_plan', message: 'copyrighted', data: { composition_plan_suggestion: { positive_global_styles: ['pop', 'synths'], negative_global_styles: [], sections: [] } } } })!;
    expect([plan.message, refusesContent('elevenlabs', plan.message)]).toEqual(["the upstream's moderation refused the text: copyrighted (bad_composition_plan); it suggests: styles pop, synths", true]);
    const harmful = elevenlabsRefusal(400, { detail: { status: 'bad_prompt', message: 'Your prompt appears to have violated our Terms of Service.' } })!;
    expect(harmful.message).toBe("the upstream's moderation refused the text: Your prompt appears to have violated our Terms of Service. (bad_prompt)");
    // a suggestion of another type is read as none; a validation error is no content refusal
    expect(elevenlabsError({ detail: { status: 'bad_prompt', message: 'm', data: { prompt_suggestion: 7 } } })).toEqual({ status: 'bad_prompt', message: 'm' });
    const invalid = elevenlabsRefusal(422, { detail: [{ loc: ['body', 'composition_plan', 'sections', 0, 'duration_ms'], msg: 'Input should be less than or equal to 120000' }] })!;
    expect([invalid.kind, invalid.message, refusesContent('elevenlabs', invalid.message)]).toEqual(['request', 'composition_plan.sections.0.duration_ms: Input should be less than or equal to 120000 (validation_error)', false]);
  });

  it('the answer is the song if it is MP3 (its song-id kept); an empty body, JSON or WAV under 200 is unusable', async () => {
    const real = await speechLike('mp3', 1, 44_100, 128);
    expect(await readElevenLabsSong({ body: real, headers: { 'content-type': 'audio/mpeg', 'song-id': 'song-1' } })).toEqual({ made: [{ upstreamId: 'song-1', audio: { bytes: real, format: 'mp3' } }] });
    expect(await readElevenLabsSong({ body: real, headers: {} })).toEqual({ made: [{ audio: { bytes: real, format: 'mp3' } }] });
    await expect(readElevenLabsSong({ body: Buffer.alloc(0), headers: { 'content-type': 'audio/mpeg' } })).rejects.toThrow(UnusableAnswer);
    await expect(readElevenLabsSong({ body: Buffer.from('{"detail":"x"}'), headers: { 'content-type': 'application/json' } })).rejects.toThrow(UnusableAnswer);
    const wav = await speechLike('wav', 1, 44_100);
    await expect(readElevenLabsSong({ body: wav, headers: {} })).rejects.toThrow(/wav audio/);
  });
});

describe("ElevenLabs' music adapter against the ElevenLabs fake (the real UpstreamClient, no app)", () => {
  let fake: FakeElevenLabs;
  let account: VendorAccount;
  const vendor = new ElevenLabsMusicVendor(loopbackUpstreamClient());
  const compose = (over: Partial<MusicRequest> = {}, on = account) => vendor.create(on, { request: request(over), model, taskId: 'task-1' });
  const failure = (over: Partial<MusicRequest> = {}, on = account) => compose(over, on).then(() => null, (err: unknown) => err);
  beforeAll(async () => {
    fake = await startFakeElevenLabs('xi-music');
    account = { baseUrl: fake.url, auth: ELEVENLABS.auth({ api_key: 'xi-music' }) };
  });
  afterAll(() => fake.close());
  beforeEach(() => {
    fake.music.length = 0;
    for (const k of Object.keys(fake.knobs)) delete (fake.knobs as Record<string, unknown>)[k];
  });

  it('a description makes one MP3 lasting what was asked, its song-id kept; the fake received the mapped body', async () => {
    const answer = await compose({ description: 'A chill lo-fi beat', durationS: 7 });
    expect('made' in answer).toBe(true);
    const [clip] = 'made' in answer ? answer.made : [];
    expect(clip.audio?.format).toBe('mp3');
    expect(Math.abs((await decodedSeconds(clip.audio!.bytes, 'mp3')) - 7)).toBeLessThan(0.1);
    expect(fake.music).toEqual([{ route: 'compose', outputFormat: 'mp3_44100_128', body: { model_id: 'music_v1', prompt: 'A chill lo-fi beat', music_length_ms: 7_000, force_instrumental: false }, status: 200, seconds: 7, songId: clip.upstreamId }]);
    expect([vendor.protocol, vendor.minPollS]).toEqual(['elevenlabs', 0]);
  });

  it('lyrics go as a composition plan the fake accepts, the song lasting the sections together', async () => {
    const answer = await compose({ lyrics, style: 'synthwave', durationS: 9 });
    const [clip] = 'made' in answer ? answer.made : [];
    expect(Math.abs((await decodedSeconds(clip.audio!.bytes, 'mp3')) - 9)).toBeLessThan(0.1);
    expect(fake.music.map((r) => [r.status, r.seconds, Object.keys(r.body).sort()])).toEqual([[200, 9, ['composition_plan', 'model_id']]]);
  });

  it('the bounds the fake checks as ElevenLabs does: 3 s and 10 minutes taken (a prompt and a plan), each section within 3-120 s, lines within 200', async () => {
    // the body is checked before the credits: a valid one is refused for quota (401), an invalid one would be a 422
    fake.knobs.quotaExceeded = true;
    for (const over of [{ description: 'x', durationS: 3 }, { description: 'x', durationS: 600 }, { lyrics, durationS: 3 }, { lyrics: `[Verse]\n${'la la '.repeat(60)}\n[Chorus]\nhey`, durationS: 600 }]) {
      expect(await failure(over)).toMatchObject({ constructor: UpstreamRefused, kind: 'account', status: 401 });
    }
    expect(fake.music.map((r) => r.status)).toEqual([401, 401, 401, 401]);
  });

  it("its failures as the relay reads them: 5xx and 429 busy, quota_exceeded the account's, a bad key the credentials', bad_prompt and bad_composition_plan content refusals with the suggestion", async () => {
    fake.knobs.serverError = 1;
    expect(await failure({ description: 'x' })).toBeInstanceOf(UpstreamBusy);
    fake.knobs.rateLimited = 1;
    expect(await failure({ description: 'x' })).toBeInstanceOf(UpstreamBusy);
    expect(await failure({ description: 'x' }, { baseUrl: fake.url, auth: ELEVENLABS.auth({ api_key: 'xi-wrong' }) })).toMatchObject({ constructor: UpstreamRefused, kind: 'auth', status: 401 });
    fake.knobs.musicRefusal = 'copyright';
    const prompt = (await failure({ description: 'a song like a famous band' })) as UpstreamRefused;
    expect([prompt.kind, prompt.status, refusesContent('elevenlabs', prompt.message), prompt.message]).toEqual([
      'request',
      400,
      true,
      "the upstream's moderation refused the text: The prompt references copyrighted material. (bad_prompt); it suggests: An upbeat pop song with bright synths and a catchy chorus",
    ]);
    const plan = (await failure({ lyrics })) as UpstreamRefused;
    expect([plan.kind, refusesContent('elevenlabs', plan.message), plan.message]).toEqual(['request', true, "the upstream's moderation refused the text: The composition plan references copyrighted material. (bad_composition_plan); it suggests: styles upbeat pop, bright synths"]);
    fake.knobs.musicRefusal = 'harmful';
    const harmful = (await failure({ description: 'x' })) as UpstreamRefused;
    expect([refusesContent('elevenlabs', harmful.message), harmful.message.includes('suggests')]).toEqual([true, false]);
  });
});

/** A stream the SDK answers, read whole. */
async function bytesOf(stream: ReadableStream<Uint8Array>): Promise<Buffer> {
  const chunks: Buffer[] = [];
  for await (const chunk of stream as unknown as AsyncIterable<Uint8Array>) chunks.push(Buffer.from(chunk));
  return Buffer.concat(chunks);
}

/**
 * The fake's music routes are what ElevenLabs' own SDK expects: `music.compose` (a prompt, a composition plan),
 * `.stream` and `.compositionPlan.create` get what the SDK reads, in ElevenLabs' words, and its refusals are the
 * SDK's errors with `{detail: {status, message, data}}`. No gateway: the SDK and the fake alone.
 */
describe("the ElevenLabs fake's music, driven by ElevenLabs' SDK", () => {
  let fake: FakeElevenLabs;
  let elevenlabs: ElevenLabsClient;
  beforeAll(async () => {
    fake = await startFakeElevenLabs('xi-sdk');
    elevenlabs = new ElevenLabsClient({ apiKey: 'xi-sdk', baseUrl: fake.url, maxRetries: 0 });
  });
  afterAll(() => fake.close());
  beforeEach(() => {
    fake.music.length = 0;
    for (const k of Object.keys(fake.knobs)) delete (fake.knobs as Record<string, unknown>)[k];
  });

  it("music.compose as its quickstart: a prompt and musicLengthMs get a decodable MP3 of that length; the body in ElevenLabs' words", async () => {
    const audio = await bytesOf(await elevenlabs.music.compose({ prompt: 'A chill lo-fi hip hop beat with jazzy piano chords', musicLengthMs: 5_000, modelId: 'music_v1', outputFormat: 'mp3_44100_128' }));
    expect(await probedAudio(audio)).toEqual({ channels: 1, sampleRate: 44_100 });
    expect(Math.abs((await decodedSeconds(audio, 'mp3')) - 5)).toBeLessThan(0.1);
    expect(fake.music.map((r) => [r.route, r.outputFormat, r.body, r.status])).toEqual([
      ['compose', 'mp3_44100_128', { prompt: 'A chill lo-fi hip hop beat with jazzy piano chords', music_length_ms: 5_000, model_id: 'music_v1' }, 200],
    ]);
  });

  it('a composition plan made by compositionPlan.create composes a song lasting its sections; .stream answers the same way', async () => {
    const plan = await elevenlabs.music.compositionPlan.create({ prompt: 'synthwave, night drive, female vocals', musicLengthMs: 12_000 });
    expect(plan).toMatchObject({ positiveGlobalStyles: ['synthwave', 'night drive', 'female vocals'], negativeGlobalStyles: [] });
    const sections = (plan as { sections: { durationMs: number }[] }).sections;
    expect(sections.reduce((total, s) => total + s.durationMs, 0)).toBe(12_000);
    const song = await bytesOf(await elevenlabs.music.compose({ compositionPlan: plan }));
    expect(Math.abs((await decodedSeconds(song, 'mp3')) - 12)).toBeLessThan(0.1);
    const streamed = await bytesOf(await elevenlabs.music.stream({ prompt: 'ambient pads', musicLengthMs: 4_000, forceInstrumental: true }));
    expect(Math.abs((await decodedSeconds(streamed, 'mp3')) - 4)).toBeLessThan(0.1);
    expect(fake.music.map((r) => [r.route, r.status, r.seconds])).toEqual([
      ['plan', 200, undefined],
      ['compose', 200, 12],
      ['stream', 200, 4],
    ]);
    expect(fake.music[1].body.composition_plan).toMatchObject({ positive_global_styles: ['synthwave', 'night drive', 'female vocals'], negative_global_styles: [] });
  });

  it("the adapter's composition plan, sent by the SDK, is taken as it is", async () => {
    const { body } = elevenlabsMusicRequest(request({ lyrics, style: 'synthwave', durationS: 6 }), model);
    const plan = 'composition_plan' in body ? body.composition_plan : null;
    const song = await bytesOf(
      await elevenlabs.music.compose({
        modelId: 'music_v1',
        compositionPlan: {
          positiveGlobalStyles: plan!.positive_global_styles,
          negativeGlobalStyles: plan!.negative_global_styles,
          sections: plan!.sections.map((s) => ({ sectionName: s.section_name, positiveLocalStyles: s.positive_local_styles, negativeLocalStyles: s.negative_local_styles, durationMs: s.duration_ms, lines: s.lines })),
        },
      }),
    );
    expect(Math.abs((await decodedSeconds(song, 'mp3')) - 6)).toBeLessThan(0.1);
    expect(fake.music[0].body).toEqual(body);
  });

  it("refuses as ElevenLabs does: the SDK's errors carry {detail: {status, message, data}} and FastAPI's 422s", async () => {
    const refused = (call: () => Promise<unknown>) =>
      call().then(
        () => null,
        (err: unknown) => (err instanceof ElevenLabsError ? [err.statusCode, err.body] : err),
      );
    fake.knobs.musicRefusal = 'copyright';
    expect(await refused(() => elevenlabs.music.compose({ prompt: 'a song like a famous band' }))).toEqual([
      400,
      { detail: { status: 'bad_prompt', message: 'The prompt references copyrighted material.', data: { prompt_suggestion: 'An upbeat pop song with bright synths and a catchy chorus' } } },
    ]);
    delete fake.knobs.musicRefusal;
    const both = (await refused(() => elevenlabs.music.compose({ prompt: 'x', compositionPlan: { positiveGlobalStyles: [], negativeGlobalStyles: [], sections: [] } }))) as [number, { detail: { loc: unknown[] }[] }];
    expect([both[0], both[1].detail[0].loc]).toEqual([422, ['body']]);
    const long = (await refused(() => elevenlabs.music.compose({ prompt: 'x', musicLengthMs: 600_001 }))) as [number, { detail: { loc: unknown[]; msg: string }[] }];
    expect([long[0], long[1].detail[0].loc, long[1].detail[0].msg]).toEqual([422, ['body', 'music_length_ms'], 'Input should be less than or equal to 600000']);
    const section = (await refused(() =>
      elevenlabs.music.compose({ compositionPlan: { positiveGlobalStyles: [], negativeGlobalStyles: [], sections: [{ sectionName: 'Verse', positiveLocalStyles: [], negativeLocalStyles: [], durationMs: 2_999, lines: [] }] } }),
    )) as [number, { detail: { loc: unknown[] }[] }];
    expect([section[0], section[1].detail[0].loc]).toEqual([422, ['body', 'composition_plan', 'sections', 0, 'duration_ms']]);
    Object.assign(fake.knobs, { quotaExceeded: true });
    expect(await refused(() => elevenlabs.music.compose({ prompt: 'x', musicLengthMs: 3_000 }))).toMatchObject([401, { detail: { status: 'quota_exceeded' } }]);
    const stranger = new ElevenLabsClient({ apiKey: 'xi-wrong', baseUrl: fake.url, maxRetries: 0 });
    expect(await refused(() => stranger.music.compose({ prompt: 'x' }))).toEqual([401, { detail: { status: 'invalid_api_key', message: 'Invalid API key' } }]);
  });
});
