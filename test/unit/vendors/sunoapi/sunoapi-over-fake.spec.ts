import { UpstreamBusy, UpstreamRefused } from '../../../../src/infra/relay/upstream-client.js';
import type { MusicCreate, MusicRequest, MusicStatus } from '../../../../src/vendors/contracts/music-vendor.js';
import { refusesContent } from '../../../../src/vendors/registry.js';
import { SUNOAPI_MODELS } from '../../../../src/vendors/sunoapi/sunoapi-models.js';
import { SunoapiMusicVendor } from '../../../../src/vendors/sunoapi/sunoapi-music.vendor.js';
import { SUNOAPI } from '../../../../src/vendors/sunoapi/sunoapi.vendor.js';
import { sendBytes, sendJson, startServer, type TestServer } from '../../../support/http-server.js';
import { testMp3 } from '../../../support/media.js';
import { pollUntil } from '../../../support/poll.js';
import { loopbackUpstreamClient } from '../../../support/vendors/upstream-client.js';
import { type FakeSunoapi, startFakeSunoapi } from '../../../support/vendors/sunoapi/sunoapi.fake.js';

const KEY = 'sk-sunoapi-test';
const song = (over: Partial<MusicRequest> = {}): MusicRequest => ({ lyrics: null, description: null, style: null, avoidStyle: null, title: null, model: 'V4_5', instrumental: false, durationS: null, continues: null, ...over });
const model = SUNOAPI_MODELS.find((m) => m.id === 'V4_5')!;

