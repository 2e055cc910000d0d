import { randomBytes } from 'node:crypto';
import { Tracing } from '../../src/infra/tracing/tracing.service.js';
import { startFakeKling } from '../support/vendors/kling/kling.fake.js';
import { png } from '../support/images.js';
import { type CollectedSpan, SPAN_KIND, startCollector } from '../support/otlp-collector.js';
import { pollUntil } from '../support/poll.js';
import { api, queryDb, startTestApp, type TestApp } from '../support/test-app.js';
import { startReceiver } from '../support/webhook-receiver.js';

const EXPAND = '/video-a/v1/images/editing/expand';

let image: string;
beforeAll(async () => {
  image = (await png(300, 300)).toString('base64');
});
const expandBody = (callback_url: string) => ({ image, up_expansion_ratio: 0.2, bottom_expansion_ratio: 0, left_expansion_ratio: 0, right_expansion_ratio: 0, callback_url });
const hex = (bytes: number) => randomBytes(bytes).toString('hex');
const isDatabase = (s: CollectedSpan) => s.name.startsWith('prisma:') || s.attributes['db.system.name'] !== undefined;

/** Whether `span` is `ancestor` or below it, in `spans`. */
function under(spans: CollectedSpan[], span: CollectedSpan, ancestor: CollectedSpan): boolean {
  const byId = new Map(spans.map((s) => [s.spanId, s]));
  for (let at: CollectedSpan | undefined = span; at; at = byId.get(at.parentSpanId)) if (at.spanId === ancestor.spanId) return true;
  return false;
}

/** OpenTelemetry's process-wide registrations (tracer provider, context manager, propagator), as @opentelemetry/api keeps them. */
function otelGlobals(): Record<string, unknown> {
  return ((globalThis as Record<symbol, unknown>)[Symbol.for('opentelemetry.js.api.1')] ?? {}) as Record<string, unknown>;
}

