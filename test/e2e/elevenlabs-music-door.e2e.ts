import { ElevenLabs, ElevenLabsClient, ElevenLabsError } from '@elevenlabs/elevenlabs-js';
import { decodeMono } from '../support/media.js';
import { api, queryDb, startTestApp, type TestApp } from '../support/test-app.js';

const RATE = 44100;
const ADMIN = 'admin-secret-elevenlabs-door';

/** The bytes of the SDK's streamed answer. */
async function bytesOf(stream: ReadableStream<Uint8Array>): Promise<Buffer> {
  return Buffer.from(await new Response(stream).arrayBuffer());
}

/** Seconds of decoded audio (every sample decoded: bytes that do not decode throw). */
async function secondsOf(bytes: Buffer): Promise<number> {
  return (await decodeMono(bytes, 'mp3')).length / RATE;
}

/** What the SDK threw: its status and body. */
async function refusal(promise: Promise<unknown>): Promise<{ status: number | undefined; body: any; error: ElevenLabsError }> {
  try {
    await promise;
  } catch (err) {
    if (err instanceof ElevenLabsError) return { status: err.statusCode, body: err.body, error: err };
    throw err;
  }
  throw new Error('the request was not refused');
}

/**
 * ElevenLabs' music door in the sandbox (offline): ElevenLabs' official JS SDK, its baseUrl `<app>/elevenlabs` and
 * the team's key as its apiKey (sent in xi-api-key), composes songs that decode and last what was asked, from a
 * prompt and from a composition plan; the tasks are music tasks (GET /music-a/fetch shows what was asked); bad input
 * is a 422 in ElevenLabs' validation shape naming the field; no key or a wrong key is a 401 in ElevenLabs' shape.
 */
