// The upstreams of the inflight scenario, in a process of their own (so their CPU is not the gateway's):
// Kling's expand under /kling, Luma's generations under /luma, a Suno-style aggregator under /suno. Each
// create is answered at once and every task stays in progress for ever (Kling `processing`, Luma
// `dreaming`, aggregator `IN_PROGRESS`); every request is counted, and every poll of a task with its time.
//
//   PORT=3901 FAKE_KLING_ACCESS_KEY=… FAKE_KLING_SECRET_KEY=… FAKE_API_KEY=… node bench/fake-upstream.mjs
//
// Control routes (no auth): GET /_control/stats (counters, create times), GET /_control/window?from=&to=
// (epoch ms: polls and intervals between polls in that window, per protocol), POST /_control/reset
// (forget every task and counter).
import { createHmac, randomUUID } from 'node:crypto';
import http from 'node:http';

const port = Number(process.env.PORT ?? 3901);
const KLING_ACCESS = process.env.FAKE_KLING_ACCESS_KEY ?? 'bench-kling-access';
const KLING_SECRET = process.env.FAKE_KLING_SECRET_KEY ?? 'bench-kling-secret';
const API_KEY = process.env.FAKE_API_KEY ?? 'bench-api-key';
const PROTOCOLS = ['kling', 'luma', 'suno'];

/** upstream id → { protocol, createdAt, external, polls: [epoch ms] } */
let tasks = new Map();
let byExternal = new Map();
let counters;
function reset() {
  tasks = new Map();
  byExternal = new Map();
  counters = Object.fromEntries(PROTOCOLS.map((p) => [p, { creates: 0, firstCreateAt: null, lastCreateAt: null, requests: 0, polls: 0, unknown: 0 }]));
  counters.badAuth = 0;
  counters.notFound = 0;
}
reset();

function send(res, status, body) {
  const text = JSON.stringify(body);
  res.writeHead(status, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(text) });
  res.end(text);
}

// Kling's JWT (HS256, iss = access key), checked once per distinct token: within a second the gateway's are the same.
const goodTokens = new Set();
function klingAuthorised(header) {
  const token = /^Bearer (.+)$/.exec(header ?? '')?.[1];
  if (!token) return false;
  if (goodTokens.has(token)) return true;
  const [head, payload, signature] = token.split('.');
  if (!signature) return false;
  const expected = createHmac('sha256', KLING_SECRET).update(`${head}.${payload}`).digest('base64url');
  if (expected !== signature) return false;
  const claims = JSON.parse(Buffer.from(payload, 'base64url').toString('utf8'));
  const now = Date.now() / 1000;
  if (claims.iss !== KLING_ACCESS || !(claims.exp > now) || !(claims.nbf <= now + 1)) return false;
  if (goodTokens.size > 10_000) goodTokens.clear();
  goodTokens.add(token);
  return true;
}

function created(protocol, id, external) {
  const now = Date.now();
  tasks.set(id, { protocol, createdAt: now, external, polls: [] });
  if (external) byExternal.set(external, id);
  const c = counters[protocol];
  c.creates++;
  c.firstCreateAt ??= now;
  c.lastCreateAt = now;
}

function polled(protocol, id) {
  const task = tasks.get(id);
  if (!task) {
    counters[protocol].unknown++;
    return null;
  }
  task.polls.push(Date.now());
  counters[protocol].polls++;
  return task;
}

const klingEnvelope = (data) => ({ code: 0, message: 'SUCCEED', request_id: randomUUID(), data });
const klingTask = (id, task, status) => ({
  task_id: id,
  task_status: status,
  task_status_msg: '',
  task_info: { external_task_id: task.external },
  created_at: task.createdAt,
  updated_at: Date.now(),
  task_result: { images: [] },
});
const lumaGeneration = (id, task, state) => ({ id, state, failure_reason: null, created_at: new Date(task.createdAt).toISOString(), assets: null, model: 'ray-2' });
const sunoTask = (id) => ({
  task_id: id,
  status: 'IN_PROGRESS',
  fail_reason: '',
  data: [0, 1].map((n) => ({ id: `${id}-clip-${n}`, status: 'streaming', audio_url: '', image_url: '', title: '', metadata: { duration: null, error_message: null } })),
});

const KLING_BASE = '/kling/v1/images/editing/expand';

