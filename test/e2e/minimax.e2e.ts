import type { FakeUpstream } from '../support/fake-upstreams.js';
import { startFakeLuma } from '../support/vendors/luma/luma.fake.js';
import { type FakeMinimax, startFakeMinimax } from '../support/vendors/minimax/minimax.fake.js';
import type { FakeVideoVendor } from '../support/vendors/video-fake.js';
import { startFakeKlingVideo } from '../support/vendors/kling/kling.fake.js';
import { probeVideo } from '../support/media.js';
import { pollUntil } from '../support/poll.js';
import { api, startTestApp, type TestApp } from '../support/test-app.js';

const GEN = '/video-b/v1/generations';
const OPENAI = '/openai/v1/videos';
const ADMIN = 'admin-secret-0123456789';
const MINIMAX_KEY = 'eyJhbGciOiJSUzI1NiJ9.minimax-test-key';
const LUMA_KEY = 'luma-minimax-key-01234';
const KLING: [string, string] = ['ak-minimax-000001', 'sk-minimax-secret-01'];

/**
 * MiniMax's video API as a channel (a fake from its documented shapes): served behind the Luma and the
 * OpenAI doors in its own vocabulary (an integer duration, "768P", the video fetched through its file API),
 * refused for what its models cannot make, failed over to and from, and tested by its cheap call.
 */