/** The adapter driven against the fake reseller over the real UpstreamClient: what each call sent, what it read. */
describe('sunoapi: the adapter against its fake', () => {
  const client = loopbackUpstreamClient();
  const vendor = new SunoapiMusicVendor(client);
  let fake: FakeSunoapi;
  /** Where the fake calls back (the gateway's callback URL stands in), and a store serving the clip an upload-extend fetches. */
  let gateway: TestServer;
  const upload = testMp3(4, 500);
  const account = () => ({ baseUrl: fake.url, auth: SUNOAPI.auth({ api_key: KEY }) });
  const create = (request: MusicRequest, more: Partial<MusicCreate> = {}): MusicCreate => ({ request, model, taskId: 'task-1', callbackUrl: `${gateway.url}/callbacks/task-1`, ...more });
  const finished = (id: string) => pollUntil(() => vendor.query(account(), id, true), (s: MusicStatus) => s.state !== 'working', { what: `task ${id} ends` });

  beforeAll(async () => {
    gateway = await startServer((req, res) => (req.url === '/store/clip.mp3' ? sendBytes(res, 'audio/mpeg', upload) : sendJson(res, 200, { ok: true })));
  });
  afterAll(() => gateway.close());
  beforeEach(async () => {
    fake = await startFakeSunoapi(KEY);
    fake.knobs.pollsUntilDone = 4;
  });
  afterEach(() => fake.close());

  it('a new song: sent in its words, polled through its stages to SUCCESS, two MP3 takes with lyrics, titles and covers', async () => {
    const { upstreamId } = (await vendor.create(account(), create(song({ lyrics: '[Verse]\nLight on the sea', style: 'folk', title: 'Dusk' })))) as { upstreamId: string };
    expect(fake.music.get(upstreamId)!.body).toEqual({ customMode: true, instrumental: false, model: 'V4_5', prompt: '[Verse]\nLight on the sea', style: 'folk', title: 'Dusk', callBackUrl: `${gateway.url}/callbacks/task-1` });
    const seen: string[] = [];
    const status = await pollUntil(
      async () => {
        const s = await vendor.query(account(), upstreamId, true);
        seen.push(s.state);
        return s;
      },
      (s) => s.state !== 'working',
    );
    expect(seen).toEqual(['working', 'working', 'working', 'succeeded']);
    if (status.state !== 'succeeded') throw new Error('not succeeded');
    expect(status.clips.map((c) => [c.upstreamId, c.lyrics, c.title])).toEqual([
      [`${upstreamId}-take-0`, '[Verse]\nLight on the sea', 'Dusk'],
      [`${upstreamId}-take-1`, '[Verse]\nLight on the sea', 'Dusk'],
    ]);
    for (const clip of status.clips) {
      const audio = await client.download(clip.audioUrl!, 10_000_000);
      expect(audio.subarray(0, 3).toString('latin1') === 'ID3' || (audio[0] === 0xff && (audio[1] & 0xe0) === 0xe0)).toBe(true);
      expect((await client.download(clip.coverUrl!, 1_000_000)).subarray(1, 4).toString()).toBe('PNG');
    }
  });

  it('its callbacks at the text, first and complete stages reach the callBackUrl with their documented bodies', async () => {
    const callbackUrl = `${gateway.url}/callbacks/stages`;
    const { upstreamId } = (await vendor.create(account(), create(song({ style: 'ambient', title: 'Drift', instrumental: true }), { callbackUrl }))) as { upstreamId: string };
    const sent = await fake.finishMusic(upstreamId);
    expect(sent.map((c) => [c.url, c.status])).toEqual([1, 2, 3].map(() => [callbackUrl, 200]));
    const bodies = gateway.requests.filter((r) => r.url === '/callbacks/stages').map((r) => JSON.parse(r.body.toString()) as { data: { callbackType: string; data: { audio_url: string }[] } });
    expect(bodies.map((b) => [b.data.callbackType, b.data.data.length])).toEqual([['text', 0], ['first', 1], ['complete', 2]]);
    const take = (n: number) => ({
      id: `${upstreamId}-take-${n}`,
      audio_url: `${fake.url}/files/${upstreamId}-${n}.mp3`,
      stream_audio_url: `${fake.url}/files/${upstreamId}-${n}.mp3`,
      image_url: `${fake.url}/files/${upstreamId}.png`,
      prompt: '',
      model_name: 'chirp-auk',
      title: 'Drift',
      tags: 'ambient',
      createTime: '2025-01-01 00:00:00',
      duration: 3,
    });
    expect(bodies[2]).toEqual({ code: 200, msg: 'All generated successfully.', data: { callbackType: 'complete', task_id: upstreamId, data: [take(0), take(1)] } });
    expect(bodies[1]).toEqual({ code: 200, msg: 'First track generation completed.', data: { callbackType: 'first', task_id: upstreamId, data: [take(0)] } });
  });

  it('a failed task ends failed with its words, a sensitive-word one as a content refusal; its error callback is sent', async () => {
    fake.ending = { kind: 'failure', status: 'SENSITIVE_WORD_ERROR', errorCode: 400, errorMessage: 'Content contains prohibited words' };
    const { upstreamId } = (await vendor.create(account(), create(song({ description: 'a song' })))) as { upstreamId: string };
    const [callback] = await fake.finishMusic(upstreamId);
    expect(callback.body).toEqual({ code: 400, msg: 'Content contains prohibited words', data: { callbackType: 'error', task_id: upstreamId, data: [] } });
    const status = await finished(upstreamId);
    expect(status).toEqual({ state: 'failed', reason: 'Content contains prohibited words (SENSITIVE_WORD_ERROR, code 400)', secrets: [upstreamId] });
    expect(refusesContent('sunoapi', (status as { reason: string }).reason)).toBe(true);
  });

  it('a continuation of its own take: extend with its audioId at the second asked', async () => {
    const first = (await vendor.create(account(), create(song({ lyrics: 'One', style: 'folk', title: 'A' })))) as { upstreamId: string };
    await fake.finishMusic(first.upstreamId);
    const request = song({ lyrics: 'Two', style: 'folk', title: 'A II', continues: { upstreamClipId: `${first.upstreamId}-take-1`, atS: 2, upload: false } });
    const { upstreamId } = (await vendor.create(account(), create(request))) as { upstreamId: string };
    expect(fake.music.get(upstreamId)).toMatchObject({ path: '/api/v1/generate/extend', body: { defaultParamFlag: true, audioId: `${first.upstreamId}-take-1`, continueAt: 2, prompt: 'Two' } });
    await fake.finishMusic(upstreamId);
    expect(await finished(upstreamId)).toMatchObject({ state: 'succeeded', clips: [{ title: 'A II' }, { title: 'A II' }] });
  });

  it('a continuation of an upload: upload-extend with the link to our copy, which it fetches', async () => {
    const request = song({ style: 'piano', title: 'Up', instrumental: true, continues: { upstreamClipId: null, atS: 3, upload: true } });
    const source = { url: async () => `${gateway.url}/store/clip.mp3`, bytes: () => Promise.reject(new Error('not asked')) };
    const { upstreamId } = (await vendor.create(account(), create(request, { source }))) as { upstreamId: string };
    expect(fake.music.get(upstreamId)).toMatchObject({ path: '/api/v1/generate/upload-extend', body: { uploadUrl: `${gateway.url}/store/clip.mp3`, continueAt: 3, instrumental: true }, fetched: { status: 200, bytes: upload.length } });
    await expect(vendor.create(account(), create(request))).rejects.toThrow(expect.objectContaining({ constructor: UpstreamRefused, internal: true }));
  });

  it('its refusals under HTTP 200: a missing field in its words, busy, credits, credentials', async () => {
    // a style is the router's to require (the models' needsStyle); the adapter never leaves it out of its own accord
    await expect(vendor.create(account(), create(song({ lyrics: 'La' })))).rejects.toThrow(new UpstreamRefused('style is required (code 400)', 400, 'request'));
    await expect(vendor.create(account(), create(song({ lyrics: 'x'.repeat(3001), style: 'folk', title: 'T', model: 'V4' }), { model: SUNOAPI_MODELS[1] }))).rejects.toThrow(/prompt is too long: at most 3000 characters for V4 \(code 413\)/);
    fake.knobs.createBusy = 1;
    await expect(vendor.create(account(), create(song({ description: 'd' })))).rejects.toThrow(UpstreamBusy);
    fake.credits = 0;
    await expect(vendor.create(account(), create(song({ description: 'd' })))).rejects.toThrow(expect.objectContaining({ kind: 'account' }));
    await expect(vendor.create({ baseUrl: fake.url, auth: SUNOAPI.auth({ api_key: 'wrong' }) }, create(song({ description: 'd' })))).rejects.toThrow(expect.objectContaining({ kind: 'auth' }));
    expect(fake.music.size).toBe(0);
  });

  it('without a callback URL of ours it sends the placeholder they accept; the probe reads the balance', async () => {
    const { upstreamId } = (await vendor.create(account(), create(song({ description: 'd' }), { callbackUrl: undefined }))) as { upstreamId: string };
    expect(fake.music.get(upstreamId)!.body.callBackUrl).toBe('https://example.com/callback');
    const probe = SUNOAPI.probe(['music']);
    const answer = await client.call('GET', `${fake.url}${probe.path}`, { auth: account().auth, refusal: probe.refusal });
    expect(() => probe.check!(answer.json)).not.toThrow();
    const refused = await client.call('GET', `${fake.url}${probe.path}`, { auth: SUNOAPI.auth({ api_key: 'wrong' }) });
    expect(() => probe.check!(refused.json)).toThrow(expect.objectContaining({ kind: 'auth' }));
  });
});