describe('OpenTelemetry traces, with OTEL_EXPORTER_OTLP_ENDPOINT set', () => {
  let collector: Awaited<ReturnType<typeof startCollector>>;
  let receiver: Awaited<ReturnType<typeof startReceiver>>;
  let t: TestApp;
  let key: string;

  beforeAll(async () => {
    collector = await startCollector();
    receiver = await startReceiver();
    t = await startTestApp({ ALLOW_PRIVATE_URLS: 'true', OTEL_EXPORTER_OTLP_ENDPOINT: collector.url, OTEL_SERVICE_NAME: 'mgw-under-test', OTEL_BSP_SCHEDULE_DELAY: '50' });
    key = await t.createKey('traced');
  });
  afterAll(async () => {
    await t?.close();
    await receiver?.close();
    await collector?.close();
  });

  const hooksAt = (path: string) => receiver.received.filter((r) => r.path === path);

  it('exports one trace for an expand with a traceparent and a callback_url: the request, its step, its deliveries and database calls; each callback carries it', async () => {
    const traceId = hex(16);
    const callerSpanId = hex(8);
    const created = await api(t.url, 'POST', EXPAND, { key, body: expandBody(`${receiver.url}/traced`), headers: { traceparent: `00-${traceId}-${callerSpanId}-01` } });
    expect([created.status, created.body.message]).toEqual([200, 'SUCCEED']);
    const taskId: string = created.body.data.task_id;

    await pollUntil(async () => hooksAt('/traced').map((r) => r.json?.task_status), (s) => s.length === 2, { what: 'the processing and succeed callbacks' });
    const inTrace = () => collector.spans.filter((s) => s.traceId === traceId);
    const isHookPost = (s: CollectedSpan) => s.kind === SPAN_KIND.client && s.attributes['url.full'] === `${receiver.url}/traced`;
    const spans = await pollUntil(
      async () => inTrace(),
      (s) => s.filter((x) => x.name === 'callback.deliver').length === 2 && s.filter(isHookPost).length === 2 && s.some((x) => x.name === 'task.step expand') && s.some((x) => x.kind === SPAN_KIND.server),
      { what: 'the spans of the trace at the collector' },
    );
    expect(collector.refused).toBe(0);

    // the request continues the caller's span
    const servers = spans.filter((s) => s.kind === SPAN_KIND.server);
    expect(servers).toHaveLength(1);
    const [server] = servers;
    expect(server).toEqual(expect.objectContaining({ parentSpanId: callerSpanId, name: `POST ${EXPAND}`, service: 'mgw-under-test' }));
    expect(server.attributes).toEqual(expect.objectContaining({ 'http.request.method': 'POST', 'http.route': EXPAND, 'url.path': EXPAND, 'http.response.status_code': 200, 'mgw.request_id': created.headers.get('x-request-id') }));

    // the task remembers it, and its step (on a worker, through the queue) is the request's child
    const [row] = await queryDb<{ trace_parent: string }>(t.db, 'SELECT trace_parent FROM tasks WHERE id = $1', [taskId]);
    expect(row.trace_parent).toBe(`00-${traceId}-${server.spanId}-01`);
    const steps = spans.filter((s) => s.name === 'task.step expand');
    expect(steps).toHaveLength(1);
    const [step] = steps;
    expect([step.parentSpanId, step.attributes['mgw.task.id'], step.attributes['mgw.task.outcome']]).toEqual([server.spanId, taskId, 'done']);

    // each delivery continues the work that made its notification: the claim (outside the step) made
    // "processing" in the request's trace, the step made "succeed"
    const deliveries = spans.filter((s) => s.name === 'callback.deliver');
    expect(deliveries.map((d) => [d.attributes['mgw.callback.status'], d.parentSpanId, d.attributes['mgw.task.id']]).sort()).toEqual([
      ['processing', server.spanId, taskId],
      ['succeed', step.spanId, taskId],
    ]);

    // each callback POST is a client span of its delivery, and carries that span as its traceparent
    const posts = spans.filter(isHookPost);
    for (const post of posts) expect(deliveries.map((d) => d.spanId)).toContain(post.parentSpanId);
    expect(hooksAt('/traced').map((r) => r.headers.traceparent).sort()).toEqual(posts.map((p) => `00-${traceId}-${p.spanId}-01`).sort());

    // database calls: our own SQL and Prisma's, in the request, in the step and in a delivery
    const database = spans.filter(isDatabase);
    expect(database.some((s) => under(spans, s, server) && !under(spans, s, step))).toBe(true);
    expect(database.some((s) => under(spans, s, step))).toBe(true);
    expect(database.some((s) => deliveries.some((d) => under(spans, s, d)))).toBe(true);
    expect(database.some((s) => s.name === 'prisma:client:db_query' && s.attributes['db.query.text'])).toBe(true);
    expect(database.some((s) => s.attributes['db.system.name'] === 'postgresql' && /INSERT INTO tasks/.test(String(s.attributes['db.query.text'])))).toBe(true);
    // every span of the trace hangs from the caller's span: nothing is orphaned
    for (const s of spans) expect([s.name, under(spans, s, server)]).toEqual([s.name, true]);

    // log lines written within a span carry its ids
    const lines = t.logs.lines;
    const access = lines.find((l) => l.msg === 'request completed' && l.request_id === created.headers.get('x-request-id'));
    expect([access?.trace_id, access?.span_id]).toEqual([traceId, server.spanId]);
    const succeeded = lines.find((l) => l.msg === 'expand task succeeded' && l.task_id === taskId);
    expect([succeeded?.trace_id, succeeded?.span_id]).toEqual([traceId, step.spanId]);
    const delivered = lines.filter((l) => l.msg === 'callback delivered' && l.task_id === taskId);
    expect(delivered.map((l) => l.trace_id)).toEqual([traceId, traceId]);
  });

  it('starts a trace of its own for a request without a traceparent, and its step continues it', async () => {
    const created = await api(t.url, 'POST', EXPAND, { key, body: expandBody(`${receiver.url}/untraced`) });
    expect(created.status).toBe(200);
    const taskId: string = created.body.data.task_id;
    const step = await pollUntil(
      async () => collector.spans.find((s) => s.name === 'task.step expand' && s.attributes['mgw.task.id'] === taskId),
      (s) => s !== undefined,
      { what: "the task's step span" },
    );
    const server = collector.spans.find((s) => s.spanId === step!.parentSpanId);
    expect(server).toEqual(expect.objectContaining({ kind: SPAN_KIND.server, traceId: step!.traceId, parentSpanId: '' }));
  });

  it('exports nothing of a trace the caller did not sample, and still passes its trace id on to the callbacks', async () => {
    const traceId = hex(16);
    const created = await api(t.url, 'POST', EXPAND, { key, body: expandBody(`${receiver.url}/unsampled`), headers: { traceparent: `00-${traceId}-${hex(8)}-00` } });
    expect(created.status).toBe(200);
    const hooks = await pollUntil(async () => hooksAt('/unsampled'), (h) => h.length === 2, { what: 'the two callbacks' });
    for (const hook of hooks) expect(hook.headers.traceparent).toMatch(new RegExp(`^00-${traceId}-[0-9a-f]{16}-00$`));
    await pollUntil(
      async () => (await api(t.url, 'GET', `${EXPAND}/${created.body.data.task_id}/callbacks`, { key })).body.data.map((d: { state: string }) => d.state),
      (states: string[]) => states.length === 2 && states.every((s) => s === 'delivered'),
      { what: 'both deliveries to be recorded' },
    );
    // a sampled request after it: once its span is exported, whatever ended before it has been too
    const barrier = hex(16);
    await api(t.url, 'GET', '/health', { headers: { traceparent: `00-${barrier}-${hex(8)}-01` } });
    await pollUntil(async () => collector.spans.some((s) => s.traceId === barrier), (seen) => seen, { what: 'the barrier request span' });
    expect(collector.spans.filter((s) => s.traceId === traceId)).toEqual([]);
  });
});