function route(req, res, body) {
  const path = req.url.split('?')[0];
  if (path.startsWith('/_control/')) return control(req, res, path);
  if (path.startsWith('/kling/')) {
    counters.kling.requests++;
    if (!klingAuthorised(req.headers.authorization)) {
      counters.badAuth++;
      return send(res, 401, { code: 1000, message: 'Authentication failed', request_id: randomUUID(), data: null });
    }
    if (req.method === 'POST' && path === KLING_BASE) {
      const params = JSON.parse(body);
      const id = `kling-${randomUUID()}`;
      created('kling', id, params.external_task_id);
      const task = tasks.get(id);
      return send(res, 200, klingEnvelope(klingTask(id, task, 'submitted')));
    }
    if (req.method === 'GET' && path.startsWith(`${KLING_BASE}/`)) {
      const key = decodeURIComponent(path.slice(KLING_BASE.length + 1));
      const id = tasks.has(key) ? key : byExternal.get(key);
      const task = id && polled('kling', id);
      if (!task) return send(res, 404, { code: 1203, message: 'The requested resource does not exist', request_id: randomUUID(), data: null });
      return send(res, 200, klingEnvelope(klingTask(id, task, 'processing')));
    }
  } else if (path.startsWith('/luma/')) {
    counters.luma.requests++;
    if (req.headers.authorization !== `Bearer ${API_KEY}`) {
      counters.badAuth++;
      return send(res, 401, { detail: 'Invalid API key' });
    }
    if (req.method === 'POST' && path === '/luma/generations') {
      JSON.parse(body);
      const id = randomUUID();
      created('luma', id);
      return send(res, 201, lumaGeneration(id, tasks.get(id), 'queued'));
    }
    const get = /^\/luma\/generations\/([^/]+)$/.exec(path);
    if (req.method === 'GET' && get) {
      const task = polled('luma', get[1]);
      if (!task) return send(res, 404, { detail: 'Not found' });
      return send(res, 200, lumaGeneration(get[1], task, 'dreaming'));
    }
  } else if (path.startsWith('/suno/')) {
    counters.suno.requests++;
    if (req.headers.authorization !== `Bearer ${API_KEY}`) {
      counters.badAuth++;
      return send(res, 401, { code: 'unauthorized', message: 'bad key' });
    }
    if (req.method === 'POST' && path === '/suno/submit/music') {
      JSON.parse(body);
      const id = `suno-${randomUUID()}`;
      created('suno', id);
      return send(res, 200, { code: 'success', message: '', data: id });
    }
    if (req.method === 'POST' && path === '/suno/fetch') {
      const ids = JSON.parse(body).ids ?? [];
      const listed = ids.filter((id) => polled('suno', id)).map(sunoTask);
      return send(res, 200, { code: 'success', message: '', data: listed });
    }
    const one = /^\/suno\/fetch\/([^/]+)$/.exec(path);
    if (req.method === 'GET' && one) {
      if (!polled('suno', one[1])) return send(res, 404, { code: 'not_found', message: 'no such task' });
      // one task: `data` is the task itself (as the gateway's step and the tests' fake read it)
      return send(res, 200, { code: 'success', message: '', data: sunoTask(one[1]) });
    }
  }
  counters.notFound++;
  send(res, 404, { code: 'not_found', message: `no route ${req.method} ${path}` });
}

function control(req, res, path) {
  if (path === '/_control/stats') return send(res, 200, { now: Date.now(), tasks: tasks.size, ...counters });
  if (path === '/_control/reset' && req.method === 'POST') {
    reset();
    return send(res, 200, { reset: true });
  }
  if (path === '/_control/window') {
    const url = new URL(req.url, 'http://x');
    const from = Number(url.searchParams.get('from'));
    const to = Number(url.searchParams.get('to'));
    const out = {};
    for (const protocol of PROTOCOLS) {
      let polls = 0;
      let taskCount = 0;
      let unpolled = 0;
      const intervals = [];
      for (const task of tasks.values()) {
        if (task.protocol !== protocol) continue;
        taskCount++;
        let inWindow = 0;
        let previous = null;
        for (const at of task.polls) {
          if (at >= from && at < to) {
            inWindow++;
            if (previous !== null) intervals.push((at - previous) / 1000);
          }
          previous = at;
        }
        polls += inWindow;
        if (inWindow === 0) unpolled++;
      }
      intervals.sort((a, b) => a - b);
      const at = (q) => (intervals.length ? intervals[Math.min(intervals.length - 1, Math.floor(intervals.length * q))] : null);
      out[protocol] = { tasks: taskCount, polls, unpolled, intervalP50: at(0.5), intervalP99: at(0.99), intervalMax: intervals.at(-1) ?? null };
    }
    return send(res, 200, out);
  }
  send(res, 404, { message: 'no such control route' });
}

const server = http.createServer((req, res) => {
  const chunks = [];
  req.on('data', (c) => chunks.push(c));
  req.on('end', () => {
    try {
      route(req, res, Buffer.concat(chunks).toString('utf8'));
    } catch (err) {
      send(res, 400, { code: 'bad_request', message: String(err) });
    }
  });
});
server.keepAliveTimeout = 65_000;
server.headersTimeout = 66_000;
server.listen(port, '127.0.0.1', () => console.log(`fake upstream listening on ${port}`));
process.on('SIGTERM', () => {
  server.close();
  server.closeAllConnections();
  process.exit(0);
});
