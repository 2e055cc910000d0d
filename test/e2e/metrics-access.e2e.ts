import { api, startTestApp, TEST_METRICS_TOKEN, type TestApp } from '../support/test-app.js';

const ADMIN = 'admin-secret-0123456789';
const TOKEN = 'metrics-token-for-prometheus-0123';

/** GET /metrics with this Authorization header (none when undefined): status, body, headers. */
async function metrics(t: TestApp, authorization?: string): Promise<{ status: number; text: string; body: any; headers: Headers }> {
  const res = await fetch(`${t.url}/metrics`, { headers: authorization === undefined ? {} : { authorization } });
  const text = await res.text();
  let body: unknown;
  try {
    body = JSON.parse(text);
  } catch {
    body = undefined;
  }
  return { status: res.status, text, body, headers: res.headers };
}

function expectEnvelope(res: { status: number; body: any; headers: Headers }, status: number, code: number, message?: RegExp): void {
  expect([res.status, res.body]).toEqual([status, { code, message: message ? expect.stringMatching(message) : expect.any(String), request_id: res.headers.get('x-request-id') }]);
}

describe('GET /metrics takes the metrics token or the admin key', () => {
  let t: TestApp;
  let worker: TestApp;
  let key: string;
  beforeAll(async () => {
    // ROLE=api: the task accepted below is counted and not run
    t = await startTestApp({ ROLE: 'api', ADMIN_API_KEY: ADMIN, METRICS_TOKEN: TOKEN });
    // a worker (ROLE=worker serves only /health and /metrics) on the same database, without the admin key, as in deploy/k8s
    worker = await startTestApp({ ROLE: 'worker', METRICS_TOKEN: TOKEN }, { db: t.db });
    key = await t.createKey('team-metrics');
  });
  afterAll(async () => {
    await worker?.close();
    await t?.close();
  });

  it('answers 401 in the envelope without a credential, with a wrong token, another scheme, or a token that only starts right; 403 to a team key', async () => {
    expectEnvelope(await metrics(t), 401, 1001, /Authorization header is required: send "Authorization: Bearer <METRICS_TOKEN>"/);
    expectEnvelope(await metrics(t, ''), 401, 1001);
    expectEnvelope(await metrics(t, `Basic ${TOKEN}`), 401, 1002);
    expectEnvelope(await metrics(t, 'Bearer'), 401, 1002);
    for (const wrong of [`Bearer ${TOKEN}x`, `Bearer ${TOKEN.slice(0, -1)}`, 'Bearer metrics-token-for-prometheus-0124', `Bearer ${TEST_METRICS_TOKEN}`]) {
      const res = await metrics(t, wrong);
      expect([wrong, res.status]).toEqual([wrong, 401]);
      expectEnvelope(res, 401, 1000, /metrics token \(METRICS_TOKEN\) or the admin key/);
      expect(res.text).not.toContain('mgw_');
    }
    const team = await metrics(t, `Bearer ${key}`);
    expectEnvelope(team, 403, 1103, /^The metrics take the metrics token \(METRICS_TOKEN\) or the admin key; an API key may not read them$/);
    expect(team.text).not.toContain('mgw_');
  });

  it('answers 200 with the Prometheus text to the token and to the admin key, owner labels kept', async () => {
    const created = await api(t.url, 'POST', '/video-b/v1/generations', { key, body: { prompt: 'a lighthouse at dusk' } });
    expect(created.status).toBe(201);
    for (const credential of [TOKEN, ADMIN]) {
      const res = await metrics(t, `Bearer ${credential}`);
      expect(res.status).toBe(200);
      expect(res.headers.get('content-type')).toMatch(/^text\/plain; version=0\.0\.4/);
      expect(res.text).toMatch(/^mgw_tasks_accepted_total\{owner="team-metrics",operation="video"\} 1$/m);
      expect(res.text).toMatch(/^mgw_process_cpu_seconds_total /m);
    }
    // the scheme in any case, as everywhere else
    expect((await metrics(t, `bearer ${TOKEN}`)).status).toBe(200);
  });

  it('on a worker (ROLE=worker): 401 without or with a wrong token, 200 with the token; its other routes stay 404', async () => {
    expectEnvelope(await metrics(worker), 401, 1001);
    expectEnvelope(await metrics(worker, `Bearer ${TOKEN}0`), 401, 1000);
    // no admin key configured on the worker: the API's admin key is just a wrong token here
    expectEnvelope(await metrics(worker, `Bearer ${ADMIN}`), 401, 1000);
    const res = await metrics(worker, `Bearer ${TOKEN}`);
    expect(res.status).toBe(200);
    expect(res.text).toMatch(/^mgw_process_cpu_seconds_total /m);
    expect((await api(worker.url, 'GET', '/health')).status).toBe(200);
    const other = await api(worker.url, 'GET', '/video-b/v1/generations', { key, unchecked: true });
    expect([other.status, other.body.message]).toEqual([404, expect.stringMatching(/ROLE=worker/)]);
  });
});

describe('GET /metrics with one credential configured, or none', () => {
  let adminOnly: TestApp;
  let none: TestApp;
  beforeAll(async () => {
    adminOnly = await startTestApp({ ROLE: 'api', ADMIN_API_KEY: ADMIN, METRICS_TOKEN: '' });
    none = await startTestApp({ ROLE: 'api', METRICS_TOKEN: '' }, { db: adminOnly.db });
  });
  afterAll(async () => {
    await none?.close();
    await adminOnly?.close();
  });

  it('with only ADMIN_API_KEY: the admin key reads it, anything else is 401', async () => {
    expect((await metrics(adminOnly, `Bearer ${ADMIN}`)).status).toBe(200);
    expectEnvelope(await metrics(adminOnly), 401, 1001);
    expectEnvelope(await metrics(adminOnly, `Bearer ${TOKEN}`), 401, 1000);
  });

  it('with neither METRICS_TOKEN nor ADMIN_API_KEY: 401 whatever is sent, saying what the operators set', async () => {
    expectEnvelope(await metrics(none, undefined), 401, 1001);
    for (const authorization of [`Bearer ${TOKEN}`, `Bearer ${ADMIN}`]) {
      const res = await metrics(none, authorization);
      expectEnvelope(res, 401, 1000, /^No credential opens the metrics on this instance: its operators set METRICS_TOKEN \(or ADMIN_API_KEY\) to serve them$/);
      expect(res.text).not.toContain('mgw_');
    }
  });
});
