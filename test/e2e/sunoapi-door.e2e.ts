import { MediaService } from '../../src/modules/media/media.service.js';
import { startServer, sendBytes, type TestServer } from '../support/http-server.js';
import { correlation, decodeFirstChannel, decodeMono, decodeS16, musicalWav, probeAudio, relativeError } from '../support/media.js';
import { pollUntil } from '../support/poll.js';
import { api, startTestApp, type TestApp } from '../support/test-app.js';
import { sunoapiCreated, sunoapiCredits, sunoapiRecordInfo, sunoapiStageCallback, sunoapiTimestampedLyrics, sunoapiWavCallback, sunoapiWavRecordInfo, type SunoapiTrack } from '../support/vendors/sunoapi/sunoapi-bodies.js';
import { startReceiver, verify } from '../support/webhook-receiver.js';

const ADMIN = 'admin-secret-0123456789';
const GENERATE = '/sunoapi/api/v1/generate';
const WAV = '/sunoapi/api/v1/wav';
const TAKE_S = 4;
const RATE = 44100;

describe('sunoapi door: the sunoapi.org family\'s generate, extend, upload-extend, record-info and callbacks, WAV conversion and credits (sandbox)', () => {
  let t: TestApp;
  let key: string;
  let otherKey: string;
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
    otherKey = await t.createKey('team-sunoapi-other');
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
  let takeTaskId: string;
  let wholeTrack: { taskId: string; track: SunoapiTrack; uploadId: string };
  let instrumental: { taskId: string; take: SunoapiTrack };

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
    takeTaskId = taskId;

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
    instrumental = { taskId, take: record.data.response.sunoData[0] };
  });

  it("answers in non-custom mode with vocals each take's own lyrics and title, those written from the description, as the Suno-style door does", async () => {
    const taskId = await created(GENERATE, { customMode: false, instrumental: false, prompt: 'a rainy day at the harbour' });
    const tracks = (await untilEnded(taskId)).data.response.sunoData as SunoapiTrack[];
    const clips = (await api(t.url, 'GET', `/music-a/fetch/${taskId}`, { key })).body.data.data;
    expect(tracks.map((tr) => [tr.prompt, tr.title])).toEqual(clips.map((c: any) => [c.metadata.prompt, c.title ?? '']));
    expect(tracks[0].prompt).toEqual(expect.stringContaining('\n'));
    expect(tracks[0].prompt).not.toBe('a rainy day at the harbour');
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
    wholeTrack = { taskId, track: tracks[1], uploadId };
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

  it("get-timestamped-lyrics: a take's words as the Suno-style door times them, in their alignedWords; an upload-extend's on its whole track, from the cut; an instrumental's none", async () => {
    const timestamped = (body: unknown) => post(`${GENERATE}/get-timestamped-lyrics`, body);
    const suno = async (clipId: string) => (await api(t.url, 'GET', `/music-a/clips/${clipId}/lyrics`, { key })).body.data.aligned_words as { word: string; start_s: number; end_s: number }[];
    const res = await timestamped({ taskId: takeTaskId, audioId: take.id });
    expect(res.status).toBe(200);
    const words = await suno(take.id);
    expect(words.map((w) => w.word)).toEqual(['Morning', 'light', 'upon', 'the', 'bay']);
    expect(res.body).toEqual(sunoapiTimestampedLyrics(words.map((w) => ({ word: w.word, success: true, startS: w.start_s, endS: w.end_s, palign: 1 })), [], 0, false));

    // an upload-extend's take answered as the whole track: its words from the cut at 3 s
    const taskId = await created(`${GENERATE}/upload-extend`, { uploadUrl: `${files.url}/song.wav`, defaultParamFlag: true, continueAt: 3, instrumental: false, prompt: '[Verse]\nFarther out now', style: 'ambient', title: 'Further', model: 'V4' });
    const whole = (await untilEnded(taskId)).data.response.sunoData[1] as SunoapiTrack;
    const own = await suno(whole.id);
    expect(own.map((w) => w.word)).toEqual(['Farther', 'out', 'now']);
    const shifted = (await timestamped({ taskId, audioId: whole.id })).body.data.alignedWords;
    expect(shifted.map((w: any) => [w.word, w.startS, w.endS])).toEqual(own.map((w) => [w.word, Math.round((w.start_s + 3) * 1000) / 1000, Math.round((w.end_s + 3) * 1000) / 1000]));
    expect(shifted.at(-1).endS).toBeLessThanOrEqual(whole.duration!);

    // an instrumental's take: no words, as theirs answers one
    const none = await timestamped({ taskId: instrumental.taskId, audioId: instrumental.take.id });
    expect([none.status, none.body]).toEqual([200, sunoapiTimestampedLyrics([], [], 0, false)]);

    // refusals in their shape, naming the field
    const refused = async (body: unknown, status: number, words: RegExp) => {
      const r = await timestamped(body);
      expect([r.status, r.body.code, r.body.data]).toEqual([status, status, null]);
      expect(r.body.msg).toMatch(words);
    };
    await refused({ taskId: '00000000-0000-4000-8000-000000000000', audioId: take.id }, 404, /^taskId: there is no music task/);
    await refused({ taskId: instrumental.taskId, audioId: take.id }, 404, /^audioId: task .* has no take/);
    await refused({ taskId: takeTaskId, audioId: 'nope' }, 400, /audioId must be the id/);
    await refused({ audioId: take.id }, 400, /^taskId is required: it must be the taskId/);
    const stranger = await t.createKey('team-sunoapi-stranger');
    const theirs = await api(t.url, 'POST', `${GENERATE}/get-timestamped-lyrics`, { key: stranger, body: { taskId: takeTaskId, audioId: take.id } });
    expect([theirs.status, theirs.body.code, theirs.body.data]).toEqual([404, 404, null]);
  });

  it('refuses bad input in their shape, naming the field: {code, msg, data: null} with their codes', async () => {
    const refused = async (path: string, body: unknown, status: number, words: RegExp) => {
      const res = await post(path, body);
      expect([res.status, res.body.code, res.body.data]).toEqual([status, status, null]);
      expect(res.body.msg).toMatch(words);
      expect(res.body.message).toBe(res.body.msg);
      expect(res.body.request_id).toEqual(expect.any(String));
    };
    await refused(GENERATE, { instrumental: false, prompt: 'x' }, 400, /^customMode is required: it must be a boolean/);
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

  const wavRecord = async (taskId: string, k = key) => (await api(t.url, 'GET', `${WAV}/record-info?taskId=${taskId}`, { key: k })).body;
  const wavEnded = (taskId: string) => pollUntil(() => wavRecord(taskId), (r) => ['SUCCESS', 'GENERATE_WAV_FAILED'].includes(r?.data?.successFlag), { timeoutMs: 60_000, what: `WAV task ${taskId} to end` });
  const credit = async (k = key) => {
    const res = await api(t.url, 'GET', `${GENERATE}/credit`, { key: k });
    expect(res.status).toBe(200);
    expect(res.body).toEqual(sunoapiCredits(res.body.data));
    return res.body.data as number;
  };

  it("converts a take to WAV: wav/generate answers a taskId at once, wav/record-info reaches SUCCESS with their documented record, the WAV decodes to the take's own samples, their one callback is signed; credit drops by the conversion's price", async () => {
    // no monthly limit: the largest safe integer; with one, what is left of it
    expect(await credit()).toBe(Number.MAX_SAFE_INTEGER);
    expect((await api(t.url, 'PUT', '/admin/owners/team-sunoapi/limits', { key: ADMIN, body: { monthly_credits: 1000 } })).status).toBe(200);
    const before = await credit();
    expect(before).toBeGreaterThan(0);
    expect(before).toBeLessThan(1000); // the songs above were charged

    const callBackUrl = `${hooks.url}/wav`;
    const wavTaskId = await created(`${WAV}/generate`, { taskId: takeTaskId, audioId: take.id, callBackUrl });
    const record = await wavEnded(wavTaskId);
    const audioWavUrl = record.data.response?.audioWavUrl as string;
    expect(record).toEqual(
      sunoapiWavRecordInfo({
        taskId: wavTaskId,
        musicId: take.id,
        callbackUrl: callBackUrl,
        completeTime: expect.stringMatching(/^\d{4}-\d\d-\d\d \d\d:\d\d:\d\d$/),
        audioWavUrl: expect.stringContaining('/media/'),
        successFlag: 'SUCCESS',
        createTime: expect.stringMatching(/^\d{4}-\d\d-\d\d \d\d:\d\d:\d\d$/),
        errorCode: null,
        errorMessage: null,
      }),
    );
    expect(record.data.completeTime >= record.data.createTime).toBe(true);

    // a signed link like every result's (no key needed): 16-bit PCM at the take's own rate and channels, its samples exactly
    const res = await fetch(audioWavUrl);
    expect([res.status, res.headers.get('content-type')]).toEqual([200, 'audio/wav']);
    const wav = Buffer.from(await res.arrayBuffer());
    const mp3 = await download(take.audioUrl);
    expect(await probeAudio(wav)).toEqual(await probeAudio(mp3));
    expect([wav.toString('latin1', 0, 4), wav.toString('latin1', 8, 12), wav.readUInt32LE(4), wav.readUInt16LE(34)]).toEqual(['RIFF', 'WAVE', wav.length - 8, 16]);
    const fromMp3 = await decodeS16(mp3, 'mp3');
    expect(fromMp3.length).toBeGreaterThan(0.95 * TAKE_S * RATE * 2);
    expect((await decodeS16(wav, 'wav')).equals(fromMp3)).toBe(true);

    // their one callback, at the end (none while pending: a task's deliveries go in order, so it is the first), signed
    const mine = await pollUntil(async () => hooks.received.filter((r) => r.json?.data?.task_id === wavTaskId), (rs) => rs.length >= 1, { what: 'the WAV callback' });
    expect(mine).toHaveLength(1);
    expect(mine[0].path).toBe('/wav');
    // the same stored WAV (a link is signed when it is written: its expiry may differ by a second)
    expect(mine[0].json).toEqual(sunoapiWavCallback(wavTaskId, expect.stringMatching(new RegExp(`^${audioWavUrl.split('?')[0]}\\?expires=\\d+&signature=`))));
    const secret = (await api(t.url, 'GET', '/admin/owners/team-sunoapi/webhook-secret', { key: ADMIN })).body.secret;
    expect(verify(secret, mine[0])).toEqual(mine[0].json);

    // a task like the others: charged PRICE_WAV (1), listed with its kind and door
    const task = (await api(t.url, 'GET', `/tasks/${wavTaskId}`, { key })).body;
    expect([task.kind, task.door, task.state, task.credits, task.record_path]).toEqual(['wav', 'sunoapi', 'succeeded', 1, `${WAV}/record-info?taskId=${wavTaskId}`]);
    expect(await credit()).toBe(before - 1);
    // another owner's balance is its own
    expect(await credit(otherKey)).toBe(Number.MAX_SAFE_INTEGER);
  });

  it("converts an upload-extend's track as the door answered it: the whole extended track", async () => {
    const wavTaskId = await created(`${WAV}/generate`, { taskId: wholeTrack.taskId, audioId: wholeTrack.track.id });
    const record = await wavEnded(wavTaskId);
    expect([record.data.successFlag, record.data.callbackUrl, record.data.musicId]).toEqual(['SUCCESS', null, wholeTrack.track.id]);
    const wav = await download(record.data.response.audioWavUrl);
    expect((await decodeS16(wav, 'wav')).equals(await decodeS16(await download(wholeTrack.track.audioUrl), 'mp3'))).toBe(true);
    expect(Math.abs((await decodeFirstChannel(wav)).length / RATE - wholeTrack.track.duration!)).toBeLessThan(0.1);
  });

  it('refuses a WAV conversion of what is not a track of your task, in their shape, naming the field', async () => {
    const refused = async (body: unknown, status: number, words: RegExp, k = key) => {
      const res = await api(t.url, 'POST', `${WAV}/generate`, { key: k, body });
      expect([res.status, res.body.code, res.body.data]).toEqual([status, status, null]);
      expect(res.body.msg).toMatch(words);
      expect(res.body.request_id).toEqual(expect.any(String));
    };
    const nobody = '00000000-0000-4000-8000-000000000000';
    await refused({ audioId: take.id }, 400, /^taskId is required: it must be the taskId/);
    await refused({ taskId: takeTaskId }, 400, /^audioId is required: it must be the id/);
    await refused({ taskId: 'nope', audioId: take.id }, 400, /taskId must be the taskId/);
    await refused({ taskId: takeTaskId, audioId: take.id, callBackUrl: 'ftp://example.com/x' }, 400, /callBackUrl/);
    await refused({ taskId: nobody, audioId: take.id }, 404, /^taskId: there is no music task 0{8}-.* among yours/);
    await refused({ taskId: takeTaskId, audioId: nobody }, 404, /^audioId: there is no track 0{8}-.* among yours/);
    // a track of another task: the upload-extend's, and its upload (a clip, not a track of any music task)
    await refused({ taskId: takeTaskId, audioId: wholeTrack.track.id }, 400, new RegExp(`^audioId: track ${wholeTrack.track.id} is not a track of task ${takeTaskId}`));
    await refused({ taskId: wholeTrack.taskId, audioId: wholeTrack.uploadId }, 400, /^audioId: track .* is not a track of task/);
    // a WAV task is not a music task
    const wavTaskId = (await post(`${WAV}/generate`, { taskId: takeTaskId, audioId: take.id })).body.data.taskId;
    await refused({ taskId: wavTaskId, audioId: take.id }, 404, /^taskId: there is no music task/);
    // another owner's task and track are nobody's to them
    await refused({ taskId: takeTaskId, audioId: take.id }, 404, /^taskId: there is no music task/, otherKey);
    expect(JSON.stringify(await wavRecord(wavTaskId, otherKey))).toMatch(/"code":404.*"msg":"taskId: there is no WAV conversion task/);
    // wav/record-info: no taskId, not a uuid, unknown, a music task's
    for (const [query, status, words] of [['', 400, /^taskId is required: it must be/], ['?taskId=x', 400, /taskId must be/], [`?taskId=${nobody}`, 404, /^taskId: there is no WAV conversion task/], [`?taskId=${takeTaskId}`, 404, /^taskId: there is no WAV conversion task/]] as const) {
      const res = await api(t.url, 'GET', `${WAV}/record-info${query}`, { key });
      expect([query, res.status, res.body.code, res.body.data]).toEqual([query, status, status, null]);
      expect(res.body.msg).toMatch(words);
    }
    await wavEnded(wavTaskId);
    // credit: a key is needed
    const anonymous = await api(t.url, 'GET', `${GENERATE}/credit`);
    expect([anonymous.status, anonymous.body.code, anonymous.body.data]).toEqual([401, 401, null]);
  });

  it('is in the OpenAPI document, with its error shape', async () => {
    const doc = (await api(t.url, 'GET', '/docs-json')).body;
    expect(Object.keys(doc.paths).filter((p) => p.startsWith('/sunoapi/')).sort()).toEqual([GENERATE, `${GENERATE}/credit`, `${GENERATE}/extend`, `${GENERATE}/get-timestamped-lyrics`, `${GENERATE}/record-info`, `${GENERATE}/upload-extend`, `${WAV}/generate`, `${WAV}/record-info`]);
    for (const [path, method] of [[`${WAV}/generate`, 'post'], [`${WAV}/record-info`, 'get'], [`${GENERATE}/credit`, 'get']]) {
      expect([path, doc.paths[path][method].responses['401'].content['application/json'].schema.$ref]).toEqual([path, expect.stringMatching(/SunoapiErrorEnvelopeDto$/)]);
    }
    expect(doc.paths[GENERATE].post.responses['400'].content['application/json'].schema.$ref).toMatch(/SunoapiErrorEnvelopeDto$/);
  });

  // last: retention expires every task of this app
  it("refuses a WAV conversion of a track whose audio expired (410), and a WAV's record loses its link once it expired", async () => {
    const wavTaskId = await created(`${WAV}/generate`, { taskId: takeTaskId, audioId: take.id });
    expect((await wavEnded(wavTaskId)).data.response.audioWavUrl).toContain('/media/');
    await t.app.get(MediaService).runRetention(new Date(Date.now() + 1000 * 86400_000));
    const res = await post(`${WAV}/generate`, { taskId: takeTaskId, audioId: take.id });
    expect([res.status, res.body.code, res.body.data]).toEqual([410, 410, null]);
    expect(res.body.msg).toMatch(new RegExp(`^audioId: clip ${take.id} has expired`));
    const record = await wavRecord(wavTaskId);
    expect([record.data.successFlag, record.data.response]).toEqual(['SUCCESS', null]);
  });
});
