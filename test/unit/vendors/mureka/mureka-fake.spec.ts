import { UpstreamBusy, UpstreamRefused, type UpstreamClient } from '../../../../src/infra/relay/upstream-client.js';
import type { MusicCreate, MusicModelSpec, MusicRequest, MusicStatus } from '../../../../src/vendors/contracts/music-vendor.js';
import type { VendorAccount } from '../../../../src/vendors/contracts/vendor.js';
import { MUREKA_MODELS } from '../../../../src/vendors/mureka/mureka-models.js';
import { MurekaMusicVendor } from '../../../../src/vendors/mureka/mureka-music.vendor.js';
import { MUREKA } from '../../../../src/vendors/mureka/mureka.vendor.js';
import { decodeMono, testMp3, wav } from '../../../support/media.js';
import { type FakeMureka, startFakeMureka } from '../../../support/vendors/mureka/mureka.fake.js';
import { loopbackUpstreamClient } from '../../../support/vendors/upstream-client.js';

const song = (over: Partial<MusicRequest> = {}): MusicRequest => ({ lyrics: null, description: null, style: null, avoidStyle: null, title: null, model: 'mureka-8', instrumental: false, durationS: null, continues: null, ...over });
const spec = (id = 'mureka-8'): MusicModelSpec => MUREKA_MODELS.find((m) => m.id === id)!;

/** An error a promise rejects with. */
async function thrown(promise: Promise<unknown>): Promise<unknown> {
  return promise.then(
    () => undefined,
    (err: unknown) => err,
  );
}

/**
 * Mureka's music adapter against the Mureka fake (its documented routes and shapes), through the real
 * UpstreamClient: what each route received, in Mureka's words, and what the adapter read back.
 */