describe('MiniMax video behind the doors', () => {
  let t: TestApp;
  let key: string;
  let minimax: FakeMinimax;
  let luma: FakeUpstream;
  let kling: FakeVideoVendor;
  const channels: Record<string, string> = {};

  beforeAll(async () => {
    minimax = await startFakeMinimax(MINIMAX_KEY);
    luma = await startFakeLuma(LUMA_KEY);
    luma.knobs.pollsUntilDone = 1;
    kling = await startFakeKlingVideo(...KLING);
    kling.knobs.pollsUntilDone = 1;
    t = await startTestApp({ VIDEO_PROVIDER: 'relay', ADMIN_API_KEY: ADMIN, CHANNEL_SECRET_KEY: 'c'.repeat(64), OUTBOUND_ALLOW_HOSTS: '127.0.0.1', RELAY_POLL_MS: '100' });
    key = await t.createKey('team-minimax');
    const add = async (name: string, body: Record<string, unknown>) => {
      const res = await api(t.url, 'POST', '/admin/channels', { key: ADMIN, body: { name, operations: ['video'], ...body } });
      expect([name, res.status]).toEqual([name, 201]);
      channels[name] = res.body.id as string;
    };
    await add('minimax', { protocol: 'minimax', base_url: minimax.url, credentials: { api_key: MINIMAX_KEY }, priority: 5 });
    await add('luma', { protocol: 'luma', base_url: luma.url, credentials: { api_key: LUMA_KEY }, priority: 0 });
    await add('kling', { protocol: 'kling', base_url: kling.url, credentials: { access_key: KLING[0], secret_key: KLING[1] }, priority: 0 });
  }, 60_000);
  afterAll(async () => {
    await t.close();
    await Promise.all([minimax.close(), luma.close(), kling.close()]);
  });

  const admin = (method: string, path: string, body?: unknown) => api(t.url, method, path, { key: ADMIN, body });
  const priorities = async (p: Record<string, number>) => {
    for (const [name, id] of Object.entries(channels)) expect((await admin('PATCH', `/admin/channels/${id}`, { priority: p[name] ?? 0 })).status).toBe(200);
  };
  const finished = async (id: string) =>
    (await pollUntil(() => api(t.url, 'GET', `${GEN}/${id}`, { key }), (r) => r.body.state === 'completed' || r.body.state === 'failed', { timeoutMs: 60_000, what: `generation ${id} to finish` })).body;
  const stored = async (url: string) => {
    const res = await fetch(url);
    return probeVideo(Buffer.from(await res.arrayBuffer()));
  };
  const attempts = async (id: string) => ((await admin('GET', `/admin/tasks/${id}/attempts`)).body as { channel: string; outcome: string }[]).map((a) => [a.channel, a.outcome]);

  it('serves a Luma-door request in its own words (duration 6, no resolution: its 768P), and stores the 6 s video its file API names', async () => {
    await priorities({ minimax: 5 });
    const created = await api(t.url, 'POST', GEN, { key, body: { prompt: 'A lantern drifting on a river', model: 'MiniMax-Hailuo-02', duration: '6s' } });
    expect(created.status).toBe(201);
    const done = await finished(created.body.id);
    expect(done.state).toBe('completed');
    const sent = [...minimax.created.values()].at(-1)!;
    expect(sent.body).toEqual({ model: 'MiniMax-Hailuo-02', prompt: 'A lantern drifting on a river', duration: 6 });
    const video = await stored(done.assets.video);
    expect([video.width, video.height, Math.round(video.durationS)]).toEqual([1366, 768, 6]);
  }, 90_000);

  it('serves an OpenAI-door request (seconds "10", size 1366x768) and refuses what no MiniMax model makes (10 s at 1080p), naming the field', async () => {
    await priorities({ minimax: 5 });
    const created = await api(t.url, 'POST', OPENAI, { key, body: { model: 'MiniMax-Hailuo-2.3', prompt: 'Snow over a harbour', seconds: '10', size: '1366x768' } });
    expect(created.status).toBe(200);
    const done = await pollUntil(() => api(t.url, 'GET', `${OPENAI}/${created.body.id}`, { key }), (r) => ['completed', 'failed'].includes(r.body.status), { timeoutMs: 60_000, what: 'the OpenAI-door video' });
    expect([done.body.status, done.body.size, done.body.seconds]).toEqual(['completed', '1366x768', '10']);
    expect([...minimax.created.values()].at(-1)!.body).toEqual({ model: 'MiniMax-Hailuo-2.3', prompt: 'Snow over a harbour', duration: 10, resolution: '768P' });
    const content = await fetch(`${t.url}${OPENAI}/${created.body.id}/content`, { headers: { authorization: `Bearer ${key}` } });
    const video = await probeVideo(Buffer.from(await content.arrayBuffer()));
    expect([video.width, video.height, Math.round(video.durationS)]).toEqual([1366, 768, 10]);
    const refused = await api(t.url, 'POST', OPENAI, { key, body: { model: 'MiniMax-Hailuo-2.3', prompt: 'x', seconds: '10', size: '1920x1080' } });
    expect([refused.status, refused.body.error.param]).toEqual([400, 'seconds']);
  }, 90_000);

  it('waits while MiniMax answers its rate limit under HTTP 200 (base_resp 1002), and sends the create once taken', async () => {
    await priorities({ minimax: 5 });
    minimax.minimaxKnobs.busy = 2;
    const before = minimax.created.size;
    const created = await api(t.url, 'POST', GEN, { key, body: { prompt: 'Busy river', model: 'MiniMax-Hailuo-02', duration: '6s' } });
    expect((await finished(created.body.id)).state).toBe('completed');
    expect(minimax.created.size - before).toBe(1);
  }, 90_000);

  it('fails over to Kling when MiniMax fails a generation of its own, and takes one Luma failed', async () => {
    await priorities({ minimax: 5, kling: 1 });
    minimax.knobs.failWith = 'internal error';
    const fromMinimax = await api(t.url, 'POST', GEN, { key, body: { prompt: 'From MiniMax to Kling', duration: '10s' } });
    const first = await finished(fromMinimax.body.id);
    minimax.knobs.failWith = undefined;
    expect(first.state).toBe('completed');
    expect(await attempts(first.id)).toEqual([['minimax', 'accepted'], ['minimax', 'abandoned'], ['kling', 'accepted']]);

    await priorities({ luma: 5, minimax: 1 });
    luma.knobs.failWith = 'Internal server error: the job crashed';
    const fromLuma = await api(t.url, 'POST', GEN, { key, body: { prompt: 'From Luma to MiniMax', aspect_ratio: '16:9' } });
    const second = await finished(fromLuma.body.id);
    luma.knobs.failWith = undefined;
    expect(second.state).toBe('completed');
    expect(await attempts(second.id)).toEqual([['luma', 'accepted'], ['luma', 'abandoned'], ['minimax', 'accepted']]);
  }, 120_000);

  it("tests a channel with MiniMax's file list; a wrong key (1004 under HTTP 200) auto-disables it", async () => {
    const ok = await admin('POST', `/admin/channels/${channels.minimax}/test`);
    expect([ok.status, ok.body.ok]).toEqual([200, true]);
    const wrong = await admin('POST', '/admin/channels', { name: 'minimax-wrong', operations: ['video'], protocol: 'minimax', base_url: minimax.url, credentials: { api_key: 'not-the-key-000000' } });
    expect(wrong.status).toBe(201);
    const refused = await admin('POST', `/admin/channels/${wrong.body.id}/test`);
    expect([refused.body.ok, refused.body.channel.status]).toEqual([false, 'auto_disabled']);
    expect(refused.body.message).toMatch(/login fail/);
  });
});
