// The floor the inflight scenario measures the gateway's pollers against: a bare Node.js process that keeps
// the same tasks in flight, in a small table of its own, and polls the same fake upstream on the same
// schedule with the least work a durable poller must do. Each round is ONE statement that takes the due
// tasks (SKIP LOCKED, as several instances would) and sets their next poll time; then one request per
// task (Kling, Luma) or per 50 tasks (the aggregators' batch fetch) on keep-alive connections, RELAY_CONCURRENCY
// in flight, each answer parsed and its state checked. Nothing is written for a task that is still working.
// No framework, no logging, no metrics library; a Kling JWT is minted once a minute (it is valid 30).
//
//   DATABASE_URL=… PORT=… FAKE_URL=http://127.0.0.1:3901 PROTOCOL=kling PLAN_FILE=plan.json node bench/inflight-floor.mjs
//
// PLAN_FILE: [{ ageS, pollInS, callback }] — the gateway's tasks as they stood when its steady state began:
// the floor's tasks are created upstream, then stored with the same ages and next poll times from now.
// GET / answers 200 once the tasks are in place (503 before); GET /stats answers the counters.
import { createHmac } from 'node:crypto';
import { readFileSync } from 'node:fs';
import http from 'node:http';
import pg from 'pg';

const env = process.env;
const protocol = env.PROTOCOL;
const fakeUrl = new URL(env.FAKE_URL);
const pollS = Number(env.RELAY_POLL_MS ?? 2000) / 1000;
const callbackPollS = Number(env.UPSTREAM_CALLBACK_POLL_S ?? 300);
const concurrency = Number(env.RELAY_CONCURRENCY ?? 32);
const plan = JSON.parse(readFileSync(env.PLAN_FILE, 'utf8'));
const TABLE = 'bench_inflight_floor';
const BATCH = 500;
const IDLE_MS = 250;
const FETCH_BATCH = 50;
const LAG_BUCKETS = [0.05, 0.1, 0.25, 0.5, 1, 2, 5, 10, 30, 60];

const pool = new pg.Pool({ connectionString: env.DATABASE_URL, max: 2 });
const agent = new http.Agent({ keepAlive: true, maxSockets: concurrency });
const stats = { ready: false, rounds: 0, polls: 0, requests: 0, errors: 0, changed: 0, lag: { buckets: LAG_BUCKETS.map(() => 0), count: 0, sum: 0 } };

let jwt = { token: '', until: 0 };
function authorization() {
  if (protocol !== 'kling') return `Bearer ${env.FAKE_API_KEY}`;
  const now = Math.floor(Date.now() / 1000);
  if (now >= jwt.until) {
    const part = (o) => Buffer.from(JSON.stringify(o)).toString('base64url');
    const unsigned = `${part({ alg: 'HS256', typ: 'JWT' })}.${part({ iss: env.FAKE_KLING_ACCESS_KEY, exp: now + 1800, nbf: now - 5 })}`;
    jwt = { token: `Bearer ${unsigned}.${createHmac('sha256', env.FAKE_KLING_SECRET_KEY).update(unsigned).digest('base64url')}`, until: now + 60 };
  }
  return jwt.token;
}

/** One JSON request to the fake on a kept-alive connection. */
function request(method, path, body) {
  return new Promise((resolve, reject) => {
    const text = body === undefined ? undefined : JSON.stringify(body);
    const headers = { authorization: authorization(), accept: 'application/json', ...(text ? { 'content-type': 'application/json', 'content-length': Buffer.byteLength(text) } : {}) };
    const req = http.request({ host: fakeUrl.hostname, port: fakeUrl.port, method, path, headers, agent, timeout: 10_000 }, (res) => {
      const chunks = [];
      res.on('data', (c) => chunks.push(c));
      res.on('end', () => {
        try {
          resolve({ status: res.statusCode, json: JSON.parse(Buffer.concat(chunks).toString('utf8')) });
        } catch (err) {
          reject(err);
        }
      });
      res.on('error', reject);
    });
    req.on('timeout', () => req.destroy(new Error('timeout')));
    req.on('error', reject);
    req.end(text);
  });
}

/** The protocol's create, poll (answers each task's news: true when final) and how many tasks one poll takes. */
const protocols = {
  kling: {
    create: async (i) => (await request('POST', '/kling/v1/images/editing/expand', { image: 'https://example.com/a.png', up_expansion_ratio: 0.1, n: 1, external_task_id: `floor-${i}` })).json.data.task_id,
    poll: async ([id]) => {
      const { status, json } = await request('GET', `/kling/v1/images/editing/expand/${encodeURIComponent(id)}`);
      if (status !== 200 || json.code !== 0) throw new Error(`HTTP ${status}`);
      return [json.data.task_status === 'succeed' || json.data.task_status === 'failed'];
    },
    batch: 1,
  },
  luma: {
    create: async () => (await request('POST', '/luma/generations', { prompt: 'a lighthouse', aspect_ratio: '16:9' })).json.id,
    poll: async ([id]) => {
      const { status, json } = await request('GET', `/luma/generations/${encodeURIComponent(id)}`);
      if (status !== 200) throw new Error(`HTTP ${status}`);
      return [json.state === 'completed' || json.state === 'failed'];
    },
    batch: 1,
  },
  suno: {
    create: async () => (await request('POST', '/suno/submit/music', { gpt_description_prompt: 'a calm song', mv: 'chirp-v4', make_instrumental: false })).json.data,
    poll: async (ids) => {
      const { status, json } = await request('POST', '/suno/fetch', { ids });
      if (status !== 200 || json.code !== 'success') throw new Error(`HTTP ${status}`);
      const byId = new Map(json.data.map((t) => [t.task_id, t]));
      return ids.map((id) => ['SUCCESS', 'FAILURE', 'UNKNOWN'].includes(byId.get(id)?.status ?? 'UNKNOWN'));
    },
    batch: FETCH_BATCH,
  },
}[protocol];