describe("Mureka's music adapter against the fake", () => {
  let fake: FakeMureka;
  let client: UpstreamClient;
  let vendor: MurekaMusicVendor;
  let account: VendorAccount;
  const create = (request: MusicRequest, more: Partial<MusicCreate> = {}): MusicCreate => ({ request, model: spec(request.model), taskId: 'task-1', ...more });
  /**
   * Polls until the task ends (the fake ends it at its second query). Not `once` (the poller's short time limit):
   * the fake renders a take's MP3 with ffmpeg in the query that ends it, which a loaded machine may take over 10 s to do.
   */
  const ended = async (upstreamId: string): Promise<MusicStatus> => {
    for (let i = 0; i < 5; i++) {
      const status = await vendor.query(account, upstreamId, false);
      if (status.state !== 'working') return status;
    }
    throw new Error('the task never ended');
  };
  beforeAll(async () => {
    fake = await startFakeMureka('mk-test', 10);
    client = loopbackUpstreamClient();
    vendor = new MurekaMusicVendor(client);
    account = { baseUrl: fake.url, auth: MUREKA.auth({ api_key: 'mk-test' }) };
  });
  afterAll(() => fake.close());
  beforeEach(() => {
    fake.ending = { kind: 'success' };
    fake.lyricsAsked.length = 0;
  });

  it('a song with lyrics: POST /v1/song/generate in its words, then its two takes, each a decodable MP3 with its lyrics timed', async () => {
    const answer = await vendor.create(account, create(song({ lyrics: '[Verse]\nLight on the sea\n[Chorus]\nHold on', style: 'folk, warm' })));
    if (!('upstreamId' in answer)) throw new Error('a task was expected');
    expect(fake.tasks.get(answer.upstreamId)).toMatchObject({ kind: 'song', body: { lyrics: '[Verse]\nLight on the sea\n[Chorus]\nHold on', model: 'mureka-8', n: 2, prompt: 'folk, warm' } });
    expect(await vendor.query(account, answer.upstreamId, true)).toEqual({ state: 'working' });
    const status = await ended(answer.upstreamId);
    if (status.state !== 'succeeded') throw new Error(`succeeded expected: ${JSON.stringify(status)}`);
    expect(status.clips).toHaveLength(2);
    expect(status.clips[0]).toMatchObject({ upstreamId: `${answer.upstreamId}0`, lyrics: '[Verse]\nLight on the sea\n\n[Chorus]\nHold on' });
    expect(status.clips[0].timedLyrics?.map((w) => w.word)).toEqual(['Light', 'on', 'the', 'sea', 'Hold', 'on']);
    const audio = await client.download(status.clips[1].audioUrl!, 10_000_000);
    expect((await decodeMono(audio, 'mp3')).length / 44_100).toBeCloseTo(10, 0);
  });

  it('a description song: its lyrics written by POST /v1/lyrics/generate, then sung', async () => {
    const answer = await vendor.create(account, create(song({ description: 'a calm night by the harbour', model: 'auto' })));
    expect(fake.lyricsAsked).toEqual([{ prompt: 'a calm night by the harbour' }]);
    const task = fake.tasks.get((answer as { upstreamId: string }).upstreamId)!;
    expect(task.body).toEqual({ lyrics: expect.stringContaining('In the shadows of a calm night by the harbour'), model: 'auto', n: 2 });
  });

  it('an instrumental: POST /v1/instrumental/generate, asked about at its own query route', async () => {
    const answer = await vendor.create(account, create(song({ instrumental: true, style: 'lofi, piano', model: 'mureka-7.6' })));
    const upstreamId = (answer as { upstreamId: string }).upstreamId;
    expect(upstreamId).toMatch(/^instrumental:\d+$/);
    expect(fake.tasks.get(upstreamId.slice('instrumental:'.length))).toMatchObject({ kind: 'instrumental', body: { model: 'mureka-7.6', n: 2, prompt: 'lofi, piano' } });
    const status = await ended(upstreamId);
    expect(status).toMatchObject({ state: 'succeeded', clips: [{ audioUrl: expect.stringMatching(/\.mp3$/) }, { audioUrl: expect.stringMatching(/\.mp3$/) }] });
    expect((status as { clips: object[] }).clips[0]).not.toHaveProperty('lyrics');
  });

  it('a continuation of its own take: POST /v1/song/extend with its song_id and extend_at in milliseconds; its takes whole songs, from the start', async () => {
    const first = (await vendor.create(account, create(song({ lyrics: '[Verse]\nOne' })))) as { upstreamId: string };
    const made = (await ended(first.upstreamId)) as Extract<MusicStatus, { state: 'succeeded' }>;
    const answer = (await vendor.create(account, create(song({ lyrics: '[Verse]\nTwo', continues: { upstreamClipId: made.clips[1].upstreamId!, atS: 9.25, upload: false } })))) as { upstreamId: string };
    expect(answer.upstreamId).toMatch(/^extend:\d+$/);
    expect(fake.tasks.get(answer.upstreamId.slice('extend:'.length))).toMatchObject({ kind: 'extend', body: { song_id: made.clips[1].upstreamId, extend_at: 9250, lyrics: '[Verse]\nTwo' } });
    const extended = (await ended(answer.upstreamId)) as Extract<MusicStatus, { state: 'succeeded' }>;
    expect(extended.clips).toEqual([expect.objectContaining({ lyrics: '[Verse]\nTwo', fromStart: true }), expect.objectContaining({ fromStart: true })]);
    // its words are timed on the whole track: sung after the cut, within the 10 s made
    expect(extended.clips[0].timedLyrics).toEqual([{ word: 'Two', startS: 9.25, endS: 19.25 }]);
    // the clip up to 9.25 s, then the 10 s Mureka made
    const audio = await client.download(extended.clips[0].audioUrl!, 10_000_000);
    expect((await decodeMono(audio, 'mp3')).length / 44_100).toBeCloseTo(19.25, 0);
  });

  it('a continuation of a WAV upload: encoded to MP3, uploaded (purpose audio), then extended by its upload_audio_id', async () => {
    const clip = wav(12);
    const answer = (await vendor.create(account, create(song({ continues: { upstreamClipId: null, atS: 10, upload: true } }), { source: { url: () => Promise.reject(new Error('not used')), bytes: async () => ({ bytes: clip, format: 'wav', durationS: 12 }) } }))) as { upstreamId: string };
    const body = fake.tasks.get(answer.upstreamId.slice('extend:'.length))!.body;
    expect(Object.keys(body).sort()).toEqual(['extend_at', 'upload_audio_id']);
    expect(body.extend_at).toBe(10_000);
    const upload = fake.uploads.get(String(body.upload_audio_id))!;
    expect([upload.purpose, upload.filename, upload.type]).toEqual(['audio', 'clip.mp3', 'audio/mpeg']);
    expect((await decodeMono(upload.bytes, 'mp3')).length / 44_100).toBeCloseTo(12, 0);
  });

  it('an MP3 upload goes as it is', async () => {
    const mp3 = testMp3(9);
    const answer = (await vendor.create(account, create(song({ lyrics: 'On', continues: { upstreamClipId: null, atS: 8, upload: true } }), { source: { url: () => Promise.reject(new Error('not used')), bytes: async () => ({ bytes: mp3, format: 'mp3', durationS: 9 }) } }))) as { upstreamId: string };
    expect(fake.uploads.get(String(fake.tasks.get(answer.upstreamId.slice('extend:'.length))!.body.upload_audio_id))!.bytes.equals(mp3)).toBe(true);
  });

  it('a failed or timed-out task: failed with its words', async () => {
    fake.ending = { kind: 'failed', reason: 'The lyrics contain sensitive content' };
    const failed = (await vendor.create(account, create(song({ lyrics: 'x' })))) as { upstreamId: string };
    expect(await ended(failed.upstreamId)).toEqual({ state: 'failed', reason: 'The lyrics contain sensitive content', secrets: [failed.upstreamId] });
    fake.ending = { kind: 'timeouted' };
    const late = (await vendor.create(account, create(song({ lyrics: 'x' })))) as { upstreamId: string };
    expect(await ended(late.upstreamId)).toEqual({ state: 'failed', reason: 'the task timed out', secrets: [late.upstreamId] });
  });

  it("refusals as Mureka words them: busy, out of quota (the account's), a bad key, a bad request", async () => {
    fake.knobs.createBusy = 1;
    expect(await thrown(vendor.create(account, create(song({ lyrics: 'x' }))))).toBeInstanceOf(UpstreamBusy);
    fake.quotaExceeded = 1;
    expect(await thrown(vendor.create(account, create(song({ lyrics: 'x' }))))).toEqual(expect.objectContaining({ constructor: UpstreamRefused, kind: 'account', status: 429 }));
    expect(await thrown(vendor.create({ ...account, auth: MUREKA.auth({ api_key: 'wrong' }) }, create(song({ lyrics: 'x' }))))).toEqual(expect.objectContaining({ kind: 'auth', message: 'Invalid Authentication' }));
    expect(await thrown(vendor.create(account, create(song({ lyrics: 'x'.repeat(3001) }))))).toEqual(expect.objectContaining({ kind: 'request', status: 400, message: 'lyrics must be at most 3000 characters' }));
  });

  it('the test call (GET /v1/account/billing) passes with the key and is refused without it', async () => {
    const probe = MUREKA.probe(['music']);
    expect((await client.call('GET', `${fake.url}${probe.path}`, { auth: account.auth, refusal: probe.refusal, once: true })).json).toMatchObject({ balance: 12_000 });
    expect(await thrown(client.call('GET', `${fake.url}${probe.path}`, { auth: MUREKA.auth({ api_key: 'wrong' }), refusal: probe.refusal, once: true }))).toEqual(expect.objectContaining({ kind: 'auth' }));
  });
});
