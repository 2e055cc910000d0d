import { sungWords } from '../../src/modules/clips/clip-lyrics.js';
import { pollUntil } from '../support/poll.js';
import { api, startTestApp, type TestApp } from '../support/test-app.js';
import { startFakeMureka, type FakeMureka } from '../support/vendors/mureka/mureka.fake.js';

const ADMIN = 'admin-secret-0123456789';
const KEY = 'vendor-key-0123456789';
const LYRICS = '[Verse]\nMorning tide upon the sand\nsalt and light in every hand\n\n[Chorus]\nStay, oh stay';

/** A relayed vendor that times its words (Mureka's lyrics_sections): the gateway keeps them with each take. */
describe("music: a vendor's timed lyrics kept with its takes (Mureka, relayed)", () => {
  let t: TestApp;
  let key: string;
  let mureka: FakeMureka;

  beforeAll(async () => {
    mureka = await startFakeMureka(KEY, 3);
    t = await startTestApp({ MUSIC_PROVIDER: 'relay', AUDIO_PROVIDER: 'sandbox', ADMIN_API_KEY: ADMIN, CHANNEL_SECRET_KEY: 'c'.repeat(64), OUTBOUND_ALLOW_HOSTS: '127.0.0.1', ALLOW_PRIVATE_URLS: 'true', RELAY_POLL_MS: '100' });
    key = await t.createKey('team-relayed-lyrics');
    const res = await api(t.url, 'POST', '/admin/channels', { key: ADMIN, body: { name: 'mureka', protocol: 'mureka', operations: ['music'], base_url: mureka.url, credentials: { api_key: KEY } } });
    expect([res.status, res.body.message]).toEqual([201, undefined]);
  }, 60_000);
  afterAll(async () => {
    await t?.close();
    await mureka?.close();
  });

  it("each take's fetch shows the lyrics Mureka sang, and its timed lyrics route answers Mureka's words in order within the take", async () => {
    const accepted = await api(t.url, 'POST', '/music-a/submit/music', { key, body: { prompt: LYRICS, tags: 'folk', title: 'Morning tide' } });
    expect([accepted.status, accepted.body.code]).toEqual([200, 'success']);
    const task = await pollUntil(
      async () => (await api(t.url, 'GET', `/music-a/fetch/${accepted.body.data}`, { key })).body.data,
      (d) => d?.status === 'SUCCESS' || d?.status === 'FAILURE',
      { timeoutMs: 60_000, what: 'the song to end' },
    );
    expect([task.status, task.fail_reason, task.data.length]).toEqual(['SUCCESS', '', 2]);
    const asked = [...mureka.tasks.values()].at(-1)!;
    expect(asked.body.lyrics).toBe(LYRICS);
    for (const clip of task.data) {
      expect(clip.metadata.prompt).toBe(LYRICS); // Mureka's sections, read back as lyrics with their tags
      const res = await api(t.url, 'GET', `/music-a/clips/${clip.id}/lyrics`, { key });
      expect([res.status, res.body.code]).toEqual([200, 'success']);
      const words = res.body.data.aligned_words;
      expect(words.map((w: any) => w.word)).toEqual(sungWords(LYRICS));
      // the fake times three lines a second each over the 3 s take: the first word of each line at 0, 1 and 2 s
      expect([words[0].start_s, words[5].start_s, words[11].start_s]).toEqual([0, 1, 2]);
      let last = 0;
      for (const w of words) {
        expect(w.start_s).toBeGreaterThanOrEqual(last);
        expect(w.end_s).toBeGreaterThan(w.start_s);
        expect(w.end_s).toBeLessThanOrEqual(clip.metadata.duration);
        last = w.end_s;
      }
    }
    const detail = (await api(t.url, 'GET', `/tasks/${task.task_id}`, { key })).body;
    expect(detail.clips.map((c: any) => [c.lyrics, c.timed_lyrics.length])).toEqual([
      [LYRICS, 14],
      [LYRICS, 14],
    ]);
  });
});
