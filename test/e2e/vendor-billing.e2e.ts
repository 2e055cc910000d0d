import type { TaskAttemptDto } from '../../src/modules/channels/dto/channel.dto.js';
import type { UpstreamCostDto } from '../../src/modules/limits/dto/usage.dto.js';
import { UpstreamBilling } from '../../src/modules/channels/upstream-billing.js';
import { type FakeSeedance, startFakeSeedance } from '../support/vendors/seedance/seedance.fake.js';
import type { FakeVideoVendor } from '../support/vendors/video-fake.js';
import { startFakeKlingVideo } from '../support/vendors/kling/kling.fake.js';
import { startFakeRunway } from '../support/vendors/runway/runway.fake.js';
import { type FakeWan, startFakeWan } from '../support/vendors/wan/wan.fake.js';
import { pollUntil } from '../support/poll.js';
import { api, startTestApp, type TestApp } from '../support/test-app.js';

const GEN = '/video-b/v1/generations';
const ADMIN = 'admin-secret-0123456789';
const ARK_KEY = 'ark-billing-test-key-0123456789';
const DASHSCOPE_KEY = 'sk-billing-dashscope-0123456789';
const RUNWAY_KEY = `key_${'ef'.repeat(64)}`;
const KLING: [string, string] = ['ak-billing-000001', 'sk-billing-secret-01'];
const OWNER = 'team-billing';

/** The upstream_costs row of the report, and an attempt, as the API answers them. */
type CostRow = UpstreamCostDto;
type Attempt = TaskAttemptDto;

/**
 * What the vendors bill, kept beside what we priced (issue 38, point 4): Seedance (tokens, priced per billed
 * unit), Wan (seconds, priced per second), Kling (units) and Runway (credits) serve generations; each ended
 * upstream task keeps the vendor's figure on its accepted attempt, the admin usage report sets our cost and
 * the vendor's billed cost side by side per channel and model, and one billed beyond BILLED_COST_TOLERANCE is
 * flagged and counted once, one at the tolerance's edge is not.
 */
