import { sungWords } from '../../src/modules/clips/clip-lyrics.js';
import { pollUntil } from '../support/poll.js';
import { GracefulShutdown } from '../../src/common/tasks/graceful-shutdown.js';
import { api, startTestApp, type TestApp } from '../support/test-app.js';

const TAKE_S = 4;
const LYRICS = '[Verse]\nMorning tide upon the sand\nsalt and light in every hand\n\n[Chorus]\nStay, oh stay';

/** A song's words kept with its clips: the sandbox's lyrics and their timing, in the door's record, its timed-lyrics route and the task's detail. */
describe('music: lyrics kept with each take, timed word by word (sandbox)', () => {
  let t: TestApp;
  let key: string;
  let otherKey: string;

  beforeAll(async () => {
    t = await startTestApp({ MUSIC_SANDBOX_DURATION_S: String(TAKE_S) });
    key = await t.createKey('team-lyrics');
    otherKey = await t.createKey('team-lyrics-other');
  });
  afterAll(async () => {
    await t?.close();
  });

  const ended = async (path: string, body: unknown) => {
    const res = await api(t.url, 'POST', path, { key, body });
    expect([res.status, res.body.code]).toEqual([200, 'success']);
    const task = await pollUntil(
      async () => (await api(t.url, 'GET', `/music-a/fetch/${res.body.data}`, { key })).body.data,
      (d) => d?.status === 'SUCCESS' || d?.status === 'FAILURE',
      { timeoutMs: 60_000, what: 'the task to end' },
    );
    expect([task.status, task.fail_reason]).toEqual(['SUCCESS', '']);
    return task;
  };
  const timed = (clipId: string, k = key) => api(t.url, 'GET', `/music-a/clips/${clipId}/lyrics`, { key: k });

  let song: any;

  it("a song with lyrics: each take's fetch shows them, and its timed lyrics are the sung words in order within the take", async () => {
    song = await ended('/music-a/submit/music', { prompt: LYRICS, tags: 'folk', title: 'Morning tide' });
    expect(song.data).toHaveLength(2);
    for (const clip of song.data) {
      expect([clip.title, clip.metadata.prompt]).toEqual(['Morning tide', LYRICS]);
      const res = await timed(clip.id);
      expect([res.status, res.body.code, res.body.message]).toEqual([200, 'success', '']);
      const data = res.body.data;
      expect(data).toEqual(expect.objectContaining({ clip_id: clip.id, title: 'Morning tide', lyrics: LYRICS, duration: clip.metadata.duration }));
      expect(data.aligned_words.map((w: any) => w.word)).toEqual(sungWords(LYRICS));
      let last = 0;
      for (const w of data.aligned_words) {
        expect(w).toEqual({ word: expect.any(String), success: true, start_s: expect.any(Number), end_s: expect.any(Number), p_align: 1 });
        expect(w.start_s).toBeGreaterThanOrEqual(last);
        expect(w.end_s).toBeGreaterThan(w.start_s);
        expect(w.end_s).toBeLessThanOrEqual(clip.metadata.duration);
        last = w.end_s;
      }
    }
  });

  it('a song by description: each take sings lyrics written from it (not the description itself), timed too; the two takes differ', async () => {
    const task = await ended('/music-a/submit/music', { gpt_description_prompt: 'a lighthouse keeper waiting for the storm', tags: 'sea shanty' });
    const [a, b] = task.data.map((c: any) => c.metadata.prompt as string);
    expect(a).toMatch(/^\[Verse\]\n/);
    expect(a).toMatch(/lighthouse|keeper|waiting|storm/);
    expect(a).not.toBe('a lighthouse keeper waiting for the storm');
    expect(b).not.toBe(a);
    const res = await timed(task.data[1].id);
    expect(res.status).toBe(200);
    expect(res.body.data.aligned_words.map((w: any) => w.word)).toEqual(sungWords(b));
  });

  it("no timed lyrics is a 404 naming the clip and why (an instrumental's take, a joined song), never an empty 200", async () => {
    const instrumental = await ended('/music-a/submit/music', { gpt_description_prompt: 'rain on a tin roof', make_instrumental: true });
    expect(instrumental.data[0].metadata.prompt).toBe('rain on a tin roof'); // what was asked: it sings nothing
    const res = await timed(instrumental.data[0].id);
    expect([res.status, res.body.code]).toEqual([404, 'not_found']);
    expect(res.body.message).toBe(`clip_id: clip ${instrumental.data[0].id} has no timed lyrics: it is instrumental`);
    const joined = await ended('/music-a/submit/concat', { clip_ids: [song.data[0].id, song.data[1].id] });
    const none = await timed(joined.data[0].id);
    expect([none.status, none.body.code]).toEqual([404, 'not_found']);
    expect(none.body.message).toMatch(new RegExp(`^clip_id: clip ${joined.data[0].id} has no timed lyrics: it is a joined song`));
  });

  it("another owner's clip, an unknown one and an id that is no uuid are 404; a take still running is 400", async () => {
    for (const [id, k] of [[song.data[0].id, otherKey], ['5b6c7d8e-9f0a-4b1c-8d2e-3f4a5b6c7d8e', key], ['not-a-clip', key]]) {
      const res = await timed(id, k);
      expect([res.status, res.body.code, res.body.message]).toEqual([404, 'not_found', `clip_id: there is no clip ${id} among yours`]);
    }
    const slow = await startTestApp({ MUSIC_SANDBOX_DURATION_S: String(TAKE_S), SANDBOX_DELAY_MS: '60000' });
    try {
      const k = await slow.createKey('team-slow');
      const accepted = await api(slow.url, 'POST', '/music-a/submit/music', { key: k, body: { prompt: 'la la la' } });
      const clip = (await api(slow.url, 'GET', `/music-a/fetch/${accepted.body.data}`, { key: k })).body.data.data[0].id;
      const res = await api(slow.url, 'GET', `/music-a/clips/${clip}/lyrics`, { key: k });
      expect([res.status, res.body.code]).toEqual([400, 'invalid_parameter']);
      expect(res.body.message).toMatch(new RegExp(`^clip_id: clip ${clip} is not complete yet`));
    } finally {
      // as SIGTERM does (main.ts): the take's step, waiting out its 60 s, is handed back and stopped at once,
      // where a bare close waits 10 s for it (the queue's own drain)
      await slow.app.get(GracefulShutdown).drain(1);
      await slow.close();
    }
  });

  it("GET /tasks/{id} lists a task's clips with their words, and what a continuation continues and a song joins, with their tasks", async () => {
    const cont = await ended('/music-a/submit/music', { continue_clip_id: song.data[0].id, continue_at: 2, prompt: 'and the tide goes out', title: 'Ebb' });
    const detail = (await api(t.url, 'GET', `/tasks/${cont.task_id}`, { key })).body;
    expect(detail.clips).toHaveLength(2);
    expect(detail.clips[0]).toEqual(
      expect.objectContaining({
        id: cont.data[0].id,
        index: 0,
        type: 'gen',
        title: 'Ebb',
        lyrics: 'and the tide goes out',
        continues: { clip_id: song.data[0].id, task_id: song.task_id, at_s: 2 },
        parts: [],
      }),
    );
    expect(detail.clips[0].timed_lyrics.map((w: any) => w.word)).toEqual(['and', 'the', 'tide', 'goes', 'out']);
    const joined = await ended('/music-a/submit/concat', { clip_id: cont.data[0].id });
    const joinedDetail = (await api(t.url, 'GET', `/tasks/${joined.task_id}`, { key })).body;
    expect(joinedDetail.clips).toEqual([
      expect.objectContaining({
        type: 'concat',
        timed_lyrics: null,
        parts: [
          { clip_id: song.data[0].id, task_id: song.task_id, at_s: 2 },
          { clip_id: cont.data[0].id, task_id: cont.task_id, at_s: null },
        ],
      }),
    ]);
    // another operation's task has none
    const video = await api(t.url, 'POST', '/video-b/v1/generations', { key, body: { prompt: 'a kite' } });
    expect((await api(t.url, 'GET', `/tasks/${video.body.id}`, { key })).body.clips).toEqual([]);
  });
});
