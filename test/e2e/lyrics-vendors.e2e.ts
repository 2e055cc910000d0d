import { pollUntil } from '../support/poll.js';
import { api, startTestApp, type TestApp } from '../support/test-app.js';
import { startFakeMinimax, type FakeMinimax } from '../support/vendors/minimax/minimax.fake.js';
import { startFakeMureka, type FakeMureka } from '../support/vendors/mureka/mureka.fake.js';
import { startFakeMusicAggregator, type FakeMusicAggregator } from '../support/vendors/suno-aggregator/suno-aggregator.fake.js';
import { startFakeSunoapi, type FakeSunoapi } from '../support/vendors/sunoapi/sunoapi.fake.js';

const ADMIN = 'admin-secret-lyrics-vendors-0123';
const KEY = 'vendor-lyrics-key-0123456789';

/**
 * Lyrics across vendors behind the Suno-style door: one request served in turn by each vendor that writes them
 * (the others disabled), each asked in its own words, the lyrics in the task's record; a content refusal ends
 * the task with the vendor's words.
 */
describe('lyrics across vendors behind the Suno-style door', () => {
  let t: TestApp;
  let key: string;
  let suno: FakeMusicAggregator;
  let sunoapi: FakeSunoapi;
  let minimax: FakeMinimax;
  let mureka: FakeMureka;
  const channels: Record<string, string> = {};

  beforeAll(async () => {
    [suno, sunoapi, minimax, mureka] = await Promise.all([startFakeMusicAggregator(KEY), startFakeSunoapi(KEY), startFakeMinimax(KEY), startFakeMureka(KEY)]);
    t = await startTestApp({ LYRICS_PROVIDER: 'relay', ADMIN_API_KEY: ADMIN, CHANNEL_SECRET_KEY: 'c'.repeat(64), OUTBOUND_ALLOW_HOSTS: '127.0.0.1', ALLOW_PRIVATE_URLS: 'true', RELAY_POLL_MS: '100', LYRICS_TIMEOUT_S: '60' });
    key = await t.createKey('team-lyrics-vendors');
    const add = async (name: string, protocol: string, baseUrl: string) => {
      const res = await api(t.url, 'POST', '/admin/channels', { key: ADMIN, body: { name, protocol, operations: ['lyrics'], base_url: baseUrl, credentials: { api_key: KEY } } });
      expect([name, res.status, res.body.message]).toEqual([name, 201, undefined]);
      channels[name] = res.body.id as string;
    };
    await add('suno', 'suno', `${suno.url}/suno`);
    await add('sunoapi', 'sunoapi', sunoapi.url);
    await add('minimax', 'minimax', minimax.url);
    await add('mureka', 'mureka', mureka.url);
  }, 120_000);
  afterAll(async () => {
    await t.close();
    await Promise.all([suno.close(), sunoapi.close(), minimax.close(), mureka.close()]);
  });

  /** Only these channels enabled. */
  const only = async (...names: string[]) => {
    for (const [name, id] of Object.entries(channels)) expect((await api(t.url, 'POST', `/admin/channels/${id}/${names.includes(name) ? 'enable' : 'disable'}`, { key: ADMIN })).status).toBe(200);
  };
  const submit = async (body: Record<string, unknown>): Promise<string> => {
    const res = await api(t.url, 'POST', '/music-a/submit/lyrics', { key, body });
    expect([res.status, res.body.code, res.body.message]).toEqual([200, 'success', '']);
    return res.body.data as string;
  };
  const ended = async (id: string) =>
    (await pollUntil(() => api(t.url, 'GET', `/music-a/fetch/${id}`, { key }), (r) => r.body.data?.status === 'SUCCESS' || r.body.data?.status === 'FAILURE', { timeoutMs: 60_000, what: `lyrics task ${id} to end` })).body.data;

  /** What each fake last received, in its own words. */
  const lastAsked: Record<string, () => unknown> = {
    suno: () => [...suno.lyrics.values()].at(-1)?.body,
    sunoapi: () => [...sunoapi.lyrics.values()].at(-1)?.body,
    minimax: () => minimax.musicCalls.filter((c) => c.path === '/v1/lyrics_generation').at(-1)?.body,
    mureka: () => mureka.lyricsAsked.at(-1),
  };

  it('one lyrics request is served by each vendor in turn, each asked in its own words; the lyrics come back in GET /music-a/fetch/{id}', async () => {
    const prompt = 'a lighthouse keeper waiting for the storm';
    const asked: Record<string, unknown> = {};
    for (const vendor of Object.keys(channels)) {
      await only(vendor);
      const task = await ended(await submit({ prompt }));
      expect([vendor, task.status, task.fail_reason, task.action, task.data.status]).toEqual([vendor, 'SUCCESS', '', 'LYRICS', 'complete']);
      // each vendor's lyrics carry the prompt's words, with their section tags, and a title
      expect([vendor, task.data.text]).toEqual([vendor, expect.stringContaining(vendor === 'mureka' ? `In the shadows of ${prompt}` : prompt)]);
      expect([vendor, /^\[(Verse|Intro|Chorus)\]$/m.test(task.data.text), task.data.title.length > 0]).toEqual([vendor, true, true]);
      // sunoapi.org's family writes two versions: both are kept, the first is the record's
      expect([vendor, task.data.versions?.length ?? 1]).toEqual([vendor, vendor === 'sunoapi' ? 2 : 1]);
      asked[vendor] = lastAsked[vendor]();
    }
    // each in its own vocabulary
    expect(asked).toEqual({
      suno: { prompt },
      sunoapi: { prompt, callBackUrl: 'https://example.com/callback' },
      minimax: { mode: 'write_full_song', prompt },
      mureka: { prompt },
    });
  }, 240_000);

  it('GET /models lists each vendor’s lyrics model with its prompt limit and versions; a prompt only some take goes to those (by a shared name too), one none takes is a 400 naming prompt', async () => {
    await only('sunoapi', 'minimax');
    const models = (await api(t.url, 'GET', '/models', { key })).body.models.filter((m: { operation: string }) => m.operation === 'lyrics');
    expect(models).toEqual(
      expect.arrayContaining([
        expect.objectContaining({ name: 'suno_lyrics', vendor: 'sunoapi', max_prompt_chars: 200, versions: 2 }),
        expect.objectContaining({ name: 'minimax-lyrics', vendor: 'minimax', max_prompt_chars: 2000, versions: 1 }),
        expect.objectContaining({ name: 'mureka-lyrics', vendor: 'mureka', max_prompt_chars: 1024, versions: 1 }),
      ]),
    );
    // 201 characters: past sunoapi.org's limit, within MiniMax's
    const before = sunoapi.lyrics.size;
    const long = `${'storm '.repeat(33)}sea`;
    expect([...long].length).toBe(201);
    const task = await ended(await submit({ prompt: long }));
    expect([task.status, sunoapi.lyrics.size]).toEqual(['SUCCESS', before]);
    expect(minimax.musicCalls.at(-1)?.body).toEqual({ mode: 'write_full_song', prompt: long });
    // suno_lyrics is Suno's lyrics through either aggregator shape: named, the prompt goes to the one whose limit takes it
    await only('sunoapi', 'suno');
    const named = await ended(await submit({ prompt: long, mv: 'suno_lyrics' }));
    expect([named.status, sunoapi.lyrics.size, [...suno.lyrics.values()].at(-1)?.body]).toEqual(['SUCCESS', before, { prompt: long }]);
    // a prompt no configured model takes is refused at the door, naming the field
    const res = await api(t.url, 'POST', '/music-a/submit/lyrics', { key, body: { prompt: `${long} `.repeat(10).trim(), mv: 'minimax-lyrics' } });
    expect([res.status, res.body.message]).toEqual([400, expect.stringMatching(/^prompt: the longest prompt the model minimax-lyrics takes is 2000 characters/)]);
  });

  it('a refusal for content ends the task with the vendor’s reason (sunoapi.org’s SENSITIVE_WORD_ERROR, MiniMax’s 1026)', async () => {
    await only('sunoapi');
    sunoapi.lyricsEnding = { kind: 'failure', status: 'SENSITIVE_WORD_ERROR', errorCode: 400, errorMessage: 'Content contains prohibited words' };
    try {
      const task = await ended(await submit({ prompt: 'something it will not write' }));
      expect([task.status, task.fail_reason]).toEqual(['FAILURE', expect.stringContaining('Content contains prohibited words (SENSITIVE_WORD_ERROR')]);
      expect(task.fail_reason).not.toMatch(/sl0000\w*task/);
    } finally {
      sunoapi.lyricsEnding = { kind: 'success' };
    }
    await only('minimax');
    minimax.minimaxKnobs.lyricsFail = { code: 1026, message: 'input new_sensitive' };
    const refused = await ended(await submit({ prompt: 'something it will not write either' }));
    expect([refused.status, refused.fail_reason]).toEqual(['FAILURE', expect.stringContaining('input new_sensitive (code 1026)')]);
  });
});
