import sharp from 'sharp';
import type { FakeUpstream } from '../support/fake-upstreams.js';
import { type FakeBfl, startFakeBfl } from '../support/vendors/bfl/bfl.fake.js';
import { type FakeKlingImages, startFakeKling, startFakeKlingImages, startFakeKlingVideo } from '../support/vendors/kling/kling.fake.js';
import { startFakeLuma } from '../support/vendors/luma/luma.fake.js';
import { type FakeSeedance, startFakeSeedance } from '../support/vendors/seedance/seedance.fake.js';
import { type FakeMusicAggregator, startFakeMusicAggregator } from '../support/vendors/suno-aggregator/suno-aggregator.fake.js';
import type { FakeVideoVendor } from '../support/vendors/video-fake.js';
import { png } from '../support/images.js';
import { decodeMono, probeVideo } from '../support/media.js';
import { pollUntil } from '../support/poll.js';
import { startTcpProxy, type TcpProxy } from '../support/tcp-proxy.js';
import { api, queryDb, startTestApp, type TestApp } from '../support/test-app.js';

const ADMIN = 'admin-secret-0123456789';
const LUMA_KEY = 'luma-callbacks-key-0123';
const ARK_KEY = 'ark-callbacks-key-0123456789';
const KLING: [string, string] = ['ak-callbacks-00001', 'sk-callbacks-secret-01'];
const BFL_KEY = 'bfl-callbacks-key-0123456789';
const AGGREGATOR_KEY = 'aggregator-callbacks-key-01';
const WORDS = 'the render farm lost the job';
/** The safety poll of a task whose vendor was asked to call back (UPSTREAM_CALLBACK_POLL_S): far beyond any wait below. */
const SAFETY_POLL_S = 600;
/** How long a task may take to end once its vendor called back: a tenth of the safety poll, and ample on a loaded machine. */
const ENDS_WITHIN_MS = 60_000;
const EVIL = 'https://evil.example/not-the-vendors';
/** A test's own limit: its waits, each within ENDS_WITHIN_MS, and their setup. */
const TEST_MS = 3 * ENDS_WITHIN_MS;

/** What the tests need of one vendor that calls back, and of the door its tasks are made through. */
interface Vendor {
  /** The channel to leave enabled alone among those of its operation. */
  channel: string;
  /** Creates a task through a door: our id. */
  create(): Promise<string>;
  /** The task's state as its door tells it. */
  state(id: string): Promise<'working' | 'succeeded' | 'failed'>;
  /** The vendor's words, as the door gives a failed task's reason. */
  failure(id: string): Promise<string>;
  /** What the door says of a task the vendor failed (the vendor's words: WORDS unless its fake has words of its own). */
  failedWith?: string;
  /** Downloads the task's result through the door and checks it is the vendor's (its size). */
  stored(id: string): Promise<void>;
  /** The vendor's tasks: the create's body (callback_url among it) and the queries of each, by the vendor's id. */
  tasks(): Map<string, { body: Record<string, unknown>; polls: number }>;
  /** Where the vendor was asked to call back, in the create's body. */
  callbackField?: string;
  /** The vendor works on and never ends a task of itself (`on`), or goes back to its defaults. */
  hold(on: boolean): void;
  /** The vendor's tasks end failed with these words (or succeed: undefined). */
  failWith(words: string | undefined): void;
  /** The vendor ends the task and calls back: the HTTP status its callback was answered with. */
  finish(upstreamId: string): Promise<number | null | undefined>;
  /** A callback body in the vendor's shape claiming the task succeeded, its result somewhere else. */
  claim(upstreamId: string): unknown;
  /** The vendor answers each create it makes only once `until` settles (undefined: at once). */
  holdCreateAnswers?(until: Promise<unknown> | undefined): void;
}

/**
 * Every vendor the gateway asks to call back (callback_url, webhook_url, notify_hook), faked on loopback from its
 * documented shapes, with only its channel enabled: its tasks are polled on the safety net alone (600 s away), so
 * only its callback can end them in time. The vendor ends a task (succeeded or failed) and POSTs its end in its own
 * shape: the task ends with the vendor's result, stored and downloadable. A callback is a hint, never a fact: one
 * with a wrong token, or on another task's route, answers 404 and changes nothing; one that claims an end the vendor
 * does not report ends nothing.
 */