/** `count` calls of `work(i)`, `limit` at a time. */
async function inParallel(count, limit, work) {
  let next = 0;
  await Promise.all(
    Array.from({ length: Math.min(limit, count) }, async () => {
      while (next < count) await work(next++);
    }),
  );
}

async function setUp() {
  await pool.query(`DROP TABLE IF EXISTS ${TABLE}`);
  await pool.query(`CREATE TABLE ${TABLE} (id bigint PRIMARY KEY, upstream_id text NOT NULL, created_at timestamptz NOT NULL, poll_at timestamptz NOT NULL, callback boolean NOT NULL)`);
  await pool.query(`CREATE INDEX ON ${TABLE} (poll_at)`);
  const ids = new Array(plan.length);
  await inParallel(plan.length, concurrency, async (i) => {
    ids[i] = await protocols.create(i);
  });
  const { rows } = await pool.query(
    `WITH stored AS (
       INSERT INTO ${TABLE} (id, upstream_id, created_at, poll_at, callback)
       SELECT i, u, now() - make_interval(secs => a), now() + make_interval(secs => p), c
       FROM unnest($1::bigint[], $2::text[], $3::float8[], $4::float8[], $5::bool[]) AS x(i, u, a, p, c) RETURNING 1)
     SELECT (extract(epoch FROM now()) * 1000)::float8 AS at`,
    [plan.map((_, i) => i), ids, plan.map((t) => t.ageS), plan.map((t) => t.pollInS), plan.map((t) => t.callback)],
  );
  // the moment the ages and next poll times count from
  stats.startedAt = rows[0].at;
  await pool.query(`VACUUM ANALYZE ${TABLE}`);
}

/** Takes the due tasks and sets their next poll time, in one statement (the schedule is the gateway's). */
const TAKE = {
  name: 'floor-take',
  text: `WITH due AS (SELECT id, poll_at FROM ${TABLE} WHERE poll_at <= now() ORDER BY poll_at LIMIT $1 FOR UPDATE SKIP LOCKED)
         UPDATE ${TABLE} t SET poll_at = now() + make_interval(secs => (CASE WHEN t.callback THEN $3::float8
           ELSE LEAST(GREATEST($2::float8, extract(epoch FROM now() - t.created_at) / 10), $2::float8 * 15) END) * (0.9 + random() * 0.2))
         FROM due WHERE t.id = due.id
         RETURNING t.upstream_id, extract(epoch FROM now() - due.poll_at)::float8 AS lag`,
};

let stopping = false;
async function loop() {
  while (!stopping) {
    const { rows } = await pool.query({ ...TAKE, values: [BATCH, pollS, callbackPollS] });
    stats.rounds++;
    if (rows.length === 0) {
      await new Promise((r) => setTimeout(r, IDLE_MS));
      continue;
    }
    for (const { lag } of rows) {
      const i = LAG_BUCKETS.findIndex((le) => lag <= le);
      if (i >= 0) stats.lag.buckets[i]++;
      stats.lag.count++;
      stats.lag.sum += Math.max(0, lag);
    }
    const chunks = [];
    for (let i = 0; i < rows.length; i += protocols.batch) chunks.push(rows.slice(i, i + protocols.batch).map((r) => r.upstream_id));
    await inParallel(chunks.length, concurrency, async (i) => {
      stats.requests++;
      try {
        const news = await protocols.poll(chunks[i]);
        stats.polls += chunks[i].length;
        stats.changed += news.filter(Boolean).length;
      } catch {
        stats.errors++;
      }
    });
  }
}

const control = http.createServer((req, res) => {
  const body = req.url === '/stats' ? JSON.stringify(stats) : JSON.stringify({ ready: stats.ready });
  res.writeHead(req.url === '/stats' || stats.ready ? 200 : 503, { 'content-type': 'application/json' });
  res.end(body);
});
control.listen(Number(env.PORT), '127.0.0.1');

await setUp();
stats.ready = true;
const running = loop();
process.on('SIGTERM', async () => {
  stopping = true;
  await running.catch(() => undefined);
  await pool.query(`DROP TABLE IF EXISTS ${TABLE}`).catch(() => undefined);
  await pool.end();
  control.close();
  agent.destroy();
  process.exit(0);
});