describe("what the vendor billed, beside what we priced", () => {
  let t: TestApp;
  let key: string;
  let ark: FakeSeedance;
  let wan: FakeWan;
  let kling: FakeVideoVendor;
  let runway: FakeVideoVendor;
  const channels: Record<string, string> = {};
  const ids: Record<string, string> = {};

  beforeAll(async () => {
    [ark, wan, kling, runway] = await Promise.all([startFakeSeedance(ARK_KEY), startFakeWan(DASHSCOPE_KEY), startFakeKlingVideo(...KLING), startFakeRunway(RUNWAY_KEY)]);
    for (const fake of [ark, wan, kling, runway]) fake.knobs.pollsUntilDone = 1;
    t = await startTestApp({ VIDEO_PROVIDER: 'relay', ADMIN_API_KEY: ADMIN, CHANNEL_SECRET_KEY: 'c'.repeat(64), OUTBOUND_ALLOW_HOSTS: '127.0.0.1', RELAY_POLL_MS: '100', BILLED_COST_TOLERANCE: '0.1' });
    key = await t.createKey(OWNER);
    const add = async (name: string, body: Record<string, unknown>) => {
      const res = await api(t.url, 'POST', '/admin/channels', { key: ADMIN, body: { name, operations: ['video'], ...body } });
      expect([name, res.status, res.text.slice(0, 300)]).toEqual([name, 201, expect.any(String)]);
      channels[name] = res.body.id as string;
    };
    // each priced so that a vendor billing exactly what the task took costs exactly what we priced
    await add('seedance', {
      protocol: 'seedance',
      base_url: ark.url,
      credentials: { api_key: ARK_KEY },
      models: [
        // 5 s of 720p: 108900 tokens at 0.000001 = 0.1089 = 5 × 0.02178
        { name: 'sd-pro', vendor_model: 'seedance-1-0-pro-250528', price: { per_second: { '720p': 0.02178 }, per_billed_unit: { tokens: 0.000001 } } },
        // no price per token: its billed tokens are kept, their cost is unknown
        { name: 'sd-fast', vendor_model: 'seedance-1-0-pro-fast-251015', price: { per_second: { '720p': 0.02 } } },
      ],
    });
    // billed seconds with no price per billed unit: priced per second
    await add('wan', { protocol: 'wan', base_url: wan.url, credentials: { api_key: DASHSCOPE_KEY }, models: [{ name: 'wan-t2v', vendor_model: 'wan2.6-t2v', price: { per_second: { '720p': 0.1 } } }] });
    // 5 s in std: 1 unit at 0.14 = 5 × 0.028
    await add('kling', { protocol: 'kling', base_url: kling.url, credentials: { access_key: KLING[0], secret_key: KLING[1] }, models: [{ name: 'kling-std', vendor_model: 'kling-v1-6', price: { per_second: { '720p': 0.028 }, per_billed_unit: { units: 0.14 } } }] });
    // 5 s: 50 credits at 0.01 = 5 × 0.1
    await add('runway', { protocol: 'runway', base_url: runway.url, credentials: { api_key: RUNWAY_KEY }, models: [{ name: 'gen45', vendor_model: 'gen4.5', price: { per_second: { '720p': 0.1 }, per_billed_unit: { credits: 0.01 } } }] });
  }, 60_000);
  afterAll(async () => {
    await t.close();
    await Promise.all([ark.close(), wan.close(), kling.close(), runway.close()]);
  });

  const admin = (method: string, path: string, body?: unknown) => api(t.url, method, path, { key: ADMIN, body });
  const generate = async (model: string) => {
    const created = await api(t.url, 'POST', GEN, { key, body: { prompt: `A lighthouse at dusk (${model})`, model, aspect_ratio: '16:9', duration: '5s', resolution: '720p' } });
    expect([model, created.status]).toEqual([model, 201]);
    const id = created.body.id as string;
    const done = await pollUntil(() => api(t.url, 'GET', `${GEN}/${id}`, { key }), (r) => r.body.state === 'completed' || r.body.state === 'failed', { timeoutMs: 90_000, what: `generation ${id} (${model}) to finish` });
    return { id, state: done.body.state as string };
  };
  const attempts = async (id: string) => (await admin('GET', `/admin/tasks/${id}/attempts`)).body as Attempt[];
  /** mgw_upstream_billing_mismatches_total by operation/channel/model. */
  const mismatchMetric = async () => {
    const counts: Record<string, number> = {};
    for (const [, labels, value] of (await t.metrics()).matchAll(/^mgw_upstream_billing_mismatches_total\{([^}]*)\} (\S+)$/gm)) {
      const l = Object.fromEntries([...labels.matchAll(/(\w+)="([^"]*)"/g)].map(([, k, v]) => [k, v]));
      counts[`${l.operation}/${l.channel}/${l.model}`] = Number(value);
    }
    return counts;
  };
  /** A Kling generation billed `multiplier` times what it took. */
  const klingBilled = async (multiplier: number) => {
    kling.knobs.billMultiplier = multiplier;
    try {
      return await generate('kling-std');
    } finally {
      kling.knobs.billMultiplier = undefined;
    }
  };

  it('keeps each vendor\'s figure on the accepted attempt, and flags (and counts once) a task billed beyond the tolerance, not one at its edge', async () => {
    expect(await mismatchMetric()).toEqual({});
    const runs = await Promise.all([
      (async () => {
        ids.sdPro = (await generate('sd-pro')).id; // billed exactly
        ids.sdFast = (await generate('sd-fast')).id;
      })(),
      (async () => {
        wan.knobs.billMultiplier = 2; // the vendor made and billed 10 s where we priced 5 s
        ids.wanTwice = (await generate('wan-t2v')).id;
        wan.knobs.billMultiplier = undefined;
        wan.wanKnobs.inspection = true; // a task its moderation failed: no usage, nothing billed
        ids.wanRefused = (await generate('wan-t2v')).id;
        wan.wanKnobs.inspection = false;
      })(),
      (async () => {
        ids.klingEdge = (await klingBilled(1.1)).id; // 0.154 against 0.14: exactly 10 % over, not a mismatch
        ids.klingOver = (await klingBilled(1.11)).id; // 11 % over
        ids.klingUnder = (await klingBilled(0.89)).id; // 11 % under
      })(),
      (async () => {
        ids.runway = (await generate('gen45')).id; // 50 credits, billed exactly
      })(),
    ]);
    expect(runs).toHaveLength(4);
    const states = await Promise.all(Object.entries(ids).map(async ([name, id]) => [name, (await api(t.url, 'GET', `${GEN}/${id}`, { key })).body.state]));
    expect(Object.fromEntries(states)).toEqual({ sdPro: 'completed', sdFast: 'completed', wanTwice: 'completed', wanRefused: 'failed', klingEdge: 'completed', klingOver: 'completed', klingUnder: 'completed', runway: 'completed' });

    const figures = async (id: string) => (await attempts(id)).map((a) => [a.channel, a.outcome, a.model, a.cost, a.billed_amount, a.billed_unit, a.billed_cost, a.billing_mismatch]);
    expect(await figures(ids.sdPro)).toEqual([['seedance', 'accepted', 'sd-pro', 0.1089, 108900, 'tokens', 0.1089, false]]);
    expect(await figures(ids.sdFast)).toEqual([['seedance', 'accepted', 'sd-fast', 0.1, 108900, 'tokens', null, false]]);
    expect(await figures(ids.wanTwice)).toEqual([['wan', 'accepted', 'wan-t2v', 0.5, 10, 'seconds', 1, true]]);
    expect(await figures(ids.wanRefused)).toEqual([['wan', 'accepted', 'wan-t2v', 0.5, null, null, null, false]]);
    expect(await figures(ids.klingEdge)).toEqual([['kling', 'accepted', 'kling-std', 0.14, 1.1, 'units', 0.154, false]]);
    expect(await figures(ids.klingOver)).toEqual([['kling', 'accepted', 'kling-std', 0.14, 1.11, 'units', 0.1554, true]]);
    expect(await figures(ids.klingUnder)).toEqual([['kling', 'accepted', 'kling-std', 0.14, 0.89, 'units', 0.1246, true]]);
    expect(await figures(ids.runway)).toEqual([['runway', 'accepted', 'gen45', 0.5, 50, 'credits', 0.5, false]]);

    // counted once each, by operation, channel and model; none for the tasks billed within the tolerance
    expect(await mismatchMetric()).toEqual({ 'video/wan/wan-t2v': 1, 'video/kling/kling-std': 2 });
    const warned = t.logs.lines.filter((l) => l.msg === 'a vendor billed an upstream task differently from its price (BILLED_COST_TOLERANCE)');
    expect(warned.map((l) => [l.task_id, l.channel, l.cost, l.billed_cost]).sort()).toEqual(
      [
        [ids.wanTwice, 'wan', 0.5, 1],
        [ids.klingOver, 'kling', 0.14, 0.1554],
        [ids.klingUnder, 'kling', 0.14, 0.1246],
      ].sort(),
    );
  }, 240_000);

  it('shows per channel and model our cost beside the billed cost, the billed amounts by unit, the tasks without a figure and the mismatches', async () => {
    const usage = await admin('GET', `/admin/usage?owner=${OWNER}`);
    expect(usage.status).toBe(200);
    const rows = Object.fromEntries((usage.body.upstream_costs as CostRow[]).map(({ owner, operation, channel, model, ...figures }) => [`${owner}/${operation}/${channel}/${model}`, figures]));
    expect(rows).toEqual({
      [`${OWNER}/video/kling/kling-std`]: { upstream_tasks: 3, unpriced: 0, cost: 0.42, billed_cost: 0.434, billed: { units: 3.1 }, unbilled: 0, billing_mismatches: 2 },
      [`${OWNER}/video/runway/gen45`]: { upstream_tasks: 1, unpriced: 0, cost: 0.5, billed_cost: 0.5, billed: { credits: 50 }, unbilled: 0, billing_mismatches: 0 },
      // sd-fast's tokens are kept without a price for them: no billed cost, and no mismatch
      [`${OWNER}/video/seedance/sd-fast`]: { upstream_tasks: 1, unpriced: 0, cost: 0.1, billed_cost: null, billed: { tokens: 108900 }, unbilled: 0, billing_mismatches: 0 },
      [`${OWNER}/video/seedance/sd-pro`]: { upstream_tasks: 1, unpriced: 0, cost: 0.1089, billed_cost: 0.1089, billed: { tokens: 108900 }, unbilled: 0, billing_mismatches: 0 },
      // the vendor billed 10 s for a generation priced at 5: flagged; its refused task reported nothing
      [`${OWNER}/video/wan/wan-t2v`]: { upstream_tasks: 2, unpriced: 0, cost: 1, billed_cost: 1, billed: { seconds: 10 }, unbilled: 1, billing_mismatches: 1 },
    });
  });

  it('records a figure once: the same figure again (a step that re-runs) changes and counts nothing, nor does a changed one still beyond the tolerance', async () => {
    const [accepted] = await attempts(ids.wanTwice);
    const billing = t.app.get(UpstreamBilling);
    const channel = { id: channels.wan, name: 'wan' };
    await billing.record(ids.wanTwice, 'video', channel, accepted.upstream_id!, { amount: 10, unit: 'seconds', cost: 1 });
    expect(await mismatchMetric()).toEqual({ 'video/wan/wan-t2v': 1, 'video/kling/kling-std': 2 });
    await billing.record(ids.wanTwice, 'video', channel, accepted.upstream_id!, { amount: 12, unit: 'seconds', cost: 1.2 });
    expect(await mismatchMetric()).toEqual({ 'video/wan/wan-t2v': 1, 'video/kling/kling-std': 2 });
    expect((await attempts(ids.wanTwice)).map((a) => [a.billed_amount, a.billed_cost, a.billing_mismatch])).toEqual([[12, 1.2, true]]);
    // an upstream id no accepted attempt of the task has: nothing written
    await billing.record(ids.wanTwice, 'video', channel, 'no-such-upstream-task', { amount: 99, unit: 'seconds', cost: 9.9 });
    expect((await attempts(ids.wanTwice)).map((a) => a.billed_amount)).toEqual([12]);
  });

  it('validates a price per billed unit as the other prices: a known unit, a number from 0, on video models only', async () => {
    const refused = async (models: unknown[], message: RegExp) => {
      const res = await admin('POST', '/admin/channels', { name: 'bad-price', operations: ['video'], protocol: 'kling', base_url: kling.url, credentials: { access_key: KLING[0], secret_key: KLING[1] }, models });
      expect([res.status, res.body.message]).toEqual([400, expect.stringMatching(message)]);
    };
    const model = (per_billed_unit: unknown) => [{ name: 'k', vendor_model: 'kling-v1-6', price: { per_billed_unit } }];
    await refused(model({ coins: 1 }), /per_billed_unit must map units, credits, tokens, seconds to a number from 0 \(not "coins": 1\)/);
    await refused(model({ units: -1 }), /per_billed_unit must map .* \(not "units": -1\)/);
    await refused(model({ units: '0.14' }), /per_billed_unit must map .* \(not "units": "0.14"\)/);
    await refused(model([0.14]), /per_billed_unit must be an object/);
    const image = await admin('POST', '/admin/channels', { name: 'bad-image-price', operations: ['image'], protocol: 'openai', base_url: 'https://api.openai.com/v1', credentials: { api_key: 'sk-test-0123456789abcdef' }, models: [{ name: 'img', vendor_model: 'gpt-image-1', price: { per_image: 0.04, per_billed_unit: { credits: 1 } } }] });
    expect([image.status, image.body.message]).toEqual([400, expect.stringMatching(/an image model is priced per_image .*not per_second or per_billed_unit/)]);
    // kept as given, and answered with the channel
    const listed = ((await admin('GET', '/admin/channels')).body as { name: string; models: { price?: unknown }[] }[]).find((c) => c.name === 'seedance')!;
    expect(listed.models.map((m) => m.price)).toEqual([{ per_second: { '720p': 0.02178 }, per_billed_unit: { tokens: 0.000001 } }, { per_second: { '720p': 0.02 } }]);
  });
});
