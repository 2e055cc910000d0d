import { startServer, sendBytes, type TestServer } from '../support/http-server.js';
import { correlation, decodeFirstChannel, decodeMono, musicalWav, relativeError } from '../support/media.js';
import { pollUntil } from '../support/poll.js';
import { api, startTestApp, type TestApp } from '../support/test-app.js';
import { startFakeElevenLabs, type FakeElevenLabs } from '../support/vendors/elevenlabs/elevenlabs.fake.js';
import { startFakeGemini, type FakeGemini } from '../support/vendors/google/gemini.fake.js';
import { startFakeMinimax, type FakeMinimax } from '../support/vendors/minimax/minimax.fake.js';
import { startFakeMureka, type FakeMureka } from '../support/vendors/mureka/mureka.fake.js';
import { startFakeStableAudio, type FakeStableAudio } from '../support/vendors/stability/stable-audio.fake.js';
import { startFakeMusicAggregator, type FakeMusicAggregator } from '../support/vendors/suno-aggregator/suno-aggregator.fake.js';
import { startFakeSunoapi, type FakeSunoapi } from '../support/vendors/sunoapi/sunoapi.fake.js';

const ADMIN = 'admin-secret-0123456789';
const KEY = 'vendor-key-0123456789';
const SUBMIT = '/music-a/submit/music';

/**
 * Music across vendors behind the Suno-style door: one request served in turn by each vendor (the others
 * disabled), each asked in its own words; a duration where the model takes one; an upload continued by each
 * vendor that continues stored clips and joined to it; an aggregator that takes a song and fails it, the
 * song then made by another vendor, charged once.
 */
