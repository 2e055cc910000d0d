import type { FakeUpstream } from '../support/fake-upstreams.js';
import { startFakeKlingVideo } from '../support/vendors/kling/kling.fake.js';
import { startFakeLuma } from '../support/vendors/luma/luma.fake.js';
import type { FakeVideoVendor } from '../support/vendors/video-fake.js';
import { pollUntil } from '../support/poll.js';
import { api, startTestApp, type TestApp } from '../support/test-app.js';

const GEN = '/video-b/v1/generations';
const ADMIN = 'admin-secret-0123456789';
const LUMA_KEY = 'luma-counted-key';
const KLING: [string, string] = ['ak-counted-0001', 'sk-counted-secret-0001'];
/** Each fake answers its task as working this many times, then as ended: at least this many polls. */
const POLLS_UNTIL_DONE = 3;

/** The polls the gateway's pollers made of a channel's tasks, whatever came of them (mgw_upstream_polls_total). */
async function pollsOf(t: TestApp, channel: string): Promise<number> {
  const line = new RegExp(`^mgw_upstream_polls_total\\{[^}]*channel="${channel}"[^}]*\\} (\\d+)$`, 'gm');
  return [...(await t.metrics()).matchAll(line)].reduce((sum, m) => sum + Number(m[1]), 0);
}

/**
 * A relayed task's status, read by a poll, is used by the step the poll queues (carried in its job), not asked
 * for again: a generation that completes costs its vendor exactly one status query per poll. The polls are
 * counted by the gateway (its metric), the queries by the fake: before, the step asked again (one query more
 * than polls). Nothing here depends on timing: the fakes end a task after a number of queries, not of seconds.
 */
describe('relayed status queries: one per poll', () => {
  let t: TestApp;
  let key: string;
  let luma: FakeUpstream;
  let kling: FakeVideoVendor;
  beforeAll(async () => {
    [luma, kling] = await Promise.all([startFakeLuma(LUMA_KEY), startFakeKlingVideo(...KLING)]);
    luma.knobs.pollsUntilDone = POLLS_UNTIL_DONE;
    kling.knobs.pollsUntilDone = POLLS_UNTIL_DONE;
    t = await startTestApp({ VIDEO_PROVIDER: 'relay', ADMIN_API_KEY: ADMIN, OUTBOUND_ALLOW_HOSTS: '127.0.0.1', RELAY_POLL_MS: '100' });
    key = await t.createKey('team-counted');
    const add = async (body: Record<string, unknown>) => expect((await api(t.url, 'POST', '/admin/channels', { key: ADMIN, body: { operations: ['video'], priority: 0, ...body } })).status).toBe(201);
    await add({ name: 'luma-counted', protocol: 'luma', base_url: luma.url, credentials: { api_key: LUMA_KEY } });
    await add({ name: 'kling-counted', protocol: 'kling', base_url: kling.url, credentials: { access_key: KLING[0], secret_key: KLING[1] } });
  }, 60_000);
  afterAll(async () => {
    await t.close();
    await Promise.all([luma.close(), kling.close()]);
  });

  /** Only `name` takes new generations. */
  const only = async (name: string) => {
    const channels = (await api(t.url, 'GET', '/admin/channels', { key: ADMIN })).body as { id: string; name: string }[];
    for (const c of channels) expect((await api(t.url, 'POST', `/admin/channels/${c.id}/${c.name === name ? 'enable' : 'disable'}`, { key: ADMIN })).status).toBe(200);
  };

  const cases: [string, () => Map<string, { polls: number }>][] = [
    ['luma-counted', () => luma.created],
    ['kling-counted', () => kling.created],
  ];
  it.each(cases)('a generation through %s that completes: its vendor is asked once per poll, never by the step as well', async (channel, created) => {
    await only(channel);
    const before = new Set(created().keys());
    const pollsBefore = await pollsOf(t, channel);
    const accepted = await api(t.url, 'POST', GEN, { key, body: { prompt: `counted on ${channel}`, aspect_ratio: '16:9' } });
    expect(accepted.status).toBe(201);
    const done = await pollUntil(() => api(t.url, 'GET', `${GEN}/${accepted.body.id}`, { key }), (r) => ['completed', 'failed'].includes(r.body.state), { timeoutMs: 60_000, what: `the generation on ${channel}` });
    expect(done.body.state).toBe('completed');
    const made = [...created().entries()].filter(([id]) => !before.has(id));
    expect(made).toHaveLength(1);
    const queries = made[0][1].polls;
    const polls = (await pollsOf(t, channel)) - pollsBefore;
    // the fake ended it at its POLLS_UNTIL_DONE-th query: that many polls at least (more only if one went unanswered)
    expect(queries).toBeGreaterThanOrEqual(POLLS_UNTIL_DONE);
    expect({ channel, queries }).toEqual({ channel, queries: polls });
  }, 90_000);
});
