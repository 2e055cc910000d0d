import { startServer, sendBytes, type TestServer } from '../support/http-server.js';
import { correlation, decodeFirstChannel, decodeMono, musicalWav, relativeError } from '../support/media.js';
import { pollUntil } from '../support/poll.js';
import { api, startTestApp, type TestApp } from '../support/test-app.js';
import { sunoapiCreated, sunoapiRecordInfo, sunoapiStageCallback, type SunoapiTrack } from '../support/vendors/sunoapi/sunoapi-bodies.js';
import { startReceiver, verify } from '../support/webhook-receiver.js';

const ADMIN = 'admin-secret-0123456789';
const GENERATE = '/sunoapi/api/v1/generate';
const TAKE_S = 4;
const RATE = 44100;

describe('sunoapi door: the sunoapi.org family\'s generate, extend, upload-extend, record-info and callbacks (sandbox)', () => {
  let t: TestApp;
  let key: string;
  let files: TestServer;
  let hooks: Awaited<ReturnType<typeof startReceiver>>;
  const upload = musicalWav(8, 11);

  beforeAll(async () => {
    files = await startServer((req, res) => {
      if (req.url === '/song.wav') return sendBytes(res, 'audio/wav', upload);
      if (req.url === '/not-audio.wav') return sendBytes(res, 'audio/wav', Buffer.from('this is not audio at all '.repeat(40)));
      res.statusCode = 404;
      res.end();
    });
    hooks = await startReceiver();
    t = await startTestApp({ MUSIC_PROVIDER: 'sandbox', AUDIO_PROVIDER: 'sandbox', ALLOW_PRIVATE_URLS: 'true', ADMIN_API_KEY: ADMIN, MUSIC_SANDBOX_DURATION_S: String(TAKE_S) });
    key = await t.createKey('team-sunoapi');
  });
  afterAll(async () => {
    await t.close();
    await files.close();
    await hooks.close();
  });

  const post = (path: string, body: unknown) => api(t.url, 'POST', path, { key, body });
  const recordInfo = async (taskId: string) => (await api(t.url, 'GET', `${GENERATE}/record-info?taskId=${taskId}`, { key })).body;
  const untilEnded = (taskId: string) =>
    pollUntil(() => recordInfo(taskId), (r) => ['SUCCESS', 'GENERATE_AUDIO_FAILED', 'SENSITIVE_WORD_ERROR'].includes(r?.data?.status), { timeoutMs: 60_000, what: `task ${taskId} to end` });
  const created = async (path: string, body: unknown): Promise<string> => {
    const res = await post(path, body);
    expect([res.status, res.body.code, res.body.msg]).toEqual([200, 200, 'success']);
    // exactly their create answer
    expect(res.body).toEqual(sunoapiCreated(res.body.data.taskId));
    return res.body.data.taskId as string;
  };
  const download = async (url: string) => Buffer.from(await (await fetch(url)).arrayBuffer());

  let take: SunoapiTrack;

  it('generates in custom mode: record-info reaches SUCCESS with their documented body, two takes that decode, and the text, first and complete callbacks in that order with their documented bodies, signed', async () => {
    const body = { customMode: true, instrumental: false, model: 'V4_5', prompt: '[Verse]\nMorning light upon the bay', style: 'lo-fi, piano', title: 'Morning tide', negativeTags: 'metal', callBackUrl: `${hooks.url}/music` };
    const taskId = await created(GENERATE, body);
    const record = await untilEnded(taskId);
    const tracks = record.data.response.sunoData as SunoapiTrack[];
    expect(JSON.parse(record.data.param)).toEqual(body);
    expect(record).toEqual(
      sunoapiRecordInfo({ taskId, param: JSON.parse(record.data.param), status: 'SUCCESS', type: 'GENERATE', parentMusicId: '', tracks, errorCode: null, errorMessage: null }),
    );
    expect(tracks).toHaveLength(2);
    for (const track of tracks) {
      expect(track).toEqual({
        id: expect.stringMatching(/^[0-9a-f-]{36}$/),
        audioUrl: expect.stringContaining('/media/'),
        streamAudioUrl: track.audioUrl,
        imageUrl: expect.stringContaining('/media/'),
        prompt: body.prompt,
        modelName: 'V4_5',
        title: 'Morning tide',
        tags: 'lo-fi, piano',
        createTime: expect.stringMatching(/^\d{4}-\d\d-\d\d \d\d:\d\d:\d\d$/),
        duration: expect.any(Number),
      });
      expect(Math.abs(track.duration! - TAKE_S)).toBeLessThan(0.1);
      expect((await decodeMono(await download(track.audioUrl), 'mp3')).length).toBeGreaterThan(0);
    }
    take = tracks[0];

    // the callbacks at each stage, in order, as their documented bodies, signed as every callback: text when it
    // started (no takes), first with the first take, complete with both (a task's deliveries go one after another)
    const mine = () => hooks.received.filter((r) => r.json?.data?.task_id === taskId);
    const stages = await pollUntil(async () => mine(), (rs) => rs.length >= 3, { what: 'the text, first and complete callbacks' });
    expect(stages.map((r) => r.json.data.callbackType)).toEqual(['text', 'first', 'complete']);
    const linkless = (ts: SunoapiTrack[]) => ts.map((tr) => ({ ...tr, audioUrl: expect.stringContaining('/media/'), streamAudioUrl: expect.stringContaining('/media/'), imageUrl: expect.stringContaining('/media/') }));
    expect(stages[0].json).toEqual(sunoapiStageCallback('text', taskId, []));
    expect(stages[1].json).toEqual(sunoapiStageCallback('first', taskId, linkless(tracks.slice(0, 1))));
    expect(stages[1].json.data.data[0].id).toBe(tracks[0].id);
    expect(stages[2].json).toEqual(sunoapiStageCallback('complete', taskId, linkless(tracks)));
    const secret = (await api(t.url, 'GET', '/admin/owners/team-sunoapi/webhook-secret', { key: ADMIN })).body.secret;
    for (const r of stages) expect(verify(secret, r)).toEqual(r.json);
    // each its own delivery, with its own webhook-id, in the task's delivery log
    expect(new Set(stages.map((r) => r.headers['webhook-id'])).size).toBe(3);
    const log = (await api(t.url, 'GET', `/tasks/${taskId}/callbacks`, { key })).body;
    expect(JSON.stringify(log)).toContain(stages[2].headers['webhook-id']);
  });

  it('generates in non-custom mode from a description, instrumental, naming no model', async () => {
    const taskId = await created(GENERATE, { customMode: false, instrumental: true, prompt: 'a cheerful song about a bicycle ride' });
    const record = await untilEnded(taskId);
    expect(record.data.status).toBe('SUCCESS');
    expect(JSON.parse(record.data.param)).toEqual({ customMode: false, instrumental: true, prompt: 'a cheerful song about a bicycle ride' });
    expect(record.data.response.sunoData.map((tr: SunoapiTrack) => [tr.prompt, tr.modelName])).toEqual([
      ['', ''],
      ['', ''],
    ]);
  });

  it('extends a take at its 2nd second: EXTEND, the take as parentMusicId, the new clips continuing it', async () => {
    const taskId = await created(`${GENERATE}/extend`, { audioId: take.id, defaultParamFlag: true, continueAt: 2, prompt: '[Bridge]\nFarther out', style: 'lo-fi', title: 'Tide, later', model: 'V4_5' });
    const record = await untilEnded(taskId);
    expect([record.data.status, record.data.type, record.data.parentMusicId]).toEqual(['SUCCESS', 'EXTEND', take.id]);
    expect(JSON.parse(record.data.param)).toEqual({ audioId: take.id, defaultParamFlag: true, continueAt: 2, prompt: '[Bridge]\nFarther out', style: 'lo-fi', title: 'Tide, later', model: 'V4_5' });
    // the same clips through the Suno-style door: continuing the take at 2 s
    const fetched = (await api(t.url, 'GET', `/music-a/fetch/${taskId}`, { key })).body.data;
    expect(fetched.data[0].metadata).toEqual(expect.objectContaining({ continue_clip_id: take.id, continue_at: 2, history: [{ id: take.id, type: 'gen', continue_at: 2 }] }));
    expect(fetched.data.map((c: any) => c.id)).toEqual(record.data.response.sunoData.map((tr: SunoapiTrack) => tr.id));
  });

  it('upload-extends a clip served by URL: registered as an upload, continued at 3 s, its upload the parentMusicId; each track the whole extended track, the upload\'s own samples up to 3 s', async () => {
    const taskId = await created(`${GENERATE}/upload-extend`, { uploadUrl: `${files.url}/song.wav`, defaultParamFlag: true, continueAt: 3, instrumental: true, style: 'ambient', title: 'Further', model: 'V4', callBackUrl: `${hooks.url}/upload-extend` });
    const record = await untilEnded(taskId);
    expect([record.data.status, record.data.type]).toEqual(['SUCCESS', 'UPLOAD_EXTEND']);
    const uploadId = record.data.parentMusicId as string;
    const uploaded = (await api(t.url, 'GET', `/music-a/uploads/${uploadId}`, { key })).body.data;
    expect(uploaded).toEqual(expect.objectContaining({ id: uploadId, url: `${files.url}/song.wav`, status: 'ready', duration: 8 }));
    const fetched = (await api(t.url, 'GET', `/music-a/fetch/${taskId}`, { key })).body.data;
    expect(fetched.data[0].metadata).toEqual(expect.objectContaining({ continue_clip_id: uploadId, continue_at: 3, history: [{ id: uploadId, type: 'upload', continue_at: 3 }] }));
    // "a longer track": each track is the upload up to continueAt then the take (as long as both), not the new part alone
    const tracks = record.data.response.sunoData as SunoapiTrack[];
    expect(tracks).toHaveLength(2);
    const original = await decodeFirstChannel(upload);
    for (const [i, tr] of tracks.entries()) {
      expect(tr.id).toBe(fetched.data[i].id);
      expect(Math.abs(tr.duration! - (3 + fetched.data[i].metadata.duration))).toBeLessThan(0.05);
      const song = await decodeFirstChannel(await download(tr.audioUrl));
      expect(Math.abs(song.length / RATE - tr.duration!)).toBeLessThan(0.1);
      // the upload's own samples up to the cut, within MP3's error, away from the 3 ms fade at the cut
      const cut = 3 * RATE - 200;
      expect(relativeError(song.subarray(0, cut), original.subarray(0, cut))).toBeLessThan(0.1);
      expect(correlation(song.subarray(0, cut), original.subarray(0, cut))).toBeGreaterThan(0.99);
      // then the take, not the upload's own 3rd second on
      expect(Math.abs(correlation(song.subarray(3 * RATE + 200, 4 * RATE), original.subarray(3 * RATE + 200, 4 * RATE)))).toBeLessThan(0.5);
      // the take alone (the Suno-style door's clip) stays the new part: its own audio, shorter
      expect((await decodeFirstChannel(await download(fetched.data[i].audio_url))).length).toBeLessThan(song.length - 2 * RATE);
    }
    // its callbacks carry the same whole tracks: text, first (the first track), complete
    const stages = await pollUntil(async () => hooks.received.filter((r) => r.json?.data?.task_id === taskId), (rs) => rs.length >= 3, { what: 'the upload-extend\'s callbacks' });
    expect(stages.map((r) => r.json.data.callbackType)).toEqual(['text', 'first', 'complete']);
    const asCallback = (tr: SunoapiTrack) => expect.objectContaining({ id: tr.id, duration: tr.duration, audio_url: expect.stringContaining('/media/') });
    expect(stages[1].json.data.data).toEqual([asCallback(tracks[0])]);
    expect(stages[2].json.data.data).toEqual(tracks.map(asCallback));
    expect(stages[2].json).toEqual(sunoapiStageCallback('complete', taskId, tracks.map((tr) => ({ ...tr, audioUrl: expect.any(String), streamAudioUrl: expect.any(String), imageUrl: expect.any(String) }))));
  });

  it('refuses bad input in their shape, naming the field: {code, msg, data: null} with their codes', async () => {
    const refused = async (path: string, body: unknown, status: number, words: RegExp) => {
      const res = await post(path, body);
      expect([res.status, res.body.code, res.body.data]).toEqual([status, status, null]);
      expect(res.body.msg).toMatch(words);
      expect(res.body.message).toBe(res.body.msg);
      expect(res.body.request_id).toEqual(expect.any(String));
    };
    await refused(GENERATE, { instrumental: false, prompt: 'x' }, 400, /customMode must be a boolean/);
    await refused(GENERATE, { customMode: true, instrumental: false, prompt: 'x', title: 'T' }, 400, /^style is required in custom mode/);
    await refused(GENERATE, { customMode: true, instrumental: false, style: 's', title: 'T' }, 400, /^prompt is required in custom mode/);
    await refused(GENERATE, { customMode: true, instrumental: false, prompt: 'x', style: 's', title: 'T', model: 'V9' }, 400, /model must be one of V3_5, V4, V4_5, V4_5PLUS, V5/);
    await refused(GENERATE, { customMode: true, instrumental: false, prompt: 'x'.repeat(3001), style: 's', title: 'T', model: 'V4' }, 400, /^prompt must be at most 3000 characters long with model V4/);
    // the same lyrics are within V4_5's 5000
    expect((await untilEnded(await created(GENERATE, { customMode: true, instrumental: false, prompt: 'x'.repeat(3001), style: 's', title: 'T', model: 'V4_5' }))).data.status).toBe('SUCCESS');
    await refused(GENERATE, { customMode: false, instrumental: false, prompt: 'a song', style: 'rock' }, 400, /^style is taken only in custom mode/);
    await refused(GENERATE, { customMode: false, instrumental: false, prompt: 'y'.repeat(501) }, 400, /^prompt must be at most 500 characters long in non-custom mode/);
    await refused(GENERATE, { customMode: false, instrumental: false, prompt: 'a song', callBackUrl: 'ftp://example.com/x' }, 400, /callBackUrl/);
    await refused(`${GENERATE}/extend`, { audioId: take.id, defaultParamFlag: true, prompt: 'p', style: 's', title: 'T' }, 400, /^continueAt is required with defaultParamFlag true/);
    await refused(`${GENERATE}/extend`, { audioId: take.id, defaultParamFlag: true, continueAt: TAKE_S + 1, prompt: 'p', style: 's', title: 'T' }, 400, /^continueAt must be more than 0 and less than the clip's duration/);
    await refused(`${GENERATE}/extend`, { audioId: take.id, defaultParamFlag: false, continueAt: 1 }, 400, /^continueAt is taken only with defaultParamFlag true/);
    await refused(`${GENERATE}/extend`, { audioId: '00000000-0000-4000-8000-000000000000', defaultParamFlag: false }, 404, /^audioId: there is no clip/);
    await refused(`${GENERATE}/extend`, { audioId: 'nope', defaultParamFlag: false }, 400, /audioId must be the id/);
    await refused(`${GENERATE}/upload-extend`, { defaultParamFlag: false }, 400, /uploadUrl/);
    await refused(`${GENERATE}/upload-extend`, { uploadUrl: `${files.url}/not-audio.wav`, defaultParamFlag: false }, 400, /^uploadUrl: the audio could not be used/);
    const noTask = await api(t.url, 'GET', `${GENERATE}/record-info`, { key });
    expect([noTask.status, noTask.body.code, noTask.body.msg]).toEqual([400, 400, expect.stringContaining('taskId')]);
    const unknown = await api(t.url, 'GET', `${GENERATE}/record-info?taskId=00000000-0000-4000-8000-000000000000`, { key });
    expect([unknown.status, unknown.body.code, unknown.body.msg]).toEqual([404, 404, expect.stringContaining('taskId')]);
    const anonymous = await api(t.url, 'POST', GENERATE, { body: { customMode: false, instrumental: true, prompt: 'x' } });
    expect([anonymous.status, anonymous.body.code, anonymous.body.data]).toEqual([401, 401, null]);
    const noRoute = await api(t.url, 'GET', '/sunoapi/api/v1/nothing-here', { key });
    expect([noRoute.status, noRoute.body.code]).toEqual([404, 404]);
  });

  it('is in the OpenAPI document, with its error shape', async () => {
    const doc = (await api(t.url, 'GET', '/docs-json')).body;
    expect(Object.keys(doc.paths).filter((p) => p.startsWith('/sunoapi/')).sort()).toEqual([GENERATE, `${GENERATE}/extend`, `${GENERATE}/record-info`, `${GENERATE}/upload-extend`]);
    expect(doc.paths[GENERATE].post.responses['400'].content['application/json'].schema.$ref).toMatch(/SunoapiErrorEnvelopeDto$/);
  });
});
