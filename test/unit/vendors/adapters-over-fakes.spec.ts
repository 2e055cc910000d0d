import sharp from 'sharp';
import type { AppConfig } from '../../../src/infra/config/app-config.js';
import { BflImageVendor, BFL_IMAGE_MODELS } from '../../../src/vendors/bfl/bfl-image.vendor.js';
import { BFL } from '../../../src/vendors/bfl/bfl.vendor.js';
import type { ImageStatus } from '../../../src/vendors/contracts/image-vendor.js';
import { GEMINI_IMAGE_MODELS, GeminiImageVendor } from '../../../src/vendors/google/gemini-image.vendor.js';
import { GOOGLE } from '../../../src/vendors/google/google.vendor.js';
import { OPENAI_IMAGE_MODELS, OpenAIImageVendor } from '../../../src/vendors/openai/openai-image.vendor.js';
import { OPENAI } from '../../../src/vendors/openai/openai.vendor.js';
import { StabilityExpandVendor } from '../../../src/vendors/stability/stability-expand.vendor.js';
import { STABILITY_IMAGE_MODELS, StabilityImageVendor } from '../../../src/vendors/stability/stability-image.vendor.js';
import { STABILITY } from '../../../src/vendors/stability/stability.vendor.js';
import { SunoAudioVendor } from '../../../src/vendors/suno-aggregator/suno-audio.vendor.js';
import { SUNO_AGGREGATOR } from '../../../src/vendors/suno-aggregator/suno-aggregator.vendor.js';
import { SunoMusicVendor } from '../../../src/vendors/suno-aggregator/suno-music.vendor.js';
import { KlingExpandVendor } from '../../../src/vendors/kling/kling-expand.vendor.js';
import { KLING_IMAGE_MODELS, KlingImageVendor } from '../../../src/vendors/kling/kling-image.vendor.js';
import { KLING } from '../../../src/vendors/kling/kling.vendor.js';
import { startFakeKling, startFakeKlingImages } from '../../support/vendors/kling/kling.fake.js';
import { png } from '../../support/images.js';
import { imageCreate, plainUpstreamClient } from '../../support/plain-upstream-client.js';
import { pollUntil } from '../../support/poll.js';
import { startFakeBfl } from '../../support/vendors/bfl/bfl.fake.js';
import { startFakeGemini } from '../../support/vendors/google/gemini.fake.js';
import { startFakeOpenAIImages } from '../../support/vendors/openai/openai.fake.js';
import { startFakeStability, startFakeStabilityImages } from '../../support/vendors/stability/stability.fake.js';
import { startFakeMusicAggregator } from '../../support/vendors/suno-aggregator/suno-aggregator.fake.js';
import { imageRequest, modelOf } from './image-fixtures.js';
import type { LyricsStatus } from '../../../src/vendors/contracts/lyrics-vendor.js';
import { MINIMAX_LYRICS_MODELS, MinimaxLyricsVendor } from '../../../src/vendors/minimax/minimax-lyrics.vendor.js';
import { MINIMAX } from '../../../src/vendors/minimax/minimax.vendor.js';
import { MUREKA_LYRICS_MODELS, MurekaLyricsVendor } from '../../../src/vendors/mureka/mureka-lyrics.vendor.js';
import { MUREKA } from '../../../src/vendors/mureka/mureka.vendor.js';
import { SUNOAPI_LYRICS_MODELS, SunoapiLyricsVendor } from '../../../src/vendors/sunoapi/sunoapi-lyrics.vendor.js';
import { SUNOAPI } from '../../../src/vendors/sunoapi/sunoapi.vendor.js';
import { startFakeMinimax } from '../../support/vendors/minimax/minimax.fake.js';
import { startFakeMureka } from '../../support/vendors/mureka/mureka.fake.js';
import { startFakeSunoapi } from '../../support/vendors/sunoapi/sunoapi.fake.js';

const KEY = 'key-0123456789abcdef';

/**
 * Each adapter's calls, thin around its pure mapping and reading: driven alone (no app, no database) against its
 * vendor's fake on loopback, through the UpstreamClient the relay has. What the vendor received is the mapping;
 * what the adapter answers is the reading.
 */