describe('vendors that call back: each callback ends its task long before the safety poll; a forged one changes nothing', () => {
  let t: TestApp;
  let key: string;
  let proxy: TcpProxy;
  let luma: FakeUpstream;
  let klingVideo: FakeVideoVendor;
  let seedance: FakeSeedance;
  let klingExpand: FakeUpstream;
  let klingImages: FakeKlingImages;
  let bfl: FakeBfl;
  let aggregator: FakeMusicAggregator;
  const channels: Record<string, { id: string; operation: string }> = {};

  beforeAll(async () => {
    [luma, klingVideo, seedance, klingExpand, klingImages, bfl, aggregator] = await Promise.all([
      startFakeLuma(LUMA_KEY),
      startFakeKlingVideo(...KLING),
      startFakeSeedance(ARK_KEY),
      startFakeKling(...KLING),
      startFakeKlingImages(...KLING),
      startFakeBfl(BFL_KEY),
      startFakeMusicAggregator(AGGREGATOR_KEY, 2),
    ]);
    luma.knobs.render = true;
    // the vendors reach the gateway on loopback: its port is known once it listens, so they are given a proxy's, in front of it
    const gateway = { host: '127.0.0.1', port: 0 };
    proxy = await startTcpProxy(gateway);
    t = await startTestApp({
      VIDEO_PROVIDER: 'relay',
      EXPAND_PROVIDER: 'relay',
      IMAGE_PROVIDER: 'relay',
      MUSIC_PROVIDER: 'relay',
      ADMIN_API_KEY: ADMIN,
      OUTBOUND_ALLOW_HOSTS: '127.0.0.1',
      RELAY_POLL_MS: '100',
      UPSTREAM_CALLBACK_BASE_URL: `http://127.0.0.1:${proxy.port}`,
      UPSTREAM_CALLBACK_POLL_S: String(SAFETY_POLL_S),
    });
    gateway.port = Number(new URL(t.url).port);
    key = await t.createKey('team-vendor-callbacks');
    const kling = { protocol: 'kling', credentials: { access_key: KLING[0], secret_key: KLING[1] } };
    await add('luma', 'video', { protocol: 'luma', base_url: luma.url, credentials: { api_key: LUMA_KEY } });
    await add('kling-video', 'video', { ...kling, base_url: klingVideo.url });
    await add('seedance', 'video', { protocol: 'seedance', base_url: seedance.url, credentials: { api_key: ARK_KEY } });
    await add('kling-expand', 'expand', { ...kling, base_url: klingExpand.url });
    await add('kling-images', 'image', { ...kling, base_url: klingImages.url });
    await add('bfl', 'image', { protocol: 'bfl', base_url: bfl.url, credentials: { api_key: BFL_KEY } });
    await add('aggregator', 'music', { protocol: 'suno', base_url: `${aggregator.url}/suno`, credentials: { api_key: AGGREGATOR_KEY } });
  }, 60_000);
  afterAll(async () => {
    await t?.close();
    await Promise.all([luma, klingVideo, seedance, klingExpand, klingImages, bfl, aggregator].map((fake) => fake?.close()));
    await proxy?.close();
  });

  const add = async (name: string, operation: string, body: Record<string, unknown>) => {
    const res = await api(t.url, 'POST', '/admin/channels', { key: ADMIN, body: { name, operations: [operation], ...body } });
    expect([name, res.status]).toEqual([name, 201]);
    channels[name] = { id: res.body.id as string, operation };
  };
  /** Only this channel enabled among those of its operation. */
  const only = async (name: string) => {
    const { operation } = channels[name];
    for (const [other, channel] of Object.entries(channels)) {
      if (channel.operation !== operation) continue;
      expect((await api(t.url, 'POST', `/admin/channels/${channel.id}/${other === name ? 'enable' : 'disable'}`, { key: ADMIN })).status).toBe(200);
    }
  };
  const callbacksMetric = async (outcome: string) => Number(new RegExp(`mgw_upstream_callbacks_total\\{outcome="${outcome}"\\} (\\d+)`).exec(await t.metrics())?.[1] ?? 0);
  const download = async (url: string) => {
    const res = await fetch(url, { headers: url.startsWith(t.url) ? { authorization: `Bearer ${key}` } : {} });
    expect([url, res.status]).toEqual([url, 200]);
    return Buffer.from(await res.arrayBuffer());
  };
  const videoOf = async (bytes: Buffer) => {
    const video = await probeVideo(bytes);
    return [video.width, video.height, Math.round(video.durationS)];
  };
  const klingState = (status: string) => (status === 'succeed' ? 'succeeded' : status === 'failed' ? 'failed' : 'working');

  /** A Suno-style aggregator behind the music door, its notify_hook called with the task as /fetch answers it. */
  const music = (fake: FakeMusicAggregator, channel: string): Vendor => ({
    channel,
    create: async () => {
      const res = await api(t.url, 'POST', '/music-a/submit/music', { key, body: { prompt: 'waves', tags: 'ambient', title: 'Sea', mv: 'chirp-auk' } });
      expect([res.status, res.body.code]).toEqual([200, 'success']);
      return res.body.data as string;
    },
    state: async (id) => {
      const { status } = (await api(t.url, 'GET', `/music-a/fetch/${id}`, { key })).body.data;
      return status === 'SUCCESS' ? 'succeeded' : status === 'FAILURE' ? 'failed' : 'working';
    },
    failure: async (id) => (await api(t.url, 'GET', `/music-a/fetch/${id}`, { key })).body.data.fail_reason,
    stored: async (id) => {
      const clips = (await api(t.url, 'GET', `/music-a/fetch/${id}`, { key })).body.data.data as { audio_url: string }[];
      expect(clips).toHaveLength(2);
      for (const clip of clips) expect((await decodeMono(await download(clip.audio_url), 'mp3')).length / 44100).toBeCloseTo(2, 1);
    },
    tasks: () => fake.music,
    callbackField: 'notify_hook',
    hold: (on) => (fake.knobs.pollsUntilDone = on ? Number.MAX_SAFE_INTEGER : 2),
    failWith: (words) => (fake.ending = words === undefined ? { kind: 'success' } : { kind: 'failure', reason: words }),
    finish: async (id) => (await fake.finishMusic(id))?.status,
    claim: (id) => ({ task_id: id, status: 'SUCCESS', fail_reason: '', data: [0, 1].map((n) => ({ id: `${id}-${n}`, status: 'complete', audio_url: `${EVIL}-${n}.mp3`, image_url: `${EVIL}.png`, metadata: { duration: 2 } })) }),
  });

  const vendors: Record<string, () => Vendor> = {
    // Luma's door, Luma's generation object
    Luma: () => ({
      channel: 'luma',
      create: async () => {
        const res = await api(t.url, 'POST', '/video-b/v1/generations', { key, body: { prompt: 'A lighthouse at dusk', resolution: '720p', duration: '5s', aspect_ratio: '16:9' } });
        expect(res.status).toBe(201);
        return res.body.id as string;
      },
      state: async (id) => {
        const { state } = (await api(t.url, 'GET', `/video-b/v1/generations/${id}`, { key })).body;
        return state === 'completed' ? 'succeeded' : state === 'failed' ? 'failed' : 'working';
      },
      failure: async (id) => (await api(t.url, 'GET', `/video-b/v1/generations/${id}`, { key })).body.failure_reason,
      stored: async (id) => expect(await videoOf(await download((await api(t.url, 'GET', `/video-b/v1/generations/${id}`, { key })).body.assets.video))).toEqual([1280, 720, 5]),
      tasks: () => luma.created,
      hold: (on) => (luma.knobs.pollsUntilDone = on ? Number.MAX_SAFE_INTEGER : 2),
      failWith: (words) => (luma.knobs.failWith = words),
      finish: async (id) => (await luma.finish!(id))?.status,
      holdCreateAnswers: (until) => (luma.knobs.createAnswerHeld = until),
      claim: (id) => ({ id, state: 'completed', failure_reason: null, assets: { video: `${EVIL}.mp4`, image: `${EVIL}.png` } }),
    }),
    // Kling's door, Kling's task record
    'Kling (video)': () => ({
      channel: 'kling-video',
      create: async () => {
        const res = await api(t.url, 'POST', '/video-a/v1/videos/text2video', { key, body: { prompt: 'A paper boat on a rainy street', duration: '5', aspect_ratio: '16:9' } });
        expect([res.status, res.body.code]).toEqual([200, 0]);
        return res.body.data.task_id as string;
      },
      state: async (id) => klingState((await api(t.url, 'GET', `/video-a/v1/videos/text2video/${id}`, { key })).body.data.task_status),
      failure: async (id) => (await api(t.url, 'GET', `/video-a/v1/videos/text2video/${id}`, { key })).body.data.task_status_msg,
      stored: async (id) => expect(await videoOf(await download((await api(t.url, 'GET', `/video-a/v1/videos/text2video/${id}`, { key })).body.data.task_result.videos[0].url))).toEqual([1280, 720, 5]),
      tasks: () => klingVideo.created,
      hold: (on) => (klingVideo.knobs.stall = on),
      failWith: (words) => (klingVideo.knobs.failWith = words),
      finish: async (id) => (await klingVideo.finish!(id))?.status,
      claim: (id) => ({ task_id: id, task_status: 'succeed', task_status_msg: '', created_at: Date.now(), updated_at: Date.now(), task_result: { videos: [{ id: `${id}-v`, url: `${EVIL}.mp4`, duration: '5' }] } }),
    }),
    // OpenAI's door, ModelArk's task object
    Seedance: () => ({
      channel: 'seedance',
      create: async () => {
        const res = await api(t.url, 'POST', '/openai/v1/videos', { key, body: { prompt: 'Tide pools at dawn', seconds: '5', size: '1280x720' } });
        expect(res.status).toBe(200);
        return res.body.id as string;
      },
      state: async (id) => {
        const { status } = (await api(t.url, 'GET', `/openai/v1/videos/${id}`, { key })).body;
        return status === 'completed' ? 'succeeded' : status === 'failed' ? 'failed' : 'working';
      },
      failure: async (id) => (await api(t.url, 'GET', `/openai/v1/videos/${id}`, { key })).body.error.message,
      stored: async (id) => expect(await videoOf(await download(`${t.url}/openai/v1/videos/${id}/content`))).toEqual([1280, 720, 5]),
      tasks: () => seedance.created,
      hold: (on) => (seedance.knobs.stall = on),
      failWith: (words) => (seedance.knobs.failWith = words),
      finish: async (id) => (await seedance.finish!(id))?.status,
      claim: (id) => ({ id, model: 'seedance-1-0-pro-250528', status: 'succeeded', content: { video_url: `${EVIL}.mp4` }, created_at: 1764201600, updated_at: 1764201660 }),
    }),
    // Kling's expand door and API, its task record
    'Kling (expand)': () => ({
      channel: 'kling-expand',
      create: async () => {
        const image = (await png(300, 300)).toString('base64');
        const res = await api(t.url, 'POST', '/video-a/v1/images/editing/expand', { key, body: { image, up_expansion_ratio: 0.1, bottom_expansion_ratio: 0.1, left_expansion_ratio: 0.1, right_expansion_ratio: 0.1, n: 1 } });
        expect([res.status, res.body.code]).toEqual([200, 0]);
        return res.body.data.task_id as string;
      },
      state: async (id) => klingState((await api(t.url, 'GET', `/video-a/v1/images/editing/expand/${id}`, { key })).body.data.task_status),
      failure: async (id) => (await api(t.url, 'GET', `/video-a/v1/images/editing/expand/${id}`, { key })).body.data.task_status_msg,
      stored: async (id) => {
        const images = (await api(t.url, 'GET', `/video-a/v1/images/editing/expand/${id}`, { key })).body.data.task_result.images as { url: string }[];
        const meta = await sharp(await download(images[0].url)).metadata();
        expect([images.length, meta.format, meta.width, meta.height]).toEqual([1, 'png', 640, 480]);
      },
      tasks: () => klingExpand.created,
      hold: (on) => (klingExpand.knobs.hold = on),
      failWith: (words) => (klingExpand.knobs.failWith = words),
      finish: async (id) => (await klingExpand.finish!(id))?.status,
      holdCreateAnswers: (until) => (klingExpand.knobs.createAnswerHeld = until),
      claim: (id) => ({ task_id: id, task_status: 'succeed', task_status_msg: '', created_at: Date.now(), updated_at: Date.now(), task_result: { images: [{ index: 0, url: `${EVIL}.png` }] } }),
    }),
    // Kling's image door and API, its task record (it also calls back when a task starts processing)
    'Kling (image)': () => ({
      channel: 'kling-images',
      create: async () => {
        const res = await api(t.url, 'POST', '/video-a/v1/images/generations', { key, body: { prompt: 'A lemon on a blue plate', aspect_ratio: '16:9' } });
        expect([res.status, res.body.code]).toEqual([200, 0]);
        return res.body.data.task_id as string;
      },
      state: async (id) => klingState((await api(t.url, 'GET', `/video-a/v1/images/generations/${id}`, { key })).body.data.task_status),
      failure: async (id) => (await api(t.url, 'GET', `/video-a/v1/images/generations/${id}`, { key })).body.data.task_status_msg,
      stored: async (id) => {
        const images = (await api(t.url, 'GET', `/video-a/v1/images/generations/${id}`, { key })).body.data.task_result.images as { url: string }[];
        const meta = await sharp(await download(images[0].url)).metadata();
        expect([images.length, meta.format, meta.width! / meta.height!]).toEqual([1, 'png', expect.closeTo(16 / 9, 1)]);
      },
      tasks: () => klingImages.tasks,
      hold: (on) => (klingImages.knobs.hold = on),
      failWith: (words) => (klingImages.knobs.failWith = words),
      finish: async (id) => {
        await klingImages.finish(id);
        return klingImages.tasks.get(id)!.callbacks.at(-1)?.answered;
      },
      claim: (id) => ({ task_id: id, task_status: 'succeed', task_status_msg: '', created_at: Date.now(), updated_at: Date.now(), task_result: { images: [{ index: 0, url: `${EVIL}.png` }] } }),
    }),
    // BFL behind Kling's image door, its webhook_url called with the task as get_result answers it
    BFL: () => ({
      channel: 'bfl',
      create: async () => {
        const res = await api(t.url, 'POST', '/video-a/v1/images/generations', { key, body: { prompt: 'A lemon on a blue plate', aspect_ratio: '16:9' } });
        expect([res.status, res.body.code]).toEqual([200, 0]);
        return res.body.data.task_id as string;
      },
      state: async (id) => klingState((await api(t.url, 'GET', `/video-a/v1/images/generations/${id}`, { key })).body.data.task_status),
      failure: async (id) => (await api(t.url, 'GET', `/video-a/v1/images/generations/${id}`, { key })).body.data.task_status_msg,
      failedWith: 'the task ended in Error: the generation failed',
      stored: async (id) => {
        const images = (await api(t.url, 'GET', `/video-a/v1/images/generations/${id}`, { key })).body.data.task_result.images as { url: string }[];
        const meta = await sharp(await download(images[0].url)).metadata();
        expect([images.length, meta.format, meta.width! / meta.height!]).toEqual([1, 'png', expect.closeTo(16 / 9, 1)]);
      },
      tasks: () => bfl.tasks,
      callbackField: 'webhook_url',
      hold: (on) => (bfl.knobs.pollsUntilReady = on ? Number.MAX_SAFE_INTEGER : 2),
      failWith: (words) => (bfl.knobs.fail = words !== undefined),
      finish: (id) => bfl.finish(id),
      claim: (id) => ({ id, status: 'Ready', result: { sample: `${EVIL}.png`, prompt: 'A lemon on a blue plate', seed: 1 }, progress: null, details: null, preview: null }),
    }),
    'Suno aggregator (music)': () => music(aggregator, 'aggregator'),
  };

  describe.each(Object.keys(vendors))('%s', (name) => {
    let vendor: Vendor;
    beforeAll(async () => {
      vendor = vendors[name]();
      await only(vendor.channel);
      vendor.hold(true);
    });
    afterAll(() => {
      vendor.hold(false);
      vendor.failWith(undefined);
    });

    /** The vendor's id of our task: the create whose callback URL names it. */
    const upstreamOf = async (id: string) =>
      (await pollUntil(async () => [...vendor.tasks().entries()].find(([, task]) => String(task.body[vendor.callbackField ?? 'callback_url']).includes(`/upstream-callbacks/${id}/`))?.[0], Boolean, { what: `the create of ${id} at the vendor` }))!;
    const callbackRoute = (upstreamId: string) => new URL(String(vendor.tasks().get(upstreamId)!.body[vendor.callbackField ?? 'callback_url'])).pathname;
    const polls = (upstreamId: string) => vendor.tasks().get(upstreamId)!.polls;
    /** The task's watch, once it waits on the vendor: polled next on the safety net, and not now. */
    const watch = (id: string) =>
      queryDb<{ callback_pending: boolean; poll_at: Date; in_s: number; lease_until: Date | null }>(t.db, 'SELECT callback_pending, poll_at, extract(epoch FROM poll_at - now())::float8 AS in_s, lease_until FROM task_watches WHERE task_id = $1', [id]);
    const watched = async (id: string) => {
      const [row] = await pollUntil(() => watch(id), (rows) => rows.length === 1, { what: `task ${id} to wait on the vendor` });
      expect(row.callback_pending).toBe(true);
      // the safety poll (600 s ±10 %) is far beyond every deadline below: only a callback can end the task in time
      expect(row.in_s).toBeGreaterThan(SAFETY_POLL_S * 0.9 - 60);
      return row;
    };
    /** Creates a task through the door; answers it once it waits on the vendor (its id there), unpolled. */
    const waiting = async () => {
      const id = await vendor.create();
      const upstreamId = await upstreamOf(id);
      await watched(id);
      expect(polls(upstreamId)).toBe(0);
      expect(await vendor.state(id)).toBe('working');
      return { id, upstreamId };
    };
    const ended = (id: string) => pollUntil(() => vendor.state(id), (s) => s !== 'working', { timeoutMs: ENDS_WITHIN_MS, what: `task ${id} to end through its callback` });

    it('ends a task that succeeded through its callback, its result stored and downloadable, without waiting for the safety poll', async () => {
      const { id, upstreamId } = await waiting();
      const polledBefore = await callbacksMetric('polled');
      const started = Date.now();
      expect(await vendor.finish(upstreamId)).toBe(200);
      expect(await ended(id)).toBe('succeeded');
      expect(Date.now() - started).toBeLessThan(ENDS_WITHIN_MS);
      await vendor.stored(id);
      expect(polls(upstreamId)).toBeGreaterThanOrEqual(1);
      expect(await callbacksMetric('polled')).toBeGreaterThanOrEqual(polledBefore + 1);
      expect(await watch(id)).toEqual([]);
    }, TEST_MS);

    it('ends a task the vendor failed through its callback, with the vendor\'s words', async () => {
      vendor.failWith(WORDS);
      try {
        const { id, upstreamId } = await waiting();
        expect(await vendor.finish(upstreamId)).toBe(200);
        expect(await ended(id)).toBe('failed');
        expect(await vendor.failure(id)).toContain(vendor.failedWith ?? WORDS);
      } finally {
        vendor.failWith(undefined);
      }
    }, TEST_MS);

    it("a callback in its shape with a wrong token, or on another task's route, answers 404 and changes nothing; the real one still ends the task", async () => {
      const a = await waiting();
      const b = await waiting();
      const [watchA, watchB] = [(await watch(a.id))[0], (await watch(b.id))[0]];
      const tokenA = callbackRoute(a.upstreamId).split('/')[3];
      const tokenB = callbackRoute(b.upstreamId).split('/')[3];
      expect(tokenA).not.toBe(tokenB);
      const [forgedBefore, polledBefore] = [await callbacksMetric('forged'), await callbacksMetric('polled')];
      // one character off; A's token on B's route; B's token on A's route
      const wrong = `${tokenA.slice(0, -1)}${tokenA.endsWith('A') ? 'B' : 'A'}`;
      for (const [route, claimed] of [
        [`/upstream-callbacks/${a.id}/${wrong}`, a.upstreamId],
        [`/upstream-callbacks/${b.id}/${tokenA}`, b.upstreamId],
        [`/upstream-callbacks/${a.id}/${tokenB}`, a.upstreamId],
      ]) {
        const res = await api(t.url, 'POST', route, { body: vendor.claim(claimed) });
        expect([route, res.status, res.body]).toEqual([route, 404, { code: 1203, message: 'No such callback', request_id: expect.any(String) }]);
      }
      expect([await callbacksMetric('forged'), await callbacksMetric('polled')]).toEqual([forgedBefore + 3, polledBefore]);
      // nothing moved: neither task was polled, nor its safety poll brought forward, nor ended
      expect([polls(a.upstreamId), polls(b.upstreamId)]).toEqual([0, 0]);
      expect([(await watch(a.id))[0].poll_at, (await watch(b.id))[0].poll_at]).toEqual([watchA.poll_at, watchB.poll_at]);
      expect([await vendor.state(a.id), await vendor.state(b.id)]).toEqual(['working', 'working']);
      // the vendor's own callback on A's route ends A, and A only
      expect(await vendor.finish(a.upstreamId)).toBe(200);
      expect(await ended(a.id)).toBe('succeeded');
      await vendor.stored(a.id);
      expect([polls(b.upstreamId), await vendor.state(b.id)]).toEqual([0, 'working']);
      expect(await vendor.finish(b.upstreamId)).toBe(200);
      expect(await ended(b.id)).toBe('succeeded');
    }, TEST_MS);

    it('a callback claiming success while the vendor still works ends nothing: the task is asked about once and waits on; the real end comes with the next', async () => {
      const { id, upstreamId } = await waiting();
      const polledBefore = await callbacksMetric('polled');
      const lie = await api(t.url, 'POST', callbackRoute(upstreamId), { body: vendor.claim(upstreamId) });
      expect([lie.status, lie.body]).toEqual([200, { received: true }]);
      // the poll it asked for: the vendor says it still works, and the poll's round lets go of the task, still watched
      await pollUntil(async () => polls(upstreamId), (n) => n >= 1, { timeoutMs: ENDS_WITHIN_MS, what: 'the poll the callback asked for' });
      // (a vendor that calls back on each change of state, as Kling does, calls back "processing" after that first
      // poll: a true hint, polled too; so wait for the watch to settle, neither in flight nor due, before judging it)
      const [row] = await pollUntil(() => watch(id), (rows) => rows.length === 1 && rows[0].lease_until === null && rows[0].in_s > 0, { timeoutMs: ENDS_WITHIN_MS, what: 'the poll to be written back' });
      expect(row.in_s).toBeGreaterThan(SAFETY_POLL_S * 0.9 - 60);
      expect(await vendor.state(id)).toBe('working');
      expect(await callbacksMetric('polled')).toBeGreaterThanOrEqual(polledBefore + 1);
      // the vendor's end, called back: the task ends with the vendor's result, not the one the lie named
      expect(await vendor.finish(upstreamId)).toBe(200);
      expect(await ended(id)).toBe('succeeded');
      await vendor.stored(id);
    }, TEST_MS);

    // Before: a callback that came while the task did not wait yet found no watch to bring forward and was dropped
    // (counted `unknown`): a vendor that ended a task before its create was answered had it wait for the safety poll.
    // The vendors whose fakes can answer a create late.
    if (vendors[name]().holdCreateAnswers)
      it('a callback that comes before the vendor has answered the create ends the task as soon as it waits', async () => {
        // the create's answer comes only when the test lets it, after the vendor made the task, ended it and called
        // back: the task surely does not wait yet when the callback comes, however slow the machine (an answer held
        // a few seconds only made that likely)
        let answerCreates = () => undefined as void;
        vendor.holdCreateAnswers!(new Promise<void>((resolve) => (answerCreates = resolve)));
        try {
          const id = await vendor.create();
          const upstreamId = await upstreamOf(id);
          const earlyBefore = await callbacksMetric('early');
          expect(await vendor.finish(upstreamId)).toBe(200);
          expect(await callbacksMetric('early')).toBe(earlyBefore + 1);
          expect(await watch(id)).toEqual([]);
          answerCreates();
          expect(await ended(id)).toBe('succeeded');
          await vendor.stored(id);
        } finally {
          answerCreates();
          vendor.holdCreateAnswers!(undefined);
        }
      }, TEST_MS);

    // Before: the poll a callback asked for, the first of a channel, went out as the aggregator's batch fetch, which
    // this account refuses (404): the task was taken as unanswered and waited for the safety poll.
    if (name === 'Suno aggregator (music)')
      it("on an aggregator that refuses batch fetches, the first callback's poll on a new channel (a batch fetch, refused) still ends its task", async () => {
        const main = vendor;
        const other = await startFakeMusicAggregator(AGGREGATOR_KEY, 2);
        try {
          await add('aggregator-2', 'music', { protocol: 'suno', base_url: `${other.url}/suno`, credentials: { api_key: AGGREGATOR_KEY } });
          vendor = music(other, 'aggregator-2');
          vendor.hold(true);
          await only('aggregator-2');
          const { id, upstreamId } = await waiting();
          expect(await vendor.finish(upstreamId)).toBe(200);
          expect(await ended(id)).toBe('succeeded');
          await vendor.stored(id);
          expect(other.server.requests.filter((r) => r.method === 'POST' && r.url === '/suno/fetch')).toHaveLength(1);
        } finally {
          vendor = main;
          await only('aggregator');
          await other.close();
        }
      }, TEST_MS);
  });
});
