import { type FakeMusicAggregator, startFakeMusicAggregator } from '../support/vendors/suno-aggregator/suno-aggregator.fake.js';
import { decodeMono, wav } from '../support/media.js';
import { sendBytes, startServer, type TestServer } from '../support/http-server.js';
import { pollUntil } from '../support/poll.js';
import { api, startTestApp, type TestApp } from '../support/test-app.js';

// circuit breaking has its own tests (channels*.e2e): here a busy aggregator is waited out, not cut off
const FAST = { RELAY_POLL_MS: '50', OUTBOUND_ALLOW_HOSTS: '127.0.0.1', CHANNEL_FAILURE_THRESHOLD: '1000' };

describe('music relayed to a Suno-API aggregator', () => {
  let agg: FakeMusicAggregator;
  let files: TestServer;
  let t: TestApp;
  let key: string;
  beforeAll(async () => {
    agg = await startFakeMusicAggregator('agg-key', 3);
    files = await startServer((_req, res) => sendBytes(res, 'audio/wav', wav(12, 44100)));
    t = await startTestApp({ ...FAST, ALLOW_PRIVATE_URLS: 'true', MUSIC_PROVIDER: 'relay', AUDIO_PROVIDER: 'relay', RELAY_MUSIC_URL: `${agg.url}/suno`, RELAY_AUDIO_URL: `${agg.url}/suno`, RELAY_API_KEY: 'agg-key', MUSIC_TIMEOUT_S: '45' }); // 45 s: a song's run end to end (its takes copied, measured, their lyrics kept) on a loaded machine (15 s was once too little beside the full suite); also how long a task may wait for a free channel from its acceptance (the 429 test)
    key = await t.createKey('team-relay');
  });
  afterAll(async () => {
    await t.close();
    await agg.close();
    await files.close();
  });

  const submit = async (path: string, body: unknown): Promise<string> => {
    const res = await api(t.url, 'POST', path, { key, body });
    expect([res.status, res.body.code]).toEqual([200, 'success']);
    return res.body.data;
  };
  const fetchRaw = (id: string) => api(t.url, 'GET', `/music-a/fetch/${id}`, { key });
  const ended = (id: string) => pollUntil(async () => (await fetchRaw(id)).body.data, (d) => d.status === 'SUCCESS' || d.status === 'FAILURE', { timeoutMs: 90_000, what: `task ${id} to end` });

  let song: any;

  it('runs a new song upstream, polls it to the end, copies both takes into our storage with our own ids', async () => {
    const id = await submit('/music-a/submit/music', { prompt: 'waves', tags: 'ambient', title: 'Sea', mv: 'chirp-auk' });
    song = await ended(id);
    // a failure's words are generic (GATEWAY_FAILURE): what the gateway logged of the task says why
    expect([song.status, song.status === 'SUCCESS' ? [] : [song, ...t.logs.lines.filter((l) => l.task_id === id)]]).toEqual(['SUCCESS', []]);
    const [upstreamId, sent] = [...agg.music.entries()].at(-1)!;
    expect(sent.body).toEqual({ prompt: 'waves', tags: 'ambient', title: 'Sea', mv: 'chirp-auk', make_instrumental: false });
    expect(song.task_id).not.toBe(upstreamId);
    expect(song.data).toHaveLength(2);
    for (const clip of song.data) {
      expect(clip.id).toMatch(/^[0-9a-f-]{36}$/);
      expect(clip.audio_url.startsWith(t.url)).toBe(true);
      expect(Math.abs(clip.metadata.duration - 3)).toBeLessThan(0.1);
      const audio = Buffer.from(await (await fetch(clip.audio_url)).arrayBuffer());
      expect((await decodeMono(audio, 'mp3')).length / 44100).toBeCloseTo(3, 1);
    }
    expect(agg.authFailures).toEqual([]);
  });

  it("continues a relayed clip: the upstream receives its own clip id and continue_at, and no upstream id ever reaches the caller", async () => {
    const id = await submit('/music-a/submit/music', { continue_clip_id: song.data[1].id, continue_at: 2, prompt: 'more' });
    const task = await ended(id);
    expect(task.status).toBe('SUCCESS');
    const [, sent] = [...agg.music.entries()].at(-1)!;
    expect(sent.body).toEqual(expect.objectContaining({ continue_clip_id: 'up-clip-1-1', continue_at: 2, task: 'extend' }));
    expect(task.data[0].metadata.continue_clip_id).toBe(song.data[1].id);
    const everything = JSON.stringify([(await fetchRaw(id)).body, (await api(t.url, 'POST', '/music-a/fetch', { key, body: { ids: [song.task_id, id] } })).body]);
    expect(everything).not.toMatch(/up-(task|clip|upload)/);
    // joined in the gateway from its own copies: 2 + 3 s
    const concat = await ended(await submit('/music-a/submit/concat', { clip_id: task.data[0].id }));
    expect(concat.status).toBe('SUCCESS');
    expect(Math.abs(concat.data[0].metadata.duration - 5)).toBeLessThan(0.1);
  });

  it('continues an upload relayed to the same aggregator with its upstream id and upload_extend', async () => {
    const upload = await submit('/music-a/uploads/audio-url', { url: `${files.url}/clip.wav` });
    expect((await ended(upload)).status).toBe('SUCCESS');
    const id = await submit('/music-a/submit/music', { continue_clip_id: upload, continue_at: 5 });
    expect((await ended(id)).status).toBe('SUCCESS');
    const [, sent] = [...agg.music.entries()].at(-1)!;
    expect(sent.body).toEqual(expect.objectContaining({ continue_clip_id: 'up-upload-1', continue_at: 5, task: 'upload_extend' }));
  });

  it('refuses to continue a clip the upstream does not know (a song joined here) with 400 naming continue_clip_id', async () => {
    const joined = await ended(await submit('/music-a/submit/concat', { clip_ids: [song.data[0].id, song.data[1].id] }));
    const res = await api(t.url, 'POST', '/music-a/submit/music', { key, body: { continue_clip_id: joined.data[0].id } });
    expect([res.status, res.body.code]).toEqual([400, 'invalid_parameter']);
    expect(res.body.message).toMatch(/^continue_clip_id: .* not known to the upstream/);
  });

  it("ends FAILURE with the upstream's reason on a FAILURE task or a clip in error", async () => {
    agg.ending = { kind: 'failure', reason: `lyrics flagged by moderation (task up-task-${agg.music.size + 1}, see https://cdn.example/up-clip-${agg.music.size + 1}-0.mp3)` };
    const failed = await ended(await submit('/music-a/submit/music', { prompt: 'x' }));
    expect([failed.status, failed.fail_reason]).toEqual(['FAILURE', expect.stringContaining('lyrics flagged by moderation')]);
    // the upstream's words reach the caller without its ids or links
    expect(JSON.stringify(failed)).not.toMatch(/up-(task|clip)|cdn\.example/);
    expect(failed.data.map((c: any) => [c.status, c.metadata.error_message])).toEqual([
      ['error', expect.stringContaining('lyrics flagged')],
      ['error', expect.stringContaining('lyrics flagged')],
    ]);
    agg.ending = { kind: 'clip_error', message: 'audio generation failed' };
    const broken = await ended(await submit('/music-a/submit/music', { prompt: 'y' }));
    expect([broken.status, broken.fail_reason]).toEqual(['FAILURE', expect.stringContaining('audio generation failed')]);
  });

  it("keeps a take whose cover cannot be copied, without a cover (the audio is what the task is for)", async () => {
    agg.ending = { kind: 'success' };
    agg.coversMissing = true;
    try {
      const task = await ended(await submit('/music-a/submit/music', { prompt: 'no cover' }));
      expect([task.status, task.data.map((c: any) => [c.status, c.image_url, typeof c.audio_url])]).toEqual([
        'SUCCESS',
        [
          ['complete', null, 'string'],
          ['complete', null, 'string'],
        ],
      ]);
    } finally {
      agg.coversMissing = false;
    }
  });

  describe('at its deadline', () => {
    // an app of its own, whose deadline is short: the main app's 45 s would be this test's length
    let short: TestApp;
    let shortKey: string;
    beforeAll(async () => {
      short = await startTestApp({ ...FAST, ALLOW_PRIVATE_URLS: 'true', MUSIC_PROVIDER: 'relay', RELAY_MUSIC_URL: `${agg.url}/suno`, RELAY_API_KEY: 'agg-key', MUSIC_TIMEOUT_S: '3' });
      shortKey = await short.createKey('team-relay-deadline');
    });
    afterAll(() => short.close());

    it('fails a task the upstream never ends (MUSIC_TIMEOUT_S), with a reason, and polls it no more', async () => {
      const submitNever = async () => {
        const res = await api(short.url, 'POST', '/music-a/submit/music', { key: shortKey, body: { prompt: 'z' } });
        expect([res.status, res.body.code]).toEqual([200, 'success']);
        return res.body.data as string;
      };
      const endedHere = (id: string) =>
        pollUntil(async () => (await api(short.url, 'GET', `/music-a/fetch/${id}`, { key: shortKey })).body.data, (d) => d.status === 'SUCCESS' || d.status === 'FAILURE', { timeoutMs: 60_000, what: `task ${id} to end` });
      agg.ending = { kind: 'never' };
      try {
        const task = await endedHere(await submitNever());
        expect([task.status, task.fail_reason]).toEqual(['FAILURE', expect.stringMatching(/did not finish within 3 s/)]);
        const neverEnding = [...agg.music.values()].at(-1)!;
        const pollsAtEnd = neverEnding.polls;
        // a second one watched to its own deadline meanwhile, at least 3 s in which the first, were it still
        // watched, would be due every 0.3-0.75 s: it is not polled again. How often the second itself
        // is polled in those 3 s is the machine's (a fresh clone on a loaded machine polled it once), so it is
        // not counted here.
        const second = await endedHere(await submitNever());
        expect([second.status, second.fail_reason]).toEqual(['FAILURE', expect.stringMatching(/did not finish within 3 s/)]);
        expect(neverEnding.polls).toBe(pollsAtEnd);
      } finally {
        agg.ending = { kind: 'success' };
      }
    }, 120_000);
  });

  it('waits out an aggregator that answers "too many requests" (code 429 under HTTP 200): QUEUED, off the clock, then runs the task', async () => {
    agg.knobs.createBusy = 1_000_000;
    const id = await submit('/music-a/submit/music', { prompt: 'busy day' });
    const queued = await pollUntil(async () => (await fetchRaw(id)).body.data, (d) => d.status === 'QUEUED', { what: 'the task to wait for the upstream' });
    expect([queued.progress, queued.start_time, queued.data.map((c: any) => c.status)]).toEqual(['0%', 0, ['queued', 'queued']]);
    agg.knobs.createBusy = 0;
    const done = await ended(id);
    expect([done.status, done.fail_reason]).toEqual(['SUCCESS', '']);
  }, 120_000);
});