describe('OpenTelemetry traces of a relayed task', () => {
  it("continue through the wait upstream: the create's step, the poll that found the news, the final step", async () => {
    const collector = await startCollector();
    const kling = await startFakeKling('ak-traced-000001', 'sk-traced-secret-01');
    kling.knobs.pollsUntilDone = 2;
    const t = await startTestApp({
      OTEL_EXPORTER_OTLP_ENDPOINT: collector.url,
      OTEL_BSP_SCHEDULE_DELAY: '50',
      EXPAND_PROVIDER: 'relay',
      RELAY_EXPAND_URL: kling.url,
      RELAY_KLING_ACCESS_KEY: 'ak-traced-000001',
      RELAY_KLING_SECRET_KEY: 'sk-traced-secret-01',
      OUTBOUND_ALLOW_HOSTS: '127.0.0.1',
      RELAY_POLL_MS: '100',
    });
    try {
      const key = await t.createKey('traced-relay');
      const traceId = hex(16);
      const created = await api(t.url, 'POST', EXPAND, { key, body: { image, up_expansion_ratio: 0.2, bottom_expansion_ratio: 0, left_expansion_ratio: 0, right_expansion_ratio: 0 }, headers: { traceparent: `00-${traceId}-${hex(8)}-01` } });
      const taskId: string = created.body.data.task_id;
      await pollUntil(() => api(t.url, 'GET', `${EXPAND}/${taskId}`, { key }), (r) => r.body.data.task_status === 'succeed', { what: 'the relayed task' });
      const spans = await pollUntil(
        async () => collector.spans.filter((s) => s.traceId === traceId),
        (found) => found.filter((s) => s.name === 'task.step expand').length === 2 && found.some((s) => s.name === 'task.poll expand'),
        { what: 'the steps and the poll in the trace' },
      );
      const server = spans.find((s) => s.kind === SPAN_KIND.server)!;
      const poll = spans.find((s) => s.name === 'task.poll expand')!;
      expect([poll.parentSpanId, poll.attributes['mgw.task.id']]).toEqual([server.spanId, taskId]);
      expect(spans.filter((s) => s.name === 'task.step expand').map((s) => s.attributes['mgw.task.outcome']).sort()).toEqual(['done', 'watch']);
    } finally {
      await t.close();
      await kling.close();
      await collector.close();
    }
  });
});

describe('OpenTelemetry traces, without OTEL_EXPORTER_OTLP_ENDPOINT', () => {
  let receiver: Awaited<ReturnType<typeof startReceiver>>;
  let t: TestApp;

  beforeAll(async () => {
    receiver = await startReceiver();
    t = await startTestApp({ ALLOW_PRIVATE_URLS: 'true', OTEL_SERVICE_NAME: 'mgw-untraced', OTEL_BSP_SCHEDULE_DELAY: '50' });
  });
  afterAll(async () => {
    await t?.close();
    await receiver?.close();
  });

  it('starts no SDK, stores no trace and adds no traceparent to callbacks', async () => {
    expect(t.config.tracing).toBeUndefined();
    expect(t.app.get(Tracing).enabled).toBe(false);
    // no tracer provider, context manager or propagator is registered (the traced app above unregistered its own on close)
    expect([otelGlobals().trace, otelGlobals().context, otelGlobals().propagation]).toEqual([undefined, undefined, undefined]);

    const key = await t.createKey('untraced');
    const traceId = hex(16);
    const created = await api(t.url, 'POST', EXPAND, { key, body: expandBody(`${receiver.url}/plain`), headers: { traceparent: `00-${traceId}-${hex(8)}-01` } });
    expect(created.status).toBe(200);
    const hooks = await pollUntil(async () => receiver.received.filter((r) => r.path === '/plain'), (h) => h.length === 2, { what: 'the two callbacks' });
    expect(hooks.map((h) => h.headers.traceparent)).toEqual([undefined, undefined]);
    const [task] = await queryDb<{ trace_parent: string | null }>(t.db, 'SELECT trace_parent FROM tasks WHERE id = $1', [created.body.data.task_id]);
    expect(task.trace_parent).toBeNull();
    const rows = await queryDb<{ trace_parent: string | null }>(t.db, 'SELECT trace_parent FROM callback_deliveries WHERE task_id = $1', [created.body.data.task_id]);
    expect(rows.map((r) => r.trace_parent)).toEqual([null, null]);
    expect(t.logs.lines.filter((l) => 'trace_id' in l)).toEqual([]);
    expect([otelGlobals().trace, otelGlobals().context]).toEqual([undefined, undefined]);
  });
});
