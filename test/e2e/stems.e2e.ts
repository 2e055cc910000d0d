import { correlation, decodeMono, relativeError } from '../support/media.js';
import { pollUntil } from '../support/poll.js';
import { api, startTestApp, type TestApp } from '../support/test-app.js';
import { startReceiver } from '../support/webhook-receiver.js';

const ADMIN = 'admin-secret-0123456789';

/**
 * Stems offline: a song the sandbox made, split by the Suno-style door's stems route; each stem a clip of its
 * own (fetched as any clip, titled by its stem's name, made from the song), real audio that decodes, the two
 * stems together the song itself (within MP3's loss); the route's rules as 4xx envelopes naming the field.
 */
describe('stems: a song split into stems by the Suno-style door (sandbox, real audio)', () => {
  let t: TestApp;
  let key: string;
  let otherKey: string;
  let songTask: string;
  let songClip: string;

  beforeAll(async () => {
    t = await startTestApp({ MUSIC_SANDBOX_DURATION_S: '6', PRICE_STEMS: '4', ADMIN_API_KEY: ADMIN, ALLOW_PRIVATE_URLS: 'true' });
    key = await t.createKey('team-stems');
    otherKey = await t.createKey('team-stems-other');
    songTask = await submitted('/music-a/submit/music', { prompt: '[Verse]\nThe harbour wakes', tags: 'folk, guitar', title: 'Harbour' });
    const song = await ended(songTask);
    expect(song.status).toBe('SUCCESS');
    songClip = song.data[0].id;
  }, 120_000);
  afterAll(() => t.close());

  const post = (path: string, body: unknown, k = key) => api(t.url, 'POST', path, { key: k, body });
  async function submitted(path: string, body: unknown): Promise<string> {
    const res = await post(path, body);
    expect([res.status, res.body.code, res.body.message]).toEqual([200, 'success', '']);
    return res.body.data as string;
  }
  async function ended(id: string) {
    return (await pollUntil(() => api(t.url, 'GET', `/music-a/fetch/${id}`, { key }), (r) => r.body.data?.status === 'SUCCESS' || r.body.data?.status === 'FAILURE', { timeoutMs: 90_000, what: `task ${id} to end` })).body.data;
  }
  const download = async (url: string) => Buffer.from(await (await fetch(url)).arrayBuffer());
  const used = async () => (await api(t.url, 'GET', '/admin/owners/team-stems/limits', { key: ADMIN })).body.usage.credits_used as number;

  it('two stems (the default): action STEMS, two clips titled vocals and instrumental, type stem, made from the song; they decode, and together they are the song', async () => {
    const before = await used();
    const id = await submitted('/music-a/submit/stems', { clip_id: songClip });
    const task = await ended(id);
    expect([task.action, task.status, task.fail_reason]).toEqual(['STEMS', 'SUCCESS', '']);
    expect(task.data.map((c: any) => c.title)).toEqual(['vocals', 'instrumental']);
    for (const clip of task.data) {
      expect(clip).toEqual(expect.objectContaining({ id: expect.any(String), status: 'complete', audio_url: expect.stringContaining('/media/') }));
      expect(clip.metadata).toEqual(expect.objectContaining({ type: 'stem', stem_of: songClip, continue_clip_id: null, history: [], duration: expect.any(Number) }));
      expect(Math.abs(clip.metadata.duration - 6)).toBeLessThan(0.1);
    }
    const source = await decodeMono(await download((await ended(songTask)).data[0].audio_url));
    const [vocals, instrumental] = await Promise.all(task.data.map(async (c: any) => decodeMono(await download(c.audio_url))));
    const n = Math.min(source.length, vocals.length, instrumental.length);
    expect(n).toBeGreaterThan(5.9 * 44_100);
    const sum = new Float32Array(n).map((_, i) => vocals[i] + instrumental[i]);
    expect(correlation(sum, source.subarray(0, n))).toBeGreaterThan(0.99);
    expect(relativeError(sum, source.subarray(0, n))).toBeLessThan(0.15);
    // each stem is a part of the song, not the song again
    expect(correlation(vocals.subarray(0, n), source.subarray(0, n))).toBeLessThan(0.95);
    expect(correlation(instrumental.subarray(0, n), source.subarray(0, n))).toBeLessThan(0.95);
    // one charge of PRICE_STEMS
    expect((await used()) - before).toBe(4);
    // GET /tasks/{id} lists the stems as the task's clips, of type stem, as its OpenAPI document says (api() checks the answer against it)
    const detail = await api(t.url, 'GET', `/tasks/${id}`, { key });
    expect([detail.status, detail.body.kind, detail.body.credits]).toEqual([200, 'stems', 4]);
    expect(detail.body.clips.map((c: any) => [c.id, c.index, c.type, c.title])).toEqual(task.data.map((c: any, i: number) => [c.id, i, 'stem', c.title]));
    // POST /music-a/fetch renders it the same way; a stem is a clip as any: it is split again
    const many = await post('/music-a/fetch', { ids: [id] });
    expect(many.body.data.map((d: any) => [d.action, d.data.length])).toEqual([['STEMS', 2]]);
    const again = await ended(await submitted('/music-a/submit/stems', { clip_id: task.data[0].id }));
    expect([again.status, again.data.map((c: any) => c.metadata.stem_of)]).toEqual(['SUCCESS', [task.data[0].id, task.data[0].id]]);
  }, 120_000);

  it("all: every stem the model makes, named as the model names them (the sandbox mirrors ElevenLabs' six); the callback carries the record", async () => {
    const receiver = await startReceiver();
    try {
      const id = await submitted('/music-a/submit/stems', { clip_id: songClip, stems: 'all', callback_url: `${receiver.url}/hook` });
      const task = await ended(id);
      expect(task.status).toBe('SUCCESS');
      expect(task.data.map((c: any) => c.title)).toEqual(['vocals', 'drums', 'bass', 'guitar', 'piano', 'other']);
      for (const clip of task.data) expect((await decodeMono(await download(clip.audio_url))).length).toBeGreaterThan(5.9 * 44_100);
      await pollUntil(async () => receiver.received.filter((r) => r.json?.task_id === id).map((r) => r.json.status), (s) => s.includes('SUCCESS'), { what: 'the SUCCESS callback' });
      const success = receiver.received.find((r) => r.json?.task_id === id && r.json.status === 'SUCCESS')!;
      expect([success.json.action, success.json.data.map((c: any) => c.title)]).toEqual(['STEMS', ['vocals', 'drums', 'bass', 'guitar', 'piano', 'other']]);
    } finally {
      await receiver.close();
    }
  }, 120_000);

  it('GET /models lists what each stems model makes', async () => {
    const models = (await api(t.url, 'GET', '/models', { key })).body.models as any[];
    expect(models.filter((m) => m.operation === 'stems')).toEqual([
      { name: 'stem_separation_v1', operation: 'stems', vendor: 'elevenlabs', vendor_model: 'stem_separation_v1', splits: ['two', 'all'], stems: { two: ['vocals', 'instrumental'], all: ['vocals', 'drums', 'bass', 'guitar', 'piano', 'other'] }, own_clips_only: false, credits_per_task: 4 },
      expect.objectContaining({ name: 'vocal-removal', operation: 'stems', vendor: 'sunoapi', splits: ['two', 'all'], own_clips_only: true, credits_per_task: 4 }),
    ]);
  });

  describe('rules: each a 4xx with the envelope naming the field', () => {
    const refused = async (body: unknown, status: number, code: string, message: RegExp, k = key) => {
      const res = await post('/music-a/submit/stems', body, k);
      expect([res.status, res.body.code]).toEqual([status, code]);
      expect(res.body.message).toMatch(message);
      expect(res.body.request_id).toEqual(res.headers.get('x-request-id'));
    };

    it('clip_id: missing or not a UUID is 400; unknown or another owner\'s is 404, as the door answers unknown clips', async () => {
      await refused({}, 400, 'invalid_parameter', /^clip_id/);
      await refused({ clip_id: 'nope' }, 400, 'invalid_parameter', /^clip_id/);
      await refused({ clip_id: '00000000-0000-4000-8000-000000000000' }, 404, 'not_found', /^clip_id: there is no clip/);
      await refused({ clip_id: songClip }, 404, 'not_found', /^clip_id: there is no clip/, otherKey);
    });

    it('stems: anything but two or all is 400 naming it', async () => {
      await refused({ clip_id: songClip, stems: 'three' }, 400, 'invalid_parameter', /^stems must be one of two, all/);
      await refused({ clip_id: songClip, stems: 2 }, 400, 'invalid_parameter', /^stems must be one of two, all/);
    });
  });
});