describe('music across vendors behind the Suno-style door', () => {
  let t: TestApp;
  let key: string;
  let suno: FakeMusicAggregator;
  let sunoapi: FakeSunoapi;
  let mureka: FakeMureka;
  let eleven: FakeElevenLabs;
  let minimax: FakeMinimax;
  let stable: FakeStableAudio;
  let gemini: FakeGemini;
  let files: TestServer;
  const channels: Record<string, string> = {};

  beforeAll(async () => {
    [suno, sunoapi, mureka, eleven, minimax, stable, gemini] = await Promise.all([
      startFakeMusicAggregator(KEY, 3),
      startFakeSunoapi(KEY, 3),
      startFakeMureka(KEY, 3),
      startFakeElevenLabs(KEY),
      startFakeMinimax(KEY),
      startFakeStableAudio(KEY),
      startFakeGemini(KEY),
    ]);
    minimax.minimaxKnobs.musicSeconds = 6;
    // a 30 s upload: a tone whose samples the joined song must keep up to the cut
    const upload = musicalWav(30);
    files = await startServer((_req, res) => sendBytes(res, 'audio/wav', upload));
    t = await startTestApp({ MUSIC_PROVIDER: 'relay', AUDIO_PROVIDER: 'sandbox', ADMIN_API_KEY: ADMIN, CHANNEL_SECRET_KEY: 'c'.repeat(64), OUTBOUND_ALLOW_HOSTS: '127.0.0.1', ALLOW_PRIVATE_URLS: 'true', RELAY_POLL_MS: '100', MUSIC_TIMEOUT_S: '120' });
    key = await t.createKey('team-music');
    const add = async (name: string, protocol: string, baseUrl: string) => {
      const res = await api(t.url, 'POST', '/admin/channels', { key: ADMIN, body: { name, protocol, operations: ['music'], base_url: baseUrl, credentials: { api_key: KEY } } });
      expect([name, res.status, res.body.message]).toEqual([name, 201, undefined]);
      channels[name] = res.body.id as string;
    };
    await add('suno', 'suno', `${suno.url}/suno`);
    await add('sunoapi', 'sunoapi', sunoapi.url);
    await add('mureka', 'mureka', mureka.url);
    await add('elevenlabs', 'elevenlabs', eleven.url);
    await add('minimax', 'minimax', minimax.url);
    await add('stability', 'stability', stable.url);
    await add('gemini', 'gemini', gemini.baseUrl);
  }, 120_000);
  afterAll(async () => {
    await t.close();
    await Promise.all([suno.close(), sunoapi.close(), mureka.close(), eleven.close(), minimax.close(), stable.close(), gemini.close(), files.close()]);
  });

  /** Only these channels enabled. */
  const only = async (...names: string[]) => {
    for (const [name, id] of Object.entries(channels)) expect((await api(t.url, 'POST', `/admin/channels/${id}/${names.includes(name) ? 'enable' : 'disable'}`, { key: ADMIN })).status).toBe(200);
  };
  const submit = async (body: Record<string, unknown>, path = SUBMIT): Promise<string> => {
    const res = await api(t.url, 'POST', path, { key, body });
    expect([res.status, res.body.code, res.body.message]).toEqual([200, 'success', '']);
    return res.body.data as string;
  };
  const ended = async (id: string) =>
    (await pollUntil(() => api(t.url, 'GET', `/music-a/fetch/${id}`, { key }), (r) => r.body.data?.status === 'SUCCESS' || r.body.data?.status === 'FAILURE', { timeoutMs: 90_000, what: `music task ${id} to end` })).body.data;
  const decoded = async (url: string) => decodeMono(Buffer.from(await (await fetch(url)).arrayBuffer()));
  const RATE = 44100;

  /** What each fake last received, in its own words. */
  const lastAsked: Record<string, () => Record<string, unknown> | undefined> = {
    suno: () => [...suno.music.values()].at(-1)?.body,
    sunoapi: () => [...sunoapi.music.values()].at(-1)?.body,
    mureka: () => [...mureka.tasks.values()].at(-1)?.body,
    elevenlabs: () => eleven.music.at(-1)?.body,
    minimax: () => minimax.musicCalls.filter((c) => c.path === '/v1/music_generation').at(-1)?.body,
    stability: () => stable.received.at(-1)?.fields,
    gemini: () => gemini.received.at(-1)?.body,
  };

  it('one new song (a description, instrumental) is served by each vendor in turn, each asked in its own words; the song stored decodes', async () => {
    const body = { gpt_description_prompt: 'a calm song about the sea at dawn', tags: 'ambient, piano', make_instrumental: true };
    const asked: Record<string, Record<string, unknown> | undefined> = {};
    for (const vendor of Object.keys(channels)) {
      await only(vendor);
      const id = await submit(body);
      const song = await ended(id);
      // a failure says why, as the operators' logs do (a GATEWAY_FAILURE's reason is only there)
      const why = song.status === 'SUCCESS' ? null : t.logs.lines.filter((l) => JSON.stringify(l).includes(id)).map((l) => `${String(l.level)} ${String(l.msg)} ${JSON.stringify(l.err ?? '')}`.slice(0, 600));
      expect([vendor, song.status, song.fail_reason || null, why]).toEqual([vendor, 'SUCCESS', null, null]);
      // a vendor that makes one take answers one clip; Suno's make two
      expect([vendor, song.data.length]).toEqual([vendor, ['suno', 'sunoapi', 'mureka'].includes(vendor) ? 2 : 1]);
      const audio = await decoded(song.data[0].audio_url);
      expect([vendor, audio.length / RATE > 1]).toEqual([vendor, true]);
      asked[vendor] = lastAsked[vendor]();
    }
    // each in its own vocabulary
    expect(asked.suno).toEqual(expect.objectContaining({ gpt_description_prompt: 'a calm song about the sea at dawn', make_instrumental: true, mv: 'chirp-v4' }));
    expect(asked.sunoapi).toEqual(expect.objectContaining({ customMode: false, instrumental: true, prompt: expect.stringContaining('calm song about the sea') }));
    expect(asked.mureka).toEqual(expect.objectContaining({ prompt: expect.stringContaining('calm song about the sea') }));
    expect(asked.elevenlabs).toEqual(expect.objectContaining({ prompt: expect.stringContaining('calm song about the sea'), force_instrumental: true, model_id: 'music_v1' }));
    expect(asked.minimax).toEqual(expect.objectContaining({ model: expect.stringMatching(/^music-/), is_instrumental: true }));
    expect(asked.stability).toEqual(expect.objectContaining({ prompt: expect.stringContaining('calm song about the sea'), model: 'stable-audio-2.5' }));
    expect(JSON.stringify(asked.gemini)).toContain('calm song about the sea');
  }, 240_000);

  it('a duration is made by the models that take one (ElevenLabs, Stable Audio), the song lasting it; none other is asked', async () => {
    for (const vendor of ['elevenlabs', 'stability']) {
      await only(vendor);
      const song = await ended(await submit({ gpt_description_prompt: 'a short jingle', make_instrumental: true, duration: 20 }));
      expect([vendor, song.status]).toEqual([vendor, 'SUCCESS']);
      const audio = await decoded(song.data[0].audio_url);
      expect([vendor, Math.abs(audio.length / RATE - 20) < 0.2]).toEqual([vendor, true]);
    }
    expect(eleven.music.at(-1)?.body).toEqual(expect.objectContaining({ music_length_ms: 20_000 }));
    expect(stable.received.at(-1)?.fields).toEqual(expect.objectContaining({ duration: '20' }));
    // a duration no configured model takes is refused, naming the field
    const res = await api(t.url, 'POST', SUBMIT, { key, body: { gpt_description_prompt: 'a long jingle', make_instrumental: true, duration: 601 } });
    expect([res.status, res.body.message]).toEqual([400, expect.stringMatching(/^duration must be/)]);
    const lyrics = await api(t.url, 'POST', SUBMIT, { key, body: { prompt: '[Verse]\nla la', make_instrumental: false, duration: 200, mv: 'stable-audio-2.5' } });
    expect([lyrics.status, lyrics.body.message]).toEqual([400, expect.stringMatching(/^prompt, make_instrumental, duration: model stable-audio-2.5 does not make/)]);
  });

  it('an aggregator that takes a song and then fails it: another vendor makes it, one charge, both attempts shown', async () => {
    await only('suno', 'elevenlabs');
    // the aggregator first (its priority), then ElevenLabs
    expect((await api(t.url, 'PATCH', `/admin/channels/${channels.suno}`, { key: ADMIN, body: { priority: 10 } })).status).toBe(200);
    suno.ending = { kind: 'failure', reason: 'generation failed upstream' };
    const used = async () => (await api(t.url, 'GET', '/admin/owners/team-music/limits', { key: ADMIN })).body.usage.credits_used as number;
    const before = await used();
    const song = await ended(await submit({ gpt_description_prompt: 'a song that fails over', make_instrumental: true }));
    suno.ending = { kind: 'success' };
    expect([song.status, song.data.length]).toEqual(['SUCCESS', 1]);
    const attempts = (await api(t.url, 'GET', `/admin/tasks/${song.task_id}/attempts`, { key: ADMIN })).body as { channel: string; outcome: string }[];
    expect(attempts.map((a) => [a.channel, a.outcome])).toEqual([
      ['suno', 'accepted'],
      ['suno', 'abandoned'],
      ['elevenlabs', 'accepted'],
    ]);
    expect((await used()) - before).toBe(10);
    // a refusal for its content ends the task with the vendor's words
    eleven.knobs.musicRefusal = 'harmful';
    await only('elevenlabs');
    const refused = await ended(await submit({ gpt_description_prompt: 'something it will not make', make_instrumental: true }));
    delete eleven.knobs.musicRefusal;
    expect([refused.status, refused.fail_reason]).toEqual(['FAILURE', expect.stringMatching(/violated|Terms of Service|bad_prompt/)]);
  });

  it("ElevenLabs' door: a request the vendor refuses is its 422 in the vendor's words, naming the field; the vendor asked once; a failed generation stays a 502", async () => {
    await only('elevenlabs');
    const asked = eleven.music.length;
    eleven.knobs.invalid = { loc: ['body', 'music_length_ms'], msg: 'Input should be less than or equal to 20000', type: 'less_than_equal' };
    const refused = await api(t.url, 'POST', '/elevenlabs/v1/music', { key, body: { prompt: 'a long ballad', music_length_ms: 25_000 } });
    expect([refused.status, refused.body.detail]).toEqual([
      422,
      [{ type: 'value_error', loc: ['body', 'music_length_ms'], msg: expect.stringMatching(/^music_length_ms: the music task \S+ failed: the upstream refused the music task: music_length_ms: Input should be less than or equal to 20000/) }],
    ]);
    expect(eleven.music.length - asked).toBe(1);
    // words that name no field of the door's: the 422 names the body
    eleven.knobs.invalid = { loc: ['query', 'seed'], msg: 'Input should be a valid integer', type: 'int_type' };
    const unnamed = await api(t.url, 'POST', '/elevenlabs/v1/music', { key, body: { prompt: 'a short jingle', music_length_ms: 5_000 } });
    expect([unnamed.status, unnamed.body.detail?.[0]?.loc]).toEqual([422, ['body']]);
    // the vendor's 500 is a failed generation (no other channel here): a 502 in ElevenLabs' shape
    eleven.knobs.serverError = 1;
    const failed = await api(t.url, 'POST', '/elevenlabs/v1/music', { key, body: { prompt: 'a short jingle', music_length_ms: 5_000 } });
    expect([failed.status, failed.body.detail?.status]).toEqual([502, 'upstream_failed']);
  });

  it("sunoapi.org's family requires a style and a title in custom mode: without tags a 400 naming tags (only it enabled); without a title it is sent one made up from the lyrics; a style to avoid goes only to models that take one", async () => {
    await only('sunoapi');
    const refused = await api(t.url, 'POST', SUBMIT, { key, body: { prompt: '[Verse]\nLanterns on the water', mv: 'V4_5' } });
    expect([refused.status, refused.body.message]).toEqual([400, expect.stringMatching(/^tags: .*no style given/)]);
    const song = await ended(await submit({ prompt: '[Verse]\nLanterns on the water', tags: 'folk', mv: 'V4_5' }));
    expect([song.status, lastAsked.sunoapi()]).toEqual(['SUCCESS', expect.objectContaining({ customMode: true, style: 'folk', title: 'Lanterns on the water', prompt: '[Verse]\nLanterns on the water' })]);
    // with another vendor enabled, the same request without tags goes there instead
    await only('sunoapi', 'elevenlabs');
    expect((await ended(await submit({ prompt: '[Verse]\nLanterns on the water' }))).status).toBe('SUCCESS');
    expect(JSON.stringify(lastAsked.elevenlabs())).toContain('Lanterns on the water');
    // a style to avoid is for the models that take one: Mureka's take none (named, a 400 naming negative_tags; else the song goes past it), ElevenLabs' does
    await only('mureka', 'elevenlabs');
    const avoid = { gpt_description_prompt: 'a calm song about the sea', tags: 'ambient', negative_tags: 'drums', make_instrumental: true };
    const unmade = await api(t.url, 'POST', SUBMIT, { key, body: { ...avoid, mv: 'mureka-7.6' } });
    expect([unmade.status, unmade.body.message]).toEqual([400, expect.stringMatching(/^negative_tags: model mureka-7.6 does not make .*style to avoid/)]);
    const murekaAsked = mureka.tasks.size;
    expect((await ended(await submit(avoid))).status).toBe('SUCCESS');
    expect([mureka.tasks.size, lastAsked.elevenlabs()]).toEqual([murekaAsked, expect.objectContaining({ prompt: expect.stringMatching(/drums/) })]);
  }, 120_000);

  it('a 30 s upload continued at its 12th second by each vendor that continues stored clips, then joined: the joined song holds the upload up to 12 s', async () => {
    await only();
    const upload = await submit({ url: `${files.url}/upload.wav` }, '/music-a/uploads/audio-url');
    const up = await ended(upload);
    expect(up.status).toBe('SUCCESS');
    const original = await decoded(up.data[0].audio_url);
    for (const vendor of ['sunoapi', 'mureka', 'stability']) {
      await only(vendor);
      const continued = await ended(await submit({ continue_clip_id: upload, continue_at: 12, gpt_description_prompt: 'carry on', tags: 'ambient', title: 'Tide', make_instrumental: true, ...(vendor === 'stability' ? { duration: 30 } : {}) }));
      expect([vendor, continued.status, continued.fail_reason || null]).toEqual([vendor, 'SUCCESS', null]);
      const joined = await ended(await submit({ clip_id: continued.data[0].id }, '/music-a/submit/concat'));
      expect([vendor, joined.status]).toEqual([vendor, 'SUCCESS']);
      // its first channel: the joined song is stereo where a vendor's take is, the mono upload copied to both channels
      const song = await decodeFirstChannel(Buffer.from(await (await fetch(joined.data[0].audio_url)).arrayBuffer()));
      // the upload's own samples up to the cut, within MP3's error, away from the 3 ms fade at the cut
      const cut = 12 * RATE - 200;
      expect([vendor, relativeError(song.subarray(0, cut), original.subarray(0, cut)) < 0.1]).toEqual([vendor, true]);
      expect([vendor, correlation(song.subarray(0, cut), original.subarray(0, cut)) > 0.99]).toEqual([vendor, true]);
      // and then what the vendor made, not the upload's own 12th second on
      expect([vendor, Math.abs(correlation(song.subarray(12 * RATE + 200, 13 * RATE), original.subarray(12 * RATE + 200, 13 * RATE))) < 0.5]).toEqual([vendor, true]);
    }
    // with only models that cannot continue a stored clip configured, the continuation is refused naming the field
    for (const name of ['sunoapi', 'mureka', 'stability']) expect((await api(t.url, 'DELETE', `/admin/channels/${channels[name]}`, { key: ADMIN })).status).toBe(200);
    const refused = await api(t.url, 'POST', SUBMIT, { key, body: { continue_clip_id: upload, continue_at: 12 } });
    expect([refused.status, refused.body.message]).toEqual([400, expect.stringMatching(/^continue_clip_id: /)]);
  }, 360_000);
});
