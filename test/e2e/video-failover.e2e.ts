import type { FakeUpstream } from '../support/fake-upstreams.js';
import { startFakeLuma } from '../support/vendors/luma/luma.fake.js';
import type { FakeVideoVendor } from '../support/vendors/video-fake.js';
import { startFakeKlingVideo } from '../support/vendors/kling/kling.fake.js';
import { startFakeRunway } from '../support/vendors/runway/runway.fake.js';
import { probeVideo } from '../support/media.js';
import { pollUntil } from '../support/poll.js';
import { TaskSweeper } from '../../src/common/tasks/task-sweeper.js';
import { api, queryDb as sql, startTestApp, type TestApp } from '../support/test-app.js';
import { startReceiver } from '../support/webhook-receiver.js';

const GEN = '/video-b/v1/generations';
const ADMIN = 'admin-secret-0123456789';
const KLING: [string, string] = ['ak-failover-00001', 'sk-failover-secret-01'];
const LUMA_KEY = 'luma-failover-key-0123';
const RUNWAY_KEY = `key_${'cd'.repeat(64)}`;
const PRICES = { luma: 0.32, kling: 0.14, runway: 0.25 };

/**
 * Failover after acceptance: an upstream that took a generation and then failed it (its own error) or
 * stalled past its channel's limit hands it to the next capable channel; the caller sees one generation,
 * charged once; every upstream task is an attempt with its model and cost. A content refusal ends it.
 * With VIDEO_ROUTING=cost the cheapest capable channel of the top priority takes a new generation.
 */
