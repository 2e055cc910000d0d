import { correlation, decodeMono } from '../support/media.js';
import { pollUntil } from '../support/poll.js';
import { api, startTestApp, type TestApp } from '../support/test-app.js';
import { startFakeElevenLabs, type FakeElevenLabs } from '../support/vendors/elevenlabs/elevenlabs.fake.js';

const ADMIN = 'admin-secret-0123456789';
const KEY = 'xi-stems-0123456789';

/**
 * Stems relayed to ElevenLabs' stem separation: the clip stored here sent as the form's file, the stems of its
 * ZIP kept as clips; a channel whose separation fails gives the task to the next capable channel, charged once.
 */
describe('stems relayed to ElevenLabs: multipart with the clip, failover, one charge', () => {
  let t: TestApp;
  let key: string;
  let first: FakeElevenLabs;
  let second: FakeElevenLabs;
  const channels: Record<string, string> = {};

  beforeAll(async () => {
    [first, second] = await Promise.all([startFakeElevenLabs(KEY), startFakeElevenLabs(KEY)]);
    t = await startTestApp({ STEMS_PROVIDER: 'relay', MUSIC_PROVIDER: 'sandbox', MUSIC_SANDBOX_DURATION_S: '4', PRICE_STEMS: '3', ADMIN_API_KEY: ADMIN, CHANNEL_SECRET_KEY: 'c'.repeat(64), OUTBOUND_ALLOW_HOSTS: '127.0.0.1', RELAY_POLL_MS: '100' });
    key = await t.createKey('team-stems-relay');
    for (const [name, fake, priority] of [['first', first, 10], ['second', second, 0]] as const) {
      const res = await api(t.url, 'POST', '/admin/channels', { key: ADMIN, body: { name, protocol: 'elevenlabs', operations: ['stems'], base_url: fake.url, credentials: { api_key: KEY }, priority } });
      expect([name, res.status, res.body.message]).toEqual([name, 201, undefined]);
      channels[name] = res.body.id as string;
    }
  }, 120_000);
  afterAll(async () => {
    await t.close();
    await Promise.all([first.close(), second.close()]);
  });

  const submit = async (path: string, body: unknown): Promise<string> => {
    const res = await api(t.url, 'POST', path, { key, body });
    expect([res.status, res.body.code, res.body.message]).toEqual([200, 'success', '']);
    return res.body.data as string;
  };
  const ended = async (id: string) =>
    (await pollUntil(() => api(t.url, 'GET', `/music-a/fetch/${id}`, { key }), (r) => r.body.data?.status === 'SUCCESS' || r.body.data?.status === 'FAILURE', { timeoutMs: 90_000, what: `task ${id} to end` })).body.data;
  const download = async (url: string) => Buffer.from(await (await fetch(url)).arrayBuffer());
  const used = async () => (await api(t.url, 'GET', '/admin/owners/team-stems-relay/limits', { key: ADMIN })).body.usage.credits_used as number;

  it("the first channel's separation fails (500): the second makes it, sent the stored clip as its form's file with two_stems_v1; the stems decode and together are the clip; one charge, both attempts shown", async () => {
    const song = await ended(await submit('/music-a/submit/music', { gpt_description_prompt: 'a waltz for the harbour', make_instrumental: true }));
    expect(song.status).toBe('SUCCESS');
    const stored = await download(song.data[0].audio_url);
    first.knobs.serverError = 1;
    const before = await used();
    const task = await ended(await submit('/music-a/submit/stems', { clip_id: song.data[0].id }));
    expect([task.action, task.status, task.fail_reason]).toEqual(['STEMS', 'SUCCESS', '']);
    expect(task.data.map((c: any) => [c.title, c.metadata.type, c.metadata.stem_of])).toEqual([
      ['vocals', 'stem', song.data[0].id],
      ['instrumental', 'stem', song.data[0].id],
    ]);
    // each fake was asked once, in ElevenLabs' words: the first answered 500, the second the ZIP
    expect(first.stems.map((r) => [r.status, r.stemVariationId, r.outputFormat])).toEqual([[500, 'two_stems_v1', 'mp3_44100_128']]);
    expect(second.stems.map((r) => [r.status, r.stemVariationId, r.outputFormat])).toEqual([[200, 'two_stems_v1', 'mp3_44100_128']]);
    expect(second.stems[0].file!.bytes.equals(stored)).toBe(true);
    expect(second.stems[0].file!.type).toBe('audio/mpeg');
    const attempts = ((await api(t.url, 'GET', `/admin/tasks/${task.task_id}/attempts`, { key: ADMIN })).body as { channel: string; outcome: string }[]).map((a) => a.channel);
    expect(attempts).toEqual(['first', 'second']);
    expect((await used()) - before).toBe(3);
    const source = await decodeMono(stored);
    const [vocals, instrumental] = await Promise.all(task.data.map(async (c: any) => decodeMono(await download(c.audio_url))));
    const n = Math.min(source.length, vocals.length, instrumental.length);
    expect(n).toBeGreaterThan(3.9 * 44_100);
    expect(correlation(new Float32Array(n).map((_, i) => vocals[i] + instrumental[i]), source.subarray(0, n))).toBeGreaterThan(0.98);
  }, 120_000);

  it("all: six_stems_v1, the six stems named as ElevenLabs' archive names them; a stem is a clip: joined with another by concat", async () => {
    const song = await ended(await submit('/music-a/submit/music', { gpt_description_prompt: 'a reel', make_instrumental: true }));
    const task = await ended(await submit('/music-a/submit/stems', { clip_id: song.data[0].id, stems: 'all' }));
    expect(task.data.map((c: any) => c.title)).toEqual(['vocals', 'drums', 'bass', 'guitar', 'piano', 'other']);
    expect(first.stems.at(-1)!.stemVariationId).toBe('six_stems_v1');
    const joined = await ended(await submit('/music-a/submit/concat', { clip_ids: [task.data[0].id, task.data[1].id] }));
    expect(joined.status).toBe('SUCCESS');
    expect(joined.data[0].metadata.concat_history.map((p: any) => p.type)).toEqual(['stem', 'stem']);
  }, 120_000);
});