describe("music: ElevenLabs' door with its official SDK (sandbox)", () => {
  let t: TestApp;
  let key: string;
  let client: ElevenLabsClient;

  beforeAll(async () => {
    t = await startTestApp({ MUSIC_PROVIDER: 'sandbox', MUSIC_SANDBOX_DURATION_S: '4', ADMIN_API_KEY: ADMIN });
    key = await t.createKey('team-elevenlabs');
    client = new ElevenLabsClient({ apiKey: key, baseUrl: `${t.url}/elevenlabs`, maxRetries: 0 });
  }, 60_000);
  afterAll(() => t?.close());

  const fetchTask = async (id: string) => (await api(t.url, 'GET', `/music-a/fetch/${id}`, { key })).body.data;

  it('composes from a prompt: audio/mpeg that decodes and lasts the music_length_ms asked (not the sandbox default), its task id in song-id', async () => {
    const { data, rawResponse } = await client.music.compose({ prompt: 'An upbeat lo-fi track about a morning bike ride', musicLengthMs: 7_000, modelId: 'music_v1', outputFormat: 'mp3_44100_128' }).withRawResponse();
    expect(rawResponse.headers.get('content-type')).toBe('audio/mpeg');
    const seconds = await secondsOf(await bytesOf(data));
    expect(seconds).toBeGreaterThan(6.9);
    expect(seconds).toBeLessThan(7.1);
    const songId = rawResponse.headers.get('song-id')!;
    const task = await fetchTask(songId);
    // the door's words in the music task's: the prompt as the description (the sandbox writes lyrics from it, as the vendor does), music_v1 named (the sandbox offers it), one take
    expect([task.status, task.data.length, task.data[0].model_name, task.data[0].metadata.gpt_description_prompt, task.data[0].metadata.duration]).toEqual(['SUCCESS', 1, 'music_v1', 'An upbeat lo-fi track about a morning bike ride', expect.closeTo(7, 1)]);
    expect(task.data[0].metadata.prompt).toMatch(/^\[Verse\]\n.*(upbeat|lo-fi|track|morning|bike|ride)/s);
    // its door is stored: the task list finds it by door, and not under the Suno-style door's name
    const byDoor = async (door: string) => ((await api(t.url, 'GET', `/tasks?door=${door}&kind=music`, { key })).body.tasks as { id: string }[]).map((x) => x.id);
    expect(await byDoor('elevenlabs')).toContain(songId);
    expect(await byDoor('suno')).not.toContain(songId);
  });

  it('streams the same song in chunks from /v1/music/stream', async () => {
    const res = await fetch(`${t.url}/elevenlabs/v1/music/stream`, { method: 'POST', headers: { 'xi-api-key': key, 'content-type': 'application/json' }, body: JSON.stringify({ prompt: 'Calm ambient pads', music_length_ms: 5_000, model_id: 'music_v1' }) });
    expect([res.status, res.headers.get('content-type'), res.headers.get('transfer-encoding'), res.headers.get('content-length')]).toEqual([200, 'audio/mpeg', 'chunked', null]);
    const seconds = await secondsOf(Buffer.from(await res.arrayBuffer()));
    expect(seconds).toBeGreaterThan(4.9);
    expect(seconds).toBeLessThan(5.1);
  });

  it("composes a composition plan: its sections' lines are the lyrics with [Section] tags, its global styles the style, its durations the length", async () => {
    const { data, rawResponse } = await client.music
      .compose({
        compositionPlan: {
          positiveGlobalStyles: ['lo-fi', 'piano'],
          negativeGlobalStyles: ['heavy metal'],
          sections: [
            { sectionName: 'Verse', positiveLocalStyles: ['soft'], negativeLocalStyles: [], durationMs: 4_000, lines: ['Morning light upon the bay', 'Wheels turning on the way'] },
            { sectionName: 'Chorus', positiveLocalStyles: [], negativeLocalStyles: ['drums'], durationMs: 5_000, lines: ['Hold the tide'] },
          ],
        },
      })
      .withRawResponse();
    const seconds = await secondsOf(await bytesOf(data));
    expect(seconds).toBeGreaterThan(8.9);
    expect(seconds).toBeLessThan(9.1);
    const meta = (await fetchTask(rawResponse.headers.get('song-id')!)).data[0].metadata;
    expect([meta.prompt, meta.tags, meta.negative_tags]).toEqual(['[Verse: soft]\nMorning light upon the bay\nWheels turning on the way\n\n[Chorus: no drums]\nHold the tide', 'lo-fi, piano', 'heavy metal']);
  });

  it('makes an instrumental when force_instrumental is true (and a song with vocals when it is not)', async () => {
    const instrumental = await client.music.compose({ prompt: 'Calm ambient pads', musicLengthMs: 3_000, forceInstrumental: true }).withRawResponse();
    expect(await secondsOf(await bytesOf(instrumental.data))).toBeGreaterThan(2.9);
    const sung = await client.music.compose({ prompt: 'A folk song about rivers', musicLengthMs: 3_000 }).withRawResponse();
    await bytesOf(sung.data);
    const [a, b] = await Promise.all([instrumental, sung].map((r) => queryDb<{ params: { instrumental: boolean } }>(t.db, `SELECT params FROM tasks WHERE id = $1`, [r.rawResponse.headers.get('song-id')])));
    expect([a[0].params.instrumental, b[0].params.instrumental]).toEqual([true, false]);
  });

  it('refuses bad input with a 422 in ElevenLabs\' validation shape, naming the field (the SDK throws UnprocessableEntityError)', async () => {
    const short = await refusal(client.music.compose({ prompt: 'x', musicLengthMs: 2_999 }));
    expect(short.status).toBe(422);
    expect(short.error).toBeInstanceOf(ElevenLabs.UnprocessableEntityError);
    expect(short.body.detail[0]).toEqual(expect.objectContaining({ loc: ['body', 'music_length_ms'], type: 'greater_than_equal', msg: expect.stringContaining('music_length_ms must be a whole number from 3000 to 600000') }));
    const long = await refusal(client.music.compose({ prompt: 'x', musicLengthMs: 600_001 }));
    expect([long.status, long.body.detail[0].loc]).toEqual([422, ['body', 'music_length_ms']]);
    const neither = await refusal(client.music.compose({}));
    expect([neither.status, neither.body.detail[0].loc, neither.body.detail[0].msg]).toEqual([422, ['body', 'prompt'], expect.stringContaining('prompt or composition_plan is required')]);
    const both = await refusal(client.music.compose({ prompt: 'x', compositionPlan: { positiveGlobalStyles: [], negativeGlobalStyles: [], sections: [] } }));
    expect([both.status, both.body.detail[0].loc]).toEqual([422, ['body', 'composition_plan']]);
    const line = await refusal(
      client.music.compose({ compositionPlan: { positiveGlobalStyles: [], negativeGlobalStyles: [], sections: [{ sectionName: 'Verse', positiveLocalStyles: [], negativeLocalStyles: [], durationMs: 3_000, lines: ['x'.repeat(201)] }] } }),
    );
    expect([line.status, line.body.detail[0].loc]).toEqual([422, ['body', 'composition_plan', 'sections', 0, 'lines']]);
    const format = await api(t.url, 'POST', '/elevenlabs/v1/music?output_format=pcm_44100', { headers: { 'xi-api-key': key }, body: { prompt: 'x' } });
    expect([format.status, format.body.detail[0].loc, format.body.detail[0].msg]).toEqual([422, ['query', 'output_format'], expect.stringContaining('MP3 only')]);
    const plan = await api(t.url, 'POST', '/elevenlabs/v1/music', { headers: { 'xi-api-key': key }, body: { composition_plan: { positive_global_styles: [], negative_global_styles: [], sections: [] }, force_instrumental: true } });
    expect([plan.status, plan.body.detail[0].loc]).toEqual([422, ['body', 'force_instrumental']]);
    // nothing was submitted for any of them
    expect((await queryDb<{ n: number }>(t.db, `SELECT count(*)::int AS n FROM tasks WHERE owner = 'team-elevenlabs'`))[0].n).toBe(5);
  });

  it('reads a JSON null as the field left out, as ElevenLabs does (a plan with prompt and music_length_ms null is composed)', async () => {
    const plan = { positive_global_styles: ['lo-fi'], negative_global_styles: [], sections: [{ section_name: 'Verse', positive_local_styles: [], negative_local_styles: [], duration_ms: 3_000, lines: ['Morning light'] }] };
    const res = await fetch(`${t.url}/elevenlabs/v1/music`, { method: 'POST', headers: { 'xi-api-key': key, 'content-type': 'application/json' }, body: JSON.stringify({ prompt: null, composition_plan: plan, music_length_ms: null, force_instrumental: null, model_id: null }) });
    expect([res.status, res.headers.get('content-type')]).toEqual([200, 'audio/mpeg']);
    expect(await secondsOf(Buffer.from(await res.arrayBuffer()))).toBeGreaterThan(2.9);
    // and null for both is neither
    const neither = await api(t.url, 'POST', '/elevenlabs/v1/music', { key, body: { prompt: null, composition_plan: null } });
    expect([neither.status, neither.body.detail[0].loc]).toEqual([422, ['body', 'prompt']]);
  });

  it('makes the shortest length, 3,000 ms (its other side, 2,999, refused above; 600,000 taken: the unit test of the body)', async () => {
    const { data } = await client.music.compose({ prompt: 'A short sting', musicLengthMs: 3_000 }).withRawResponse();
    const seconds = await secondsOf(await bytesOf(data));
    expect(seconds).toBeGreaterThan(2.9);
    expect(seconds).toBeLessThan(3.1);
  });

  it("credits that cannot cover the song: 401 quota_exceeded at once, as ElevenLabs answers it (its SDK, retrying as by default, asks once); the next month's start in Retry-After", async () => {
    const poor = await t.createKey('team-elevenlabs-poor');
    expect((await api(t.url, 'PUT', '/admin/owners/team-elevenlabs-poor/limits', { key: ADMIN, body: { monthly_credits: 0 } })).status).toBe(200);
    const before = (await queryDb<{ n: number }>(t.db, `SELECT count(*)::int AS n FROM tasks WHERE owner = 'team-elevenlabs-poor'`))[0].n;
    let asked = 0;
    const counting: typeof fetch = (input, init) => {
      asked++;
      return fetch(input, init);
    };
    const refused = await refusal(new ElevenLabsClient({ apiKey: poor, baseUrl: `${t.url}/elevenlabs`, fetch: counting }).music.compose({ prompt: 'x', musicLengthMs: 3_000 }));
    expect([refused.status, refused.body.detail.status, asked]).toEqual([401, 'quota_exceeded', 1]);
    const raw = await api(t.url, 'POST', '/elevenlabs/v1/music', { key: poor, body: { prompt: 'x', music_length_ms: 3_000 } });
    expect([raw.status, Number(raw.headers.get('retry-after'))]).toEqual([401, expect.any(Number)]);
    expect(Number(raw.headers.get('retry-after'))).toBeGreaterThan(0);
    expect((await queryDb<{ n: number }>(t.db, `SELECT count(*)::int AS n FROM tasks WHERE owner = 'team-elevenlabs-poor'`))[0].n).toBe(before);
  });

  it("refuses no key and a wrong key with 401 in ElevenLabs' shape, before anything is submitted; Bearer works too", async () => {
    const none = await api(t.url, 'POST', '/elevenlabs/v1/music', { body: { prompt: 'x', music_length_ms: 3_000 } });
    expect([none.status, none.body.detail.status, none.body.detail.message]).toEqual([401, 'needs_authorization', expect.stringContaining('xi-api-key')]);
    const wrong = await refusal(new ElevenLabsClient({ apiKey: `mgw_${'a'.repeat(48)}`, baseUrl: `${t.url}/elevenlabs`, maxRetries: 0 }).music.compose({ prompt: 'x', musicLengthMs: 3_000 }));
    expect([wrong.status, wrong.body.detail.status]).toEqual([401, 'invalid_api_key']);
    const malformed = await api(t.url, 'POST', '/elevenlabs/v1/music', { headers: { 'xi-api-key': 'sk_not-ours' }, body: { prompt: 'x' } });
    expect([malformed.status, malformed.body.detail.status]).toEqual([401, 'invalid_api_key']);
    const differing = await api(t.url, 'POST', '/elevenlabs/v1/music', { key, headers: { 'xi-api-key': `mgw_${'b'.repeat(48)}` }, body: { prompt: 'x' } });
    expect([differing.status, differing.body.detail.message]).toEqual([401, expect.stringContaining('different keys')]);
    // xi-api-key is this door's only: another route does not read it
    const elsewhere = await api(t.url, 'GET', '/tasks', { headers: { 'xi-api-key': key } });
    expect(elsewhere.status).toBe(401);
    const before = (await queryDb<{ n: number }>(t.db, `SELECT count(*)::int AS n FROM tasks`))[0].n;
    const bearer = await fetch(`${t.url}/elevenlabs/v1/music`, { method: 'POST', headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' }, body: JSON.stringify({ prompt: 'x', music_length_ms: 3_000 }) });
    expect([bearer.status, bearer.headers.get('content-type')]).toEqual([200, 'audio/mpeg']);
    await bearer.arrayBuffer();
    expect((await queryDb<{ n: number }>(t.db, `SELECT count(*)::int AS n FROM tasks`))[0].n).toBe(before + 1);
  });
});
