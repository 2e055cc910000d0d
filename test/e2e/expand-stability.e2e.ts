import sharp from 'sharp';
import { deadEndWords } from '../../src/modules/channels/channel-routing.js';
import type { FakeUpstream } from '../support/fake-upstreams.js';
import { startFakeKling } from '../support/vendors/kling/kling.fake.js';
import { type FakeStability, startFakeStability } from '../support/vendors/stability/stability.fake.js';
import { png } from '../support/images.js';
import { pollUntil } from '../support/poll.js';
import { api, startTestApp, type TestApp } from '../support/test-app.js';

const EXPAND = '/video-a/v1/images/editing/expand';
const ADMIN = 'admin-secret-0123456789';
const KLING: [string, string] = ['ak-expand-stab-01', 'sk-expand-stab-secret'];
const STABILITY_KEY = 'sk-stability-0123456789abcdef';

/**
 * Expand served by Stability's outpaint while Kling's channels are disabled: the caller keeps Kling's record;
 * Stability is asked in its own words (margins in pixels, multipart) and only for what it can make exactly.
 */
describe('expand through Stability (outpaint) behind the Kling door', () => {
  let t: TestApp;
  let key: string;
  let kling: FakeUpstream;
  let stability: FakeStability;
  const channels: Record<string, string> = {};

  beforeAll(async () => {
    kling = await startFakeKling(...KLING);
    stability = await startFakeStability(STABILITY_KEY);
    t = await startTestApp({ EXPAND_PROVIDER: 'relay', EXPAND_ROUTING: 'cost', ADMIN_API_KEY: ADMIN, CHANNEL_SECRET_KEY: 'c'.repeat(64), OUTBOUND_ALLOW_HOSTS: '127.0.0.1', RELAY_POLL_MS: '100' });
    key = await t.createKey('team-expand');
    const add = async (name: string, body: Record<string, unknown>) => {
      const res = await api(t.url, 'POST', '/admin/channels', { key: ADMIN, body: { name, operations: ['expand'], ...body } });
      expect([res.status, res.body.message]).toEqual([201, undefined]);
      channels[name] = res.body.id as string;
    };
    await add('kling', { protocol: 'kling', base_url: kling.url, credentials: { access_key: KLING[0], secret_key: KLING[1] }, models: [{ name: 'kling-expand', vendor_model: 'kling-expand', price: { per_image: 0.03 } }] });
    await add('stability', { protocol: 'stability', base_url: stability.url, credentials: { api_key: STABILITY_KEY }, models: [{ name: 'outpaint', vendor_model: 'outpaint', price: { per_image: 0.04 } }] });
  }, 60_000);
  afterAll(async () => {
    await t.close();
    await Promise.all([kling.close(), stability.close()]);
  });

  const admin = (method: string, path: string, body?: unknown) => api(t.url, method, path, { key: ADMIN, body });
  const setEnabled = async (name: string, on: boolean) => expect((await admin('POST', `/admin/channels/${channels[name]}/${on ? 'enable' : 'disable'}`)).status).toBe(200);
  const finished = async (id: string) =>
    (await pollUntil(() => api(t.url, 'GET', `${EXPAND}/${id}`, { key }), (r) => ['succeed', 'failed'].includes(r.body.data?.task_status), { timeoutMs: 60_000, what: `task ${id}` })).body.data;
  /** Kling's body: an image and its four ratios (each required), zero unless given. */
  const expandBody = (image: string, ratios: { up?: number; bottom?: number; left?: number; right?: number }, more: Record<string, unknown> = {}) => ({
    image,
    up_expansion_ratio: ratios.up ?? 0,
    bottom_expansion_ratio: ratios.bottom ?? 0,
    left_expansion_ratio: ratios.left ?? 0,
    right_expansion_ratio: ratios.right ?? 0,
    ...more,
  });
  const sizeOf = async (url: string) => {
    const meta = await sharp(Buffer.from(await (await fetch(url)).arrayBuffer())).metadata();
    return [meta.width, meta.height];
  };

  it('with Kling disabled, Stability makes the images: the same Kling record, the margins asked for in pixels, one call per image, its cost kept', async () => {
    await setEnabled('kling', false);
    const image = (await png(640, 480)).toString('base64');
    const created = await api(t.url, 'POST', EXPAND, { key, body: { image, up_expansion_ratio: 0.5, bottom_expansion_ratio: 0, left_expansion_ratio: 0.25, right_expansion_ratio: 0.25, prompt: 'a wider beach', n: 2 } });
    expect([created.status, created.body.code, created.body.data.task_status]).toEqual([200, 0, 'submitted']);
    const done = await finished(created.body.data.task_id);
    expect(done.task_status).toBe('succeed');
    expect(done.task_result.images.map((i: { index: number }) => i.index)).toEqual([0, 1]);
    // 640 x 480 with a quarter of the width on each side and half the height on top
    for (const i of done.task_result.images) expect(await sizeOf(i.url)).toEqual([960, 720]);
    expect(stability.received.map((r) => [r.fields.left, r.fields.right, r.fields.up, r.fields.down, r.fields.prompt, r.fields.output_format, r.image?.width, r.image?.height])).toEqual([
      ['160', '160', '240', '0', 'a wider beach', 'png', 640, 480],
      ['160', '160', '240', '0', 'a wider beach', 'png', 640, 480],
    ]);
    const attempts = (await admin('GET', `/admin/tasks/${done.task_id}/attempts`)).body;
    expect(attempts.map((a: { channel: string; outcome: string; model: string; cost: number }) => [a.channel, a.outcome, a.model, a.cost])).toEqual([['stability', 'accepted', 'outpaint', 0.08]]);
    expect(stability.authFailures).toEqual([]);
  }, 120_000);

  it('never sends Stability what it cannot make exactly (a watermark, a margin over 2000 px): with Kling disabled such a task fails at once saying so; Kling makes it once enabled', async () => {
    const before = stability.received.length;
    const wide = (await png(2400, 1200)).toString('base64');
    const watermarked = await api(t.url, 'POST', EXPAND, { key, body: expandBody((await png(400, 300)).toString('base64'), { up: 0.2 }, { watermark_info: { enabled: true } }) });
    const tooWide = await api(t.url, 'POST', EXPAND, { key, body: expandBody(wide, { left: 1 }) });
    // exactly at Stability's bound (2000 px): Stability takes it
    const atBound = await api(t.url, 'POST', EXPAND, { key, body: expandBody(wide, { left: 2000 / 2400 }) });
    expect([watermarked.body.message, tooWide.body.message, atBound.body.message]).toEqual(['SUCCEED', 'SUCCEED', 'SUCCEED']);
    expect((await finished(atBound.body.data.task_id)).task_status).toBe('succeed');
    expect(stability.received.slice(before).map((r) => r.fields.left)).toEqual(['2000']);
    // the other two have nowhere to go (the one channel that could make them is disabled): they end at once, saying why
    for (const id of [watermarked.body.data.task_id, tooWide.body.data.task_id]) {
      expect([id, await finished(id)]).toEqual([id, expect.objectContaining({ task_status: 'failed', task_status_msg: deadEndWords('expand', 'task', 'disabled') })]);
    }
    // … and Kling makes them once enabled
    await setEnabled('kling', true);
    const again = [
      await api(t.url, 'POST', EXPAND, { key, body: expandBody((await png(400, 300)).toString('base64'), { up: 0.2 }, { watermark_info: { enabled: true } }) }),
      await api(t.url, 'POST', EXPAND, { key, body: expandBody(wide, { left: 1 }) }),
    ];
    for (const created of again) expect((await finished(created.body.data.task_id)).task_status).toBe('succeed');
    expect(stability.received.length).toBe(before + 1);
  }, 120_000);

  it('with both enabled and EXPAND_ROUTING=cost, Kling (0.03 an image) takes it; a content refusal by Stability fails the task with its words', async () => {
    const k = kling.created.size;
    const cheap = await api(t.url, 'POST', EXPAND, { key, body: expandBody((await png(400, 300)).toString('base64'), { right: 0.5 }) });
    expect(cheap.body.message).toBe('SUCCEED');
    expect((await finished(cheap.body.data.task_id)).task_status).toBe('succeed');
    expect(kling.created.size).toBe(k + 1);
    await setEnabled('kling', false);
    stability.knobs.moderate = true;
    const refused = await api(t.url, 'POST', EXPAND, { key, body: expandBody((await png(400, 300)).toString('base64'), { right: 0.5 }) });
    const done = await finished(refused.body.data.task_id);
    stability.knobs.moderate = false;
    expect([done.task_status, done.task_status_msg]).toEqual(['failed', expect.stringMatching(/content_moderation: Your request was flagged/)]);
    // the channel was not taken for a refused key
    expect((await admin('GET', `/admin/channels/${channels.stability}`)).body.status).toBe('enabled');
    expect((await admin('POST', `/admin/channels/${channels.stability}/test`)).body).toEqual(expect.objectContaining({ ok: true, status_code: 200 }));
    const text = JSON.stringify(t.logs.lines) + (await t.metrics());
    expect(text).not.toContain(STABILITY_KEY);
  }, 120_000);

  it('Kling takes a task then fails it (its own error): Stability makes it, charged once, both upstream tasks kept; a moderation failure does not fail over', async () => {
    await setEnabled('kling', true);
    expect((await admin('PATCH', `/admin/channels/${channels.kling}`, { priority: 10 })).status).toBe(200);
    kling.knobs.failWith = 'Internal error, please retry later';
    const s = stability.received.length;
    const usage = async () => (await api(t.url, 'GET', '/usage', { key })).body.credits.used as number;
    const before = await usage();
    const created = await api(t.url, 'POST', EXPAND, { key, body: expandBody((await png(400, 300)).toString('base64'), { left: 0.5 }) });
    const done = await finished(created.body.data.task_id);
    expect(done.task_status).toBe('succeed');
    expect(await sizeOf(done.task_result.images[0].url)).toEqual([600, 300]);
    expect(stability.received.length).toBe(s + 1);
    const attempts = (await admin('GET', `/admin/tasks/${done.task_id}/attempts`)).body;
    expect(attempts.map((a: { channel: string; outcome: string; cost: number | null }) => [a.channel, a.outcome, a.cost])).toEqual([
      ['kling', 'accepted', 0.03],
      ['kling', 'abandoned', null],
      ['stability', 'accepted', 0.04],
    ]);
    expect((await usage()) - before).toBe(1);
    // Kling's risk control is the content's fault: the task fails with Kling's words, Stability is not asked
    kling.knobs.failWith = 'Failure to pass the risk control system';
    const risky = await api(t.url, 'POST', EXPAND, { key, body: expandBody((await png(400, 300)).toString('base64'), { left: 0.5 }) });
    const refused = await finished(risky.body.data.task_id);
    kling.knobs.failWith = undefined;
    expect([refused.task_status, refused.task_status_msg]).toEqual(['failed', expect.stringMatching(/risk control/)]);
    expect(stability.received.length).toBe(s + 1);
  }, 120_000);

  it("a Stability outpaint whose answer is lost is never sent again: the task goes to Kling when it may, and fails when no other channel can take it", async () => {
    // Stability first; its connection closes once it has read the outpaint (it may have made and billed it)
    expect((await admin('PATCH', `/admin/channels/${channels.stability}`, { priority: 20 })).status).toBe(200);
    stability.knobs.reset = true;
    const s = stability.received.length;
    const lost = await api(t.url, 'POST', EXPAND, { key, body: expandBody((await png(400, 300)).toString('base64'), { left: 0.5 }) });
    const done = await finished(lost.body.data.task_id);
    expect(done.task_status).toBe('succeed');
    expect(stability.received.length).toBe(s + 1);
    const attempts = (await admin('GET', `/admin/tasks/${done.task_id}/attempts`)).body as { channel: string; outcome: string; cost: number | null }[];
    expect(attempts.filter((a) => a.channel === 'stability' && a.outcome === 'accepted')).toEqual([]);
    expect(attempts.map((a) => [a.channel, a.outcome, a.cost]).at(-1)).toEqual(['kling', 'accepted', 0.03]);
    // with Kling disabled, nothing else may take it: it fails, and Stability is still asked once
    await setEnabled('kling', false);
    const alone = await api(t.url, 'POST', EXPAND, { key, body: expandBody((await png(400, 300)).toString('base64'), { left: 0.5 }) });
    const failed = await finished(alone.body.data.task_id);
    stability.knobs.reset = false;
    await setEnabled('kling', true);
    expect((await admin('PATCH', `/admin/channels/${channels.stability}`, { priority: 0 })).status).toBe(200);
    expect(failed.task_status).toBe('failed');
    expect(stability.received.length).toBe(s + 2);
    const gave = (await admin('GET', `/admin/tasks/${failed.task_id}/attempts`)).body as { channel: string | null; outcome: string; message: string | null }[];
    expect(gave.at(-1)).toEqual(expect.objectContaining({ outcome: 'gateway_error', message: expect.stringMatching(/never answered the create request .*it was not sent again/) }));
  }, 120_000);

  it('with only Stability channels configured, an expand Stability cannot make is refused at once with 400 naming the field; one it can make is taken', async () => {
    expect((await admin('DELETE', `/admin/channels/${channels.kling}`)).status).toBe(200);
    const watermarked = await pollUntil(
      async () => api(t.url, 'POST', EXPAND, { key, body: expandBody((await png(400, 300)).toString('base64'), { up: 0.2 }, { watermark_info: { enabled: true } }) }),
      (r) => r.status === 400,
      { timeoutMs: 10_000, what: 'the channels to be read again' },
    );
    expect([watermarked.body.code, watermarked.body.message]).toEqual([1201, expect.stringMatching(/^watermark_info: Stability makes no watermarked copy; no configured channel makes it/)]);
    const wide = await api(t.url, 'POST', EXPAND, { key, body: expandBody((await png(2400, 1200)).toString('base64'), { left: 1 }) });
    expect([wide.status, wide.body.message]).toEqual([400, expect.stringMatching(/^left_expansion_ratio: 2400 px, Stability adds at most 2000 px a side/)]);
    const fine = await api(t.url, 'POST', EXPAND, { key, body: expandBody((await png(400, 300)).toString('base64'), { up: 0.2 }) });
    expect((await finished(fine.body.data.task_id)).task_status).toBe('succeed');
  }, 120_000);
});