describe('video failover after acceptance, charged once, and routing by cost', () => {
  let t: TestApp;
  let key: string;
  let luma: FakeUpstream;
  let kling: FakeVideoVendor;
  let runway: FakeVideoVendor;
  let hooks: Awaited<ReturnType<typeof startReceiver>>;
  const channels: Record<string, string> = {};

  beforeAll(async () => {
    luma = await startFakeLuma(LUMA_KEY);
    luma.knobs.render = true;
    luma.knobs.pollsUntilDone = 1;
    kling = await startFakeKlingVideo(...KLING);
    runway = await startFakeRunway(RUNWAY_KEY);
    runway.knobs.pollsUntilDone = 1; // Runway asks for 5 s between polls: one poll to the end keeps the suite short
    hooks = await startReceiver();
    t = await startTestApp({ VIDEO_PROVIDER: 'relay', VIDEO_ROUTING: 'cost', ADMIN_API_KEY: ADMIN, CHANNEL_SECRET_KEY: 'c'.repeat(64), OUTBOUND_ALLOW_HOSTS: '127.0.0.1', ALLOW_PRIVATE_URLS: 'true', RELAY_POLL_MS: '100' }); // the callback receiver is on loopback too
    key = await t.createKey('team-failover');
    const add = async (name: keyof typeof PRICES, model: string, body: Record<string, unknown>) => {
      const models = [{ name: model, vendor_model: model, price: { per_second: { '720p': PRICES[name] } } }];
      const res = await api(t.url, 'POST', '/admin/channels', { key: ADMIN, body: { name, operations: ['video'], models, ...body } });
      expect(res.status).toBe(201);
      channels[name] = res.body.id as string;
    };
    await add('luma', 'ray-2', { protocol: 'luma', base_url: luma.url, credentials: { api_key: LUMA_KEY } });
    await add('kling', 'kling-v1-6', { protocol: 'kling', base_url: kling.url, credentials: { access_key: KLING[0], secret_key: KLING[1] } });
    await add('runway', 'gen4.5', { protocol: 'runway', base_url: runway.url, credentials: { api_key: RUNWAY_KEY } });
  }, 60_000);
  afterAll(async () => {
    await t.close();
    await Promise.all([luma.close(), kling.close(), runway.close(), hooks.close()]);
  });

  const admin = (method: string, path: string, body?: unknown) => api(t.url, method, path, { key: ADMIN, body });
  /** Each channel's priority (all enabled). */
  const priorities = async (p: Partial<Record<keyof typeof PRICES, number>>) => {
    for (const [name, id] of Object.entries(channels)) expect((await admin('PATCH', `/admin/channels/${id}`, { priority: p[name as keyof typeof PRICES] ?? 0 })).status).toBe(200);
  };
  const finished = async (id: string) =>
    (await pollUntil(() => api(t.url, 'GET', `${GEN}/${id}`, { key }), (r) => r.body.state === 'completed' || r.body.state === 'failed', { timeoutMs: 60_000, what: `generation ${id} to finish` })).body;
  const attempts = async (id: string) => (await admin('GET', `/admin/tasks/${id}/attempts`)).body as { outcome: string; channel: string; model: string | null; cost: number | null; message: string | null; upstream_id: string | null }[];
  const creditsUsed = async () => (await api(t.url, 'GET', '/usage', { key })).body.credits.used as number;
  const BODY = { prompt: 'A lighthouse at dusk', resolution: '720p', duration: '5s', aspect_ratio: '16:9' };

  it('an upstream that takes a generation then fails it (its own error): a second vendor makes it; one charge, both attempts kept with their cost', async () => {
    await priorities({ luma: 10 });
    luma.knobs.failWith = 'Internal server error: the job crashed';
    const before = await creditsUsed();
    const created = await api(t.url, 'POST', GEN, { key, body: { ...BODY, callback_url: `${hooks.url}/own-error` } });
    expect(created.status).toBe(201);
    const done = await finished(created.body.id);
    luma.knobs.failWith = undefined;
    expect(done.state).toBe('completed');
    const video = await probeVideo(Buffer.from(await (await fetch(done.assets.video)).arrayBuffer()));
    expect([video.width, video.height, Math.round(video.durationS)]).toEqual([1280, 720, 5]);
    // the cheapest of the rest (Kling) took it after Luma gave it up
    const log = await attempts(done.id);
    expect(log.map((a) => [a.channel, a.outcome, a.model, a.cost])).toEqual([
      ['luma', 'accepted', 'ray-2', 1.6],
      ['luma', 'abandoned', null, null],
      ['kling', 'accepted', 'kling-v1-6', 0.7],
    ]);
    expect(log[1].message).toMatch(/the job crashed/);
    expect(log[0].upstream_id).toEqual(expect.any(String));
    // charged once: 5 s at PRICE_VIDEO_SECOND (1)
    expect((await creditsUsed()) - before).toBe(5);
    // the caller's callbacks: one generation, in order, never failed
    const states = await pollUntil(
      async () => hooks.received.filter((r) => r.path === '/own-error').map((r) => r.json.state as string),
      (s) => s.includes('completed'),
      { timeoutMs: 30_000, what: 'the completed callback' },
    );
    expect(states).not.toContain('failed');
    expect(states.filter((s) => s === 'completed')).toHaveLength(1);
    expect(states.at(-1)).toBe('completed');
  }, 120_000);

  it('an upstream task stalled past the channel\'s stall_after_s is cancelled (Runway DELETE) and the generation made elsewhere', async () => {
    await priorities({ runway: 10 });
    expect((await admin('PATCH', `/admin/channels/${channels.runway}`, { stall_after_s: 2 })).body.stall_after_s).toBe(2);
    runway.knobs.stall = true;
    const created = await api(t.url, 'POST', GEN, { key, body: BODY });
    expect(created.status).toBe(201);
    const done = await finished(created.body.id);
    runway.knobs.stall = false;
    expect(done.state).toBe('completed');
    const log = await attempts(done.id);
    expect(log.map((a) => [a.channel, a.outcome])).toEqual([
      ['runway', 'accepted'],
      ['runway', 'abandoned'],
      ['kling', 'accepted'],
    ]);
    expect(log[1].message).toMatch(/still working after 2 s .*cancelled upstream/);
    // the stalled task was cancelled at Runway
    expect(runway.created.get(log[0].upstream_id!)).toEqual(expect.objectContaining({ deleted: true }));
    expect((await admin('PATCH', `/admin/channels/${channels.runway}`, { stall_after_s: null })).body.stall_after_s).toBeNull();
  }, 120_000);

  it('a content refusal ends the generation failed with the vendor\'s reason, without failover, and gives the credits back', async () => {
    await priorities({ runway: 10 });
    runway.knobs.failWith = 'The prompt was flagged by moderation';
    runway.knobs.failCode = 'SAFETY.INPUT.TEXT';
    const before = await creditsUsed();
    const kCreates = kling.created.size;
    const created = await api(t.url, 'POST', GEN, { key, body: BODY });
    const done = await finished(created.body.id);
    runway.knobs.failWith = undefined;
    runway.knobs.failCode = undefined;
    expect([done.state, done.failure_reason]).toEqual(['failed', expect.stringMatching(/flagged by moderation \(SAFETY\.INPUT\.TEXT\)/)]);
    expect(kling.created.size).toBe(kCreates);
    expect((await attempts(done.id)).map((a) => a.outcome)).toEqual(['accepted']);
    expect(await creditsUsed()).toBe(before);
  }, 120_000);

  it('with VIDEO_ROUTING=cost the cheapest capable channel takes each generation; the usage report and the metric show upstream cost per channel, model and owner', async () => {
    await priorities({});
    const before = kling.created.size;
    for (let i = 0; i < 3; i++) {
      const created = await api(t.url, 'POST', GEN, { key, body: BODY });
      expect((await finished(created.body.id)).state).toBe('completed');
    }
    expect(kling.created.size - before).toBe(3);
    // a request Kling cannot make (a 9 s video): the cheapest that can (Runway's gen4.5, 0.25 a second, over Luma's 0.32)
    const nine = await api(t.url, 'POST', GEN, { key, body: { ...BODY, duration: '9s' } });
    expect((await finished(nine.body.id)).state).toBe('completed');
    expect((await attempts(nine.body.id)).map((a) => [a.channel, a.cost])).toEqual([['runway', 2.25]]);
    const usage = (await admin('GET', '/admin/usage?owner=team-failover')).body;
    const costs = Object.fromEntries((usage.upstream_costs as { channel: string; model: string; owner: string; upstream_tasks: number; cost: number }[]).map((c) => [`${c.owner}/${c.channel}/${c.model}`, [c.upstream_tasks, c.cost]]));
    // Kling: 3 here + 2 after failovers (0.7 each); Luma: the one abandoned (1.6); Runway: the stalled and the refused (1.25 each) + 9 s (2.25)
    expect(costs).toEqual({ 'team-failover/kling/kling-v1-6': [5, 3.5], 'team-failover/luma/ray-2': [1, 1.6], 'team-failover/runway/gen4.5': [3, 4.75] });
    expect(usage.days.reduce((n: number, d: { credits_charged: number }) => n + d.credits_charged, 0)).toBe(5 * 6 + 9);
    const metrics = await t.metrics();
    expect(metrics).toMatch(/mgw_upstream_cost_total\{channel="kling",model="kling-v1-6"\} 3\.5/);
    expect(metrics).toMatch(/mgw_channel_requests_total\{channel="runway",operation="video",outcome="abandoned"\} 1/);
    // no vendor's credential in answers, logs or metrics
    const everything = [metrics, JSON.stringify(usage), JSON.stringify((await admin('GET', '/admin/channels')).body), JSON.stringify(t.logs.lines)].join('\n');
    for (const secret of [LUMA_KEY, RUNWAY_KEY, KLING[1]]) expect(everything).not.toContain(secret);
    expect(runway.authFailures.concat(kling.authFailures, luma.authFailures)).toEqual([]);
  }, 180_000);

  it("a stalled upstream task is not cancelled, nor its channel's circuit charged, by a step whose claim another has taken over", async () => {
    await priorities({ runway: 10 });
    expect((await admin('PATCH', `/admin/channels/${channels.runway}`, { stall_after_s: 2 })).body.stall_after_s).toBe(2);
    runway.knobs.stall = true;
    const created = await api(t.url, 'POST', GEN, { key, body: BODY });
    expect(created.status).toBe(201);
    const id = created.body.id as string;
    const upstreamId = (
      await pollUntil(async () => (await sql<{ upstream_id: string | null }>(t.db, 'SELECT upstream_id FROM tasks WHERE id = $1', [id]))[0], (r) => !!r?.upstream_id, { what: 'the Runway task' })
    ).upstream_id!;
    // every later claim of the task is taken over in the same statement, as when a worker stalls past its lease
    // and the sweeper gives the task to another: the step goes on believing it holds the task
    await sql(t.db, `CREATE FUNCTION test_take_over() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN
                       UPDATE tasks SET lease_owner = 'w-next', attempts = attempts + 1, lease_until = now() + interval '1 hour' WHERE id = NEW.id; RETURN NULL; END $$`);
    await sql(t.db, `CREATE TRIGGER test_take_over AFTER UPDATE ON tasks FOR EACH ROW
                     WHEN (NEW.id = '${id}'::uuid AND NEW.lease_owner IS DISTINCT FROM OLD.lease_owner AND NEW.lease_owner NOT IN ('w-next') AND NEW.lease_owner NOT LIKE '~%')
                     EXECUTE FUNCTION test_take_over()`);
    try {
      await pollUntil(async () => t.logs.lines.some((l) => String(l.msg).includes(`task ${id} is no longer held by this worker`)), Boolean, { timeoutMs: 30_000, what: 'the stalled step to find its claim gone' });
      expect(runway.created.get(upstreamId)).toEqual(expect.not.objectContaining({ deleted: true }));
      expect((await attempts(id)).map((a) => [a.channel, a.outcome])).toEqual([['runway', 'accepted']]);
      const [channel] = await sql<{ consecutive_failures: number; circuit_state: string }>(t.db, 'SELECT consecutive_failures, circuit_state FROM channels WHERE id = $1', [channels.runway]);
      expect(channel).toEqual({ consecutive_failures: 0, circuit_state: 'closed' });
    } finally {
      await sql(t.db, 'DROP TRIGGER test_take_over ON tasks');
      await sql(t.db, 'DROP FUNCTION test_take_over()');
    }
    // the claim that has it now gives the stalled task up once its lease is over: cancelled there, made elsewhere
    await sql(t.db, "UPDATE tasks SET lease_until = now() - interval '1 second' WHERE id = $1", [id]);
    await t.app.get(TaskSweeper).sweep();
    const done = await finished(id);
    runway.knobs.stall = false;
    expect(done.state).toBe('completed');
    expect((await attempts(id)).map((a) => [a.channel, a.outcome])).toEqual([
      ['runway', 'accepted'],
      ['runway', 'abandoned'],
      ['kling', 'accepted'],
    ]);
    expect(runway.created.get(upstreamId)).toEqual(expect.objectContaining({ deleted: true }));
    expect((await admin('PATCH', `/admin/channels/${channels.runway}`, { stall_after_s: null })).body.stall_after_s).toBeNull();
  }, 120_000);
});