describe('adapters over their vendors’ fakes', () => {
  const client = plainUpstreamClient();

  it('OpenAI: a generation, and an edit with its mask (multipart)', async () => {
    const fake = await startFakeOpenAIImages(KEY);
    try {
      const vendor = new OpenAIImageVendor(client);
      const account = { baseUrl: fake.url, auth: OPENAI.auth({ api_key: KEY }) };
      const made = await vendor.create(account, imageCreate(modelOf(OPENAI_IMAGE_MODELS, 'gpt-image-1'), imageRequest({ size: '1024x1024' })));
      expect(['made' in made && made.made.length, fake.received.at(-1)?.path]).toEqual([1, '/v1/images/generations']);
      const photo = { bytes: await png(64, 64), format: 'png' as const, width: 64, height: 64 };
      const mask = { bytes: await sharp({ create: { width: 64, height: 64, channels: 4, background: { r: 0, g: 0, b: 0, alpha: 0 } } }).png().toBuffer(), format: 'png' as const, width: 64, height: 64 };
      const edited = await vendor.create(account, imageCreate(modelOf(OPENAI_IMAGE_MODELS, 'gpt-image-1'), imageRequest({ mode: 'edit', images: 1, mask: true }), [photo], mask));
      expect(['made' in edited && edited.made.length, fake.received.at(-1)?.path, fake.received.at(-1)?.files?.map((f) => f.field)]).toEqual([1, '/v1/images/edits', ['image[]', 'mask']]);
    } finally {
      await fake.close();
    }
  });

  it('BFL: a create answered with its polling_url, polled until Ready', async () => {
    const fake = await startFakeBfl(KEY);
    try {
      const vendor = new BflImageVendor(client);
      const account = { baseUrl: fake.url, auth: BFL.auth({ api_key: KEY }) };
      const answer = (await vendor.create(account, imageCreate(modelOf(BFL_IMAGE_MODELS, 'flux-2-pro'), imageRequest({ size: '512x512' })))) as { upstreamId: string };
      expect(fake.received.at(-1)).toEqual({ model: 'flux-2-pro', body: { prompt: 'A lighthouse at dusk', width: 512, height: 512, output_format: 'png' } });
      const ended = await pollUntil(() => vendor.query(account, answer.upstreamId, true), (s: ImageStatus) => s.state !== 'working', { timeoutMs: 10_000, what: 'the BFL task' });
      expect(ended.state).toBe('succeeded');
      expect(await vendor.query(account, `${fake.url}/v1/get_result?id=nope`, true)).toEqual({ state: 'failed', reason: 'the upstream no longer has the task (Task not found)' });
      expect(await vendor.query({ ...account, baseUrl: 'https://elsewhere.example' }, answer.upstreamId, true)).toEqual({ state: 'failed', reason: "the task's polling_url is not on the channel's upstream any more" });
    } finally {
      await fake.close();
    }
  });

  it('Gemini: n images are n calls', async () => {
    const fake = await startFakeGemini(KEY);
    try {
      const vendor = new GeminiImageVendor(client);
      const made = await vendor.create({ baseUrl: fake.baseUrl, auth: GOOGLE.auth({ api_key: KEY }) }, imageCreate(modelOf(GEMINI_IMAGE_MODELS, 'gemini-2.5-flash-image'), imageRequest({ n: 2, aspectRatio: '1:1' })));
      expect(['made' in made && made.made.length, fake.received.length]).toEqual([2, 2]);
    } finally {
      await fake.close();
    }
  });

  it('Stability: a generation and an inpaint; an outpaint of n images is n calls', async () => {
    const [images, outpaint] = await Promise.all([startFakeStabilityImages(KEY), startFakeStability(KEY)]);
    try {
      const auth = STABILITY.auth({ api_key: KEY });
      const vendor = new StabilityImageVendor(client);
      const made = await vendor.create({ baseUrl: images.url, auth }, imageCreate(modelOf(STABILITY_IMAGE_MODELS, 'core'), imageRequest({ aspectRatio: '16:9' })));
      expect(['made' in made && made.made.length, images.received.at(-1)?.path]).toEqual([1, 'generate/core']);
      const photo = { bytes: await png(256, 256), format: 'png' as const, width: 256, height: 256 };
      await vendor.create({ baseUrl: images.url, auth }, imageCreate(modelOf(STABILITY_IMAGE_MODELS, 'core'), imageRequest({ mode: 'edit', images: 1, mask: true }), [photo], photo));
      expect(images.received.at(-1)?.path).toBe('edit/inpaint');
      const expand = new StabilityExpandVendor(client, { images: { maxPixels: 50_000_000, maxSide: 16_384 } } as unknown as AppConfig);
      const request = { up_ratio: 0.25, bottom_ratio: 0, left_ratio: 0, right_ratio: 0.5, n: 2, watermark: false };
      expect(expand.unmet(request, { width: 256, height: 256 })).toBeNull();
      const expanded = await expand.create({ baseUrl: outpaint.url, auth }, { request, taskId: 't', image: { bytes: async () => photo } });
      expect(['made' in expanded && expanded.made.map((m) => [m.width, m.height, m.contentType]), outpaint.received.map((r) => r.fields)]).toEqual([
        [[384, 320, 'image/png'], [384, 320, 'image/png']],
        [0, 1].map(() => ({ left: '0', right: '128', up: '64', down: '0', output_format: 'png' })),
      ]);
      outpaint.knobs.moderate = true;
      await expect(expand.create({ baseUrl: outpaint.url, auth }, { request, taskId: 't', image: { bytes: async () => photo } })).rejects.toMatchObject({ kind: 'request', message: expect.stringMatching(/moderation refused the request: .*content_moderation|moderation refused/) });
    } finally {
      await Promise.all([images.close(), outpaint.close()]);
    }
  });

  it('the Suno aggregator: a song submitted, fetched alone and with others; an upload by URL', async () => {
    const fake = await startFakeMusicAggregator(KEY, 1);
    try {
      const account = { baseUrl: `${fake.url}/suno`, auth: SUNO_AGGREGATOR.auth({ api_key: KEY }) };
      const music = new SunoMusicVendor(client);
      const request = { lyrics: 'la la', description: null, style: 'folk', avoidStyle: null, title: 'Dusk', model: 'chirp-v4', instrumental: false, durationS: null, continues: null };
      const { upstreamId: id } = (await music.create(account, { request, model: music.models.find((m) => m.id === 'chirp-v4')!, taskId: 't-1' })) as { upstreamId: string };
      expect(fake.music.get(id)?.body).toEqual({ mv: 'chirp-v4', make_instrumental: false, prompt: 'la la', tags: 'folk', title: 'Dusk' });
      const ended = await pollUntil(() => music.query(account, id, true), (s) => s.state !== 'working', { timeoutMs: 10_000, what: 'the song' });
      expect([ended.state, ended.state === 'succeeded' && ended.clips.length]).toEqual(['succeeded', 2]);
      // this fake has no batch fetch: the account refuses it, and its tasks are asked one by one
      expect(await music.queryMany(account, [id])).toBeNull();
      const audio = new SunoAudioVendor(client);
      const upload = await audio.create(account, 'https://files.example/a.mp3');
      expect(await audio.query(account, upload, true)).toEqual({ state: 'ready', facts: { format: 'wav', durationS: 12, sizeBytes: 1000, sha256: 'cd'.repeat(32) } });
    } finally {
      await fake.close();
    }
  });

  it("Kling: an image generation and an expand, each with our id as external_task_id, polled to the end and found by our id", async () => {
    const [images, expand] = await Promise.all([startFakeKlingImages('ak-unit-0001', 'sk-unit-secret-0001'), startFakeKling('ak-unit-0001', 'sk-unit-secret-0001')]);
    try {
      const auth = KLING.auth({ access_key: 'ak-unit-0001', secret_key: 'sk-unit-secret-0001' });
      const vendor = new KlingImageVendor(client);
      const account = { baseUrl: images.url, auth };
      const create = imageCreate(modelOf(KLING_IMAGE_MODELS, 'kling-v2-1'), imageRequest({ aspectRatio: '1:1' }));
      const answer = (await vendor.create(account, create)) as { upstreamId: string };
      const ended = await pollUntil(() => vendor.query(account, answer.upstreamId, true), (s: ImageStatus) => s.state !== 'working', { timeoutMs: 10_000, what: 'the Kling image task' });
      expect(ended.state).toBe('succeeded');
      expect((await vendor.findByOwnId(account, create.taskId))?.upstreamId).toBe(answer.upstreamId);
      await expect(vendor.create(account, imageCreate(modelOf(KLING_IMAGE_MODELS, 'kling-v2-1'), imageRequest({ images: 1, negativePrompt: 'fog' })))).rejects.toMatchObject({ kind: 'request', message: expect.stringMatching(/^negative_prompt: /) });
      const expander = new KlingExpandVendor(client);
      const expandAccount = { baseUrl: expand.url, auth };
      const photo = { bytes: await png(400, 400), format: 'png' as const, width: 400, height: 400 };
      const request = { up_ratio: 0.5, bottom_ratio: 0, left_ratio: 0, right_ratio: 0, n: 1, watermark: false };
      const task = await expander.create(expandAccount, { request, taskId: 'our-expand-1', image: { bytes: async () => photo } });
      const upstreamId = (task as { upstreamId: string }).upstreamId;
      const done = await pollUntil(() => expander.query(expandAccount, upstreamId, true), (s) => s.state !== 'working', { timeoutMs: 10_000, what: 'the Kling expand task' });
      expect(done.state).toBe('succeeded');
      expect((await expander.findByOwnId(expandAccount, 'our-expand-1'))?.upstreamId).toBe(upstreamId);
    } finally {
      await Promise.all([images.close(), expand.close()]);
    }
  });

  it('lyrics: sunoapi.org’s task watched to its two versions; MiniMax’s and Mureka’s written at once, each asked in its own words', async () => {
    const [sunoapi, minimax, mureka] = await Promise.all([startFakeSunoapi(KEY), startFakeMinimax(KEY), startFakeMureka(KEY)]);
    try {
      const request = { prompt: 'rain on a tin roof', model: null };
      const watched = new SunoapiLyricsVendor(client);
      const sunoapiAccount = { baseUrl: sunoapi.url, auth: SUNOAPI.auth({ api_key: KEY }) };
      const { upstreamId } = (await watched.create(sunoapiAccount, { request, model: SUNOAPI_LYRICS_MODELS[0], taskId: 't-1' })) as { upstreamId: string };
      expect(sunoapi.lyrics.get(upstreamId)?.body).toEqual({ prompt: 'rain on a tin roof', callBackUrl: 'https://example.com/callback' });
      const ended = await pollUntil(() => watched.query(sunoapiAccount, upstreamId, true), (s: LyricsStatus) => s.state !== 'working', { timeoutMs: 10_000, what: 'the lyrics task' });
      expect([ended.state, ended.state === 'succeeded' && ended.lyrics.length]).toEqual(['succeeded', 2]);
      const fromMinimax = await new MinimaxLyricsVendor(client).create({ baseUrl: minimax.url, auth: MINIMAX.auth({ api_key: KEY }) }, { request, model: MINIMAX_LYRICS_MODELS[0], taskId: 't-2' });
      expect([minimax.musicCalls.at(-1)?.body, 'made' in fromMinimax && fromMinimax.made.length]).toEqual([{ mode: 'write_full_song', prompt: 'rain on a tin roof' }, 1]);
      const fromMureka = await new MurekaLyricsVendor(client).create({ baseUrl: mureka.url, auth: MUREKA.auth({ api_key: KEY }) }, { request, model: MUREKA_LYRICS_MODELS[0], taskId: 't-3' });
      expect([mureka.lyricsAsked, 'made' in fromMureka && fromMureka.made[0].title]).toEqual([[{ prompt: 'rain on a tin roof' }], 'Embrace of Night']);
    } finally {
      await Promise.all([sunoapi.close(), minimax.close(), mureka.close()]);
    }
  });
});
