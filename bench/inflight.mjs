// inflight: N relayed tasks held in progress by a fake upstream (Kling expand, Luma video, aggregator music),
// in steady state: what watching them costs the gateway (ROLE=all, one instance) and PostgreSQL, in CPU per
// 1,000 tasks in flight and per upstream request, whether the polls keep to the schedule, and how late
// they run; polling only, then with UPSTREAM_CALLBACK_BASE_URL set (the polls are then the safety net; the
// fake never calls back). Beside each, a floor (bench/inflight-floor.mjs) keeps the same tasks, with the
// same ages, in a table of its own and polls the same fake on the same schedule with the least work.
//
//   npm run bench -- inflight [--tasks 1000,10000] [--protocols kling,luma,suno] [--window 60] [--settle 40]
//                             [--callbacks both|off|on] [--callback-window 300] [--floor yes|no]
//                             [--idle yes|no] [--accept-concurrency 32] [--profile DIR]
//
// --idle: first, the gateway (and the floor) with no task in flight for one window: the cost that does not
// grow with the tasks (the pollers' looks, the sweepers, pg-boss's upkeep).
// --profile DIR: the gateway's main thread is profiled from the first accept to the last task watched, and
// over each window (bench/cpu-window.mjs), the profiles written to DIR and summarised
// (bench/profile-summary.mjs). Profiling costs CPU: the rows' CPU figures are then not comparable with a
// run without it. BENCH_GATEWAY_ENV (JSON) adds to or overrides the gateway's environment, as in accept.
import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, readdirSync, readFileSync } from 'node:fs';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import pg from 'pg';
import sharp from 'sharp';
import { summarise } from './profile-summary.mjs';
import { ADMIN_KEY, arg, benchKey, cleanUpAfter, freePort, httpReady, onExit, ROOT, startChild, startGateway, table } from './support.mjs';

const OWNER = 'bench-inflight';
const KLING = { access: 'bench-kling-access-key', secret: 'bench-kling-secret-key-0123456789abcdef' };
const API_KEY = 'bench-relay-api-key-0123456789';
const IMAGE = (await sharp({ create: { width: 320, height: 320, channels: 3, background: '#3a6ea5' } }).png().toBuffer()).toString('base64');

/** Each protocol: the gateway's operation (its metrics' label) and route, and a submission's body. */
const PROTOCOLS = {
  kling: { operation: 'expand', route: '/video-a/v1/images/editing/expand', body: { image: IMAGE, up_expansion_ratio: 0.1, bottom_expansion_ratio: 0.1, left_expansion_ratio: 0.1, right_expansion_ratio: 0.1, n: 1 } },
  luma: { operation: 'video', route: '/video-b/v1/generations', body: { prompt: 'A lighthouse at dusk, waves breaking', aspect_ratio: '16:9' } },
  suno: { operation: 'music', route: '/music-a/submit/music', body: { gpt_description_prompt: 'a calm lo-fi song about the sea' } },
};

const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

// ---- CPU counters -------------------------------------------------------------------------------------

const TICKS_PER_S = (() => {
  try {
    return Number(execFileSync('getconf', ['CLK_TCK']).toString().trim()) || 100;
  } catch {
    return 100;
  }
})();

/** A process's /proc/<pid>/stat: its parent, and its CPU (own, and of its children it reaped) in seconds. */
function procStat(pid) {
  try {
    const text = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const f = text.slice(text.lastIndexOf(')') + 2).split(' ');
    return { ppid: Number(f[1]), own: (Number(f[11]) + Number(f[12])) / TICKS_PER_S, reaped: (Number(f[13]) + Number(f[14])) / TICKS_PER_S };
  } catch {
    return null;
  }
}

/** CPU seconds of one process (with any children it reaped). */
const processCpu = (pid) => {
  const s = procStat(pid);
  return s ? s.own + s.reaped : 0;
};

/** CPU seconds of a process's main thread (the event loop: JavaScript and its system calls). */
const mainThreadCpu = (pid) => procStat(`${pid}/task/${pid}`)?.own ?? 0;

/** This database's transactions and rows written so far (pg_stat_database), and the rows written by table. */
async function databaseWork(db) {
  const { rows } = await db.query(
    `SELECT (xact_commit + xact_rollback)::float8 AS xacts, (tup_inserted + tup_updated + tup_deleted)::float8 AS written FROM pg_stat_database WHERE datname = current_database()`,
  );
  const { rows: tables } = await db.query(
    `SELECT schemaname || '.' || relname AS name, (n_tup_ins + n_tup_upd + n_tup_del)::float8 AS written, COALESCE(seq_tup_read, 0)::float8 AS "seqRead" FROM pg_stat_user_tables`,
  );
  return { ...rows[0], tables: new Map(tables.map((t) => [t.name, t.written])), seqRead: new Map(tables.map((t) => [t.name, t.seqRead])) };
}

/**
 * PostgreSQL's CPU, as far as this machine can see it. The embedded server: its postmaster and every
 * process under it (backends, checkpointer, WAL writer, autovacuum…), plus what the postmaster reaped
 * (backends that ended). A DATABASE_URL server (shared with other databases): the backends of this
 * run's database and the server's background processes (pg_stat_activity), when they run on this
 * machine; a backend that ends within the window is missed.
 */
async function postgresCpu(dbUrl) {
  const client = new pg.Client({ connectionString: dbUrl });
  await client.connect();
  onExit(() => client.end());
  const { rows } = await client.query('SELECT pg_backend_pid() AS pid');
  const own = procStat(rows[0].pid);
  if (!own || !readFileSync(`/proc/${own.ppid}/comm`, 'utf8').startsWith('postgres')) {
    return { what: 'not measured: the server does not run on this machine', read: async () => null, diff: () => null };
  }
  if (!process.env.DATABASE_URL) {
    const postmaster = own.ppid;
    return {
      what: "the embedded server's whole process tree (postmaster, backends, background processes, and the backends it reaped)",
      read: async () => {
        let total = processCpu(postmaster);
        for (const entry of readdirSync('/proc')) {
          if (!/^\d+$/.test(entry)) continue;
          const s = procStat(entry);
          if (s?.ppid === postmaster) total += s.own;
        }
        return total;
      },
      diff: (a, b) => b - a,
    };
  }
  return {
    what: "this database's backends and the server's background processes (pg_stat_activity; backends ending within the window are missed, the background processes also serve other databases)",
    read: async () => {
      const { rows: pids } = await client.query(
        `SELECT pid FROM pg_stat_activity WHERE datname = current_database()
            OR backend_type IN ('checkpointer', 'background writer', 'walwriter', 'autovacuum launcher', 'autovacuum worker', 'logical replication launcher')`,
      );
      return new Map(pids.map((r) => [r.pid, procStat(r.pid)?.own ?? 0]));
    },
    diff: (a, b) => [...b].reduce((sum, [pid, cpu]) => sum + cpu - (a.get(pid) ?? 0), 0),
  };
}

// ---- the gateway's metrics ------------------------------------------------------------------------------

/** Prometheus text → [{ name, labels, value }]. */
function parseMetrics(text) {
  const out = [];
  for (const line of text.split('\n')) {
    const m = /^([a-zA-Z_:][\w:]*)(?:\{(.*)\})?\s+(\S+)$/.exec(line);
    if (!m) continue;
    const labels = Object.fromEntries([...(m[2] ?? '').matchAll(/(\w+)="((?:[^"\\]|\\.)*)"/g)].map((l) => [l[1], l[2]]));
    out.push({ name: m[1], labels, value: Number(m[3]) });
  }
  return out;
}

// /metrics takes the metrics token or the admin key (the gateway is started with ADMIN_API_KEY)
const scrape = async (gateway) => parseMetrics(await (await fetch(`${gateway.url}/metrics`, { headers: { authorization: `Bearer ${ADMIN_KEY}` } })).text());

/** The sum of a metric's series matching `match` (labels), after minus before. */
function delta(before, after, name, match = {}) {
  const sum = (samples) => samples.filter((s) => s.name === name && Object.entries(match).every(([k, v]) => s.labels[k] === v)).reduce((a, s) => a + s.value, 0);
  return sum(after) - sum(before);
}

/** The lag histogram over the window: the bucket its 99th percentile falls in, the mean and the count. */
function lagOf(before, after, operation) {
  const les = [...new Set(after.filter((s) => s.name === 'mgw_upstream_poll_lag_seconds_bucket').map((s) => s.labels.le))];
  const buckets = les.map((le) => ({ le: le === '+Inf' ? Infinity : Number(le), n: delta(before, after, 'mgw_upstream_poll_lag_seconds_bucket', { operation, le }) })).sort((a, b) => a.le - b.le);
  const count = delta(before, after, 'mgw_upstream_poll_lag_seconds_count', { operation });
  const sum = delta(before, after, 'mgw_upstream_poll_lag_seconds_sum', { operation });
  return lagSummary(buckets, count, sum);
}

function lagSummary(buckets, count, sum) {
  if (!count) return { p99: '—', mean: '—', count: 0 };
  const p99 = buckets.find((b) => b.n >= 0.99 * count)?.le ?? Infinity;
  return { p99: p99 === Infinity ? `> ${buckets.at(-2)?.le} s` : `≤ ${p99} s`, mean: `${(sum / count).toFixed(2)} s`, count };
}

// ---- the schedule ---------------------------------------------------------------------------------------

/**
 * Polls per task-minute the schedule asks for over [t0, t1] (epoch ms): each task's polls played forward
 * from its next poll time as it stood at the start of the steady state (`firstPollMs`), each delay as the
 * poller sets it when it takes the task: UPSTREAM_CALLBACK_POLL_S for a task with a callback, else
 * clamp(age / 10, pollS, 15 × pollS) with the task's age then, times a jitter of 0.9–1.1. (Integrating
 * 1 / delay(age) over the window instead gives up to 5 % fewer: each delay is set from the age at its start.)
 */
function scheduled(tasks, t0, t1, pollS, callbackPollS) {
  let polls = 0;
  for (const { createdMs, firstPollMs, callback } of tasks) {
    for (let t = firstPollMs / 1000; t < t1 / 1000; ) {
      if (t >= t0 / 1000) polls++;
      const delay = callback ? callbackPollS : Math.min(Math.max((t - createdMs / 1000) / 10, pollS), 15 * pollS);
      t += delay * (0.9 + Math.random() * 0.2);
    }
  }
  return polls / (tasks.length * ((t1 - t0) / 60_000));
}

// ---- the fake upstream ----------------------------------------------------------------------------------

async function startFake() {
  const port = await freePort();
  const url = `http://127.0.0.1:${port}`;
  const child = await startChild('the fake upstream', 'bench/fake-upstream.mjs', { PORT: String(port), FAKE_KLING_ACCESS_KEY: KLING.access, FAKE_KLING_SECRET_KEY: KLING.secret, FAKE_API_KEY: API_KEY }, httpReady(`${url}/_control/stats`));
  const get = async (route) => (await fetch(url + route)).json();
  return {
    ...child,
    url,
    stats: () => get('/_control/stats'),
    window: (from, to) => get(`/_control/window?from=${from}&to=${to}`),
    reset: async () => (await fetch(`${url}/_control/reset`, { method: 'POST' })).json(),
  };
}

// ---- one side's steady state ------------------------------------------------------------------------------

/**
 * Measures `windowS` seconds of a side's steady state: the CPU of its process and of PostgreSQL, what the
 * fake saw, and (from `extra`) the side's own counters read at both ends.
 */
async function measure({ pid, db, fake, pgCpu, windowS, protocol, extra, around }) {
  const statsBefore = await fake.stats();
  const extraBefore = await extra();
  await around?.('start');
  const work0 = await databaseWork(db);
  const [cpu0, main0, pg0, fakeCpu0, t0] = [processCpu(pid), mainThreadCpu(pid), await pgCpu.read(), processCpu(fake.pid), Date.now()];
  await sleep(windowS * 1000);
  const [cpu1, main1, pg1, fakeCpu1, t1] = [processCpu(pid), mainThreadCpu(pid), await pgCpu.read(), processCpu(fake.pid), Date.now()];
  const work1 = await databaseWork(db);
  await around?.('end');
  const extraAfter = await extra();
  const statsAfter = await fake.stats();
  const seen = (await fake.window(t0, t1))[protocol];
  const seconds = (t1 - t0) / 1000;
  return {
    t0,
    t1,
    seconds,
    cpu: cpu1 - cpu0,
    mainThread: main1 - main0,
    pg: pg0 === null ? null : pgCpu.diff(pg0, pg1),
    xacts: work1.xacts - work0.xacts,
    written: work1.written - work0.written,
    writtenByTable: [...work1.tables].map(([name, n]) => [name, n - (work0.tables.get(name) ?? 0)]).filter(([, n]) => n > 0).sort((a, b) => b[1] - a[1]),
    seqReadByTable: [...work1.seqRead].map(([name, n]) => [name, n - (work0.seqRead.get(name) ?? 0)]).filter(([, n]) => n > 0).sort((a, b) => b[1] - a[1]),
    fakeCpu: fakeCpu1 - fakeCpu0,
    requests: statsAfter[protocol].requests - statsBefore[protocol].requests,
    polls: seen.polls,
    seen,
    extra: [extraBefore, extraAfter],
  };
}

/** Where a side's CPU went in a window, in words. */
function cpuText(m, side) {
  const pct = (cpuS) => (cpuS === null ? '—' : ((100 * cpuS) / m.seconds).toFixed(1));
  const perRequest = (n) => (m.requests ? ` (${(n / m.requests).toFixed(2)} per request)` : '');
  const byTable = (list) => list.filter(([, n]) => n / m.seconds >= 0.5).slice(0, 4).map(([name, n]) => `${name.replace(/^public\./, '')} ${(n / m.seconds).toFixed(0)}/s`);
  const tables = byTable(m.writtenByTable);
  const scanned = byTable(m.seqReadByTable);
  return (
    `${side} CPU ${pct(m.cpu)} % of a core (main thread ${pct(m.mainThread)} %, other threads ${pct(m.cpu - m.mainThread)} %), ` +
    `PostgreSQL ${pct(m.pg)} % (${(m.xacts / m.seconds).toFixed(1)} transactions/s${perRequest(m.xacts)}, ${(m.written / m.seconds).toFixed(0)} rows written/s${perRequest(m.written)}${tables.length ? `: ${tables.join(', ')}` : ''}; rows read by sequential scans ${scanned.join(', ') || 'none'}), fake ${pct(m.fakeCpu)} %`
  );
}

/** The figures of a row, from a measurement over `tasks` tasks in flight. */
function figures(m, tasks, plan, pollS, callbackPollS) {
  const percent = (cpuS) => (cpuS === null ? '—' : ((100 * cpuS) / m.seconds).toFixed(1));
  const perK = (cpuS) => (cpuS === null || !tasks ? '—' : ((100 * cpuS) / m.seconds / (tasks / 1000)).toFixed(2));
  const perRequest = (cpuS) => (cpuS === null || !m.requests ? '—' : ((1000 * cpuS) / m.requests).toFixed(3));
  return {
    tasks,
    'gw CPU %': percent(m.cpu),
    'PG CPU %': percent(m.pg),
    'gw CPU %/1k': perK(m.cpu),
    'PG CPU %/1k': perK(m.pg),
    'polls/task-min seen': tasks ? ((m.polls / tasks) * (60 / m.seconds)).toFixed(2) : '—',
    sched: tasks ? scheduled(plan, m.t0, m.t1, pollS, callbackPollS).toFixed(2) : '—',
    'gw ms/req': perRequest(m.cpu),
    'PG ms/req': perRequest(m.pg),
  };
}

// ---- the gateway's row ---------------------------------------------------------------------------------

/** Submits `n` tasks, `concurrency` at a time, as fast as the gateway takes them. */
async function accept(gateway, key, spec, n, concurrency) {
  const body = JSON.stringify(spec.body);
  const headers = { authorization: `Bearer ${key}`, 'content-type': 'application/json' };
  let next = 0;
  let accepted = 0;
  const refused = new Map();
  const startedAt = Date.now();
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (next < n) {
        next++;
        const res = await fetch(gateway.url + spec.route, { method: 'POST', headers, body });
        const text = await res.text();
        if (res.ok) accepted++;
        else refused.set(res.status, text.slice(0, 200));
      }
    }),
  );
  if (refused.size) console.warn(`  ${n - accepted} submissions refused: ${[...refused].map(([s, t]) => `${s} ${t}`).join('; ')}`);
  return { startedAt, seconds: (Date.now() - startedAt) / 1000, accepted };
}

/** Waits until `check()` answers at least `target`, failing when it makes no progress for `stallS`. */
async function waitFor(what, target, check, stallS = 120) {
  let last = -1;
  let since = Date.now();
  for (;;) {
    const value = await check();
    if (value >= target) return value;
    if (value !== last) [last, since] = [value, Date.now()];
    if (Date.now() - since > stallS * 1000) throw new Error(`${what}: stuck at ${value} of ${target} for ${stallS} s`);
    await sleep(250);
  }
}

function gatewayEnv(fakeUrl, callbacks) {
  return {
    ROLE: 'all',
    EXPAND_PROVIDER: 'relay',
    RELAY_EXPAND_URL: `${fakeUrl}/kling`,
    RELAY_KLING_ACCESS_KEY: KLING.access,
    RELAY_KLING_SECRET_KEY: KLING.secret,
    VIDEO_PROVIDER: 'relay',
    RELAY_VIDEO_URL: `${fakeUrl}/luma`,
    MUSIC_PROVIDER: 'relay',
    RELAY_MUSIC_URL: `${fakeUrl}/suno`,
    RELAY_API_KEY: API_KEY,
    OUTBOUND_ALLOW_HOSTS: '127.0.0.1',
    // no task reaches its deadline during the run
    TASK_TIMEOUT_S: '86400',
    // the fake never calls back: this only makes each create carry a callback URL, and its polls the safety net
    ...(callbacks ? { UPSTREAM_CALLBACK_BASE_URL: 'https://gateway.bench.invalid' } : {}),
    ...(process.env.BENCH_GATEWAY_ENV ? JSON.parse(process.env.BENCH_GATEWAY_ENV) : {}),
  };
}

async function gatewayRow({ dbUrl, db, fake, pgCpu, protocol, n, callbacks, o }) {
  const spec = PROTOCOLS[protocol];
  await fake.reset();
  const env = gatewayEnv(fake.url, callbacks);
  const pollS = Number(env.RELAY_POLL_MS ?? 2000) / 1000;
  const callbackPollS = Number(env.UPSTREAM_CALLBACK_POLL_S ?? 300);
  const profiling = o.profile ? { dir: o.profile, before: new Set(existsSync(o.profile) ? readdirSync(o.profile) : []) } : null;
  const gateway = await startGateway(dbUrl, { ...env, ...(profiling ? { BENCH_CPU_PROFILE_DIR: profiling.dir } : {}) }, profiling ? ['--import', path.join(ROOT, 'bench/cpu-window.mjs')] : []);
  try {
    const key = await benchKey(gateway, OWNER);
    if (profiling) gateway.child.kill('SIGUSR2'); // a profile of the accepts and creates, up to the last task watched
    const [work0, cpu0, pg0] = [await databaseWork(db), processCpu(gateway.pid), await pgCpu.read()];
    const acc = await accept(gateway, key, spec, n, o.acceptConcurrency);
    await waitFor('creates reaching the fake', acc.accepted, async () => (await fake.stats())[protocol].creates);
    const createdS = ((await fake.stats())[protocol].lastCreateAt - acc.startedAt) / 1000;
    await waitFor('tasks watched', acc.accepted, async () => (await db.query('SELECT count(*)::int AS n FROM task_watches')).rows[0].n);
    const [work1, cpu1, pg1, atWatched] = [await databaseWork(db), processCpu(gateway.pid), await pgCpu.read(), await fake.stats()];
    const perTask = (x) => (x / acc.accepted).toFixed(2);
    const creating =
      `accepting and creating took the gateway ${perTask(1000 * (cpu1 - cpu0))} ms of CPU per task, PostgreSQL ${pg0 === null ? '—' : perTask(1000 * pgCpu.diff(pg0, pg1))} ms ` +
      `(${perTask(work1.xacts - work0.xacts)} transactions, ${perTask(work1.written - work0.written)} rows written per task), while the tasks created so far were polled ${atWatched[protocol].polls} times`;
    if (profiling) {
      gateway.child.kill('SIGUSR2');
      await reportProfile(profiling, `${protocol}-${n}-${callbacks ? 'on' : 'off'}-creates`);
    }
    const { rows: plan } = await db.query(
      `SELECT extract(epoch FROM now() - COALESCE(t.started_at, t.created_at))::float8 AS "ageS", extract(epoch FROM w.poll_at - now())::float8 AS "pollInS",
              w.callback_pending AS callback, (extract(epoch FROM COALESCE(t.started_at, t.created_at)) * 1000)::float8 AS "createdMs",
              (extract(epoch FROM w.poll_at) * 1000)::float8 AS "firstPollMs"
       FROM task_watches w JOIN tasks t ON t.id = w.task_id WHERE t.owner = $1`,
      [OWNER],
    );
    await sleep(o.settleS * 1000);
    const windowS = callbacks ? o.callbackWindowS : o.windowS;
    const m = await measure({
      pid: gateway.pid,
      db,
      fake,
      pgCpu,
      windowS,
      protocol,
      extra: () => scrape(gateway),
      around: profiling ? async () => gateway.child.kill('SIGUSR2') : undefined,
    });
    const [before, after] = m.extra;
    const lag = lagOf(before, after, spec.operation);
    const outcomes = [...new Set(after.filter((s) => s.name === 'mgw_upstream_polls_total' && s.labels.operation === spec.operation).map((s) => s.labels.outcome))]
      .map((outcome) => [outcome, delta(before, after, 'mgw_upstream_polls_total', { operation: spec.operation, outcome })])
      .filter(([, v]) => v > 0);
    const row = {
      protocol,
      callbacks: callbacks ? 'on' : 'off',
      side: 'gateway',
      'accept s': acc.seconds.toFixed(1),
      'create s': createdS.toFixed(1),
      'ratio (≤ 3)': (createdS / acc.seconds).toFixed(2),
      ...figures(m, acc.accepted, plan, pollS, callbackPollS),
      'lag p99': lag.p99,
    };
    const details = `gateway, ${protocol}, ${acc.accepted} tasks, callbacks ${row.callbacks}: ${creating}; window ${m.seconds.toFixed(0)} s, ${m.requests} requests (${(m.requests / m.seconds).toFixed(0)}/s), polls by outcome ${outcomes.map(([k, v]) => `${k} ${v}`).join(', ') || 'none'}; lag mean ${lag.mean} over ${lag.count}; ${cpuText(m, 'gateway')}; the fake saw intervals p50 ${m.seen.intervalP50?.toFixed(1) ?? '—'} s, p99 ${m.seen.intervalP99?.toFixed(1) ?? '—'} s, max ${m.seen.intervalMax?.toFixed(1) ?? '—'} s, ${m.seen.unpolled} task(s) not polled in the window`;
    console.log(`  ${details}`);
    if (profiling) await reportProfile(profiling, `${protocol}-${n}-${row.callbacks}-window`);
    return { row, plan, details };
  } finally {
    await gateway.stop();
    await cleanUpAfter(dbUrl, OWNER);
  }
}

async function reportProfile(profiling, label) {
  const deadline = Date.now() + 30_000;
  let file;
  while (!file && Date.now() < deadline) {
    file = readdirSync(profiling.dir).find((f) => f.startsWith('window-') && f.endsWith('.cpuprofile') && !profiling.before.has(f));
    if (!file) await sleep(200);
  }
  if (!file) return console.warn('  no profile was written');
  const target = path.join(profiling.dir, `inflight-${label}.cpuprofile`);
  execFileSync('mv', [path.join(profiling.dir, file), target]);
  console.log(`\n  profile (${target}):\n${summarise(target, 25).replace(/^/gm, '    ')}\n`);
}

/** The gateway with nothing in flight, for the same window: what it costs whatever the tasks. */
async function idleRow({ dbUrl, db, fake, pgCpu, o }) {
  await fake.reset();
  const gateway = await startGateway(dbUrl, gatewayEnv(fake.url, false));
  try {
    await sleep(o.settleS * 1000);
    const m = await measure({ pid: gateway.pid, db, fake, pgCpu, windowS: o.windowS, protocol: 'kling', extra: async () => null });
    console.log(`  gateway, no task in flight: window ${m.seconds.toFixed(0)} s; ${cpuText(m, 'gateway')}`);
    return { protocol: '—', callbacks: '—', side: 'gateway', 'accept s': '—', 'create s': '—', 'ratio (≤ 3)': '—', ...figures(m, 0), 'lag p99': '—' };
  } finally {
    await gateway.stop();
  }
}

// ---- the floor's row ---------------------------------------------------------------------------------

async function floorRow({ dbUrl, db, fake, pgCpu, protocol, plan, callbacks, o }) {
  await fake.reset();
  const dir = await mkdtemp(path.join(tmpdir(), 'mgw-bench-inflight-'));
  onExit(() => rm(dir, { recursive: true, force: true }));
  const planFile = path.join(dir, 'plan.json');
  await writeFile(planFile, JSON.stringify(plan.map(({ ageS, pollInS, callback }) => ({ ageS, pollInS, callback }))));
  const env = gatewayEnv(fake.url, callbacks);
  const pollS = Number(env.RELAY_POLL_MS ?? 2000) / 1000;
  const callbackPollS = Number(env.UPSTREAM_CALLBACK_POLL_S ?? 300);
  const port = await freePort();
  const control = `http://127.0.0.1:${port}`;
  const floor = await startChild(
    'the inflight floor',
    'bench/inflight-floor.mjs',
    {
      DATABASE_URL: dbUrl,
      PORT: String(port),
      FAKE_URL: fake.url,
      PROTOCOL: protocol,
      PLAN_FILE: planFile,
      FAKE_KLING_ACCESS_KEY: KLING.access,
      FAKE_KLING_SECRET_KEY: KLING.secret,
      FAKE_API_KEY: API_KEY,
      RELAY_POLL_MS: String(pollS * 1000),
      UPSTREAM_CALLBACK_POLL_S: String(callbackPollS),
      RELAY_CONCURRENCY: env.RELAY_CONCURRENCY ?? '32',
    },
    httpReady(`${control}/`),
  );
  try {
    // its tasks were stored with the gateway's ages as of its steady state's start, counted from `startedAt`
    const { startedAt: start } = await (await fetch(`${control}/stats`)).json();
    const shifted = plan.map((t) => ({ createdMs: start - t.ageS * 1000, firstPollMs: start + t.pollInS * 1000, callback: t.callback }));
    await sleep(o.settleS * 1000);
    const m = await measure({ pid: floor.pid, db, fake, pgCpu, windowS: callbacks ? o.callbackWindowS : o.windowS, protocol, extra: async () => (await fetch(`${control}/stats`)).json() });
    const [before, after] = m.extra;
    const buckets = [0.05, 0.1, 0.25, 0.5, 1, 2, 5, 10, 30, 60, Infinity].map((le, i) => ({
      le,
      n: le === Infinity ? after.lag.count - before.lag.count : after.lag.buckets.slice(0, i + 1).reduce((a, b) => a + b, 0) - before.lag.buckets.slice(0, i + 1).reduce((a, b) => a + b, 0),
    }));
    const lag = lagSummary(buckets, after.lag.count - before.lag.count, after.lag.sum - before.lag.sum);
    const row = { protocol, callbacks: callbacks ? 'on' : 'off', side: 'floor', 'accept s': '—', 'create s': '—', 'ratio (≤ 3)': '—', ...figures(m, plan.length, shifted, pollS, callbackPollS), 'lag p99': lag.p99 };
    const details = `floor, ${protocol}, ${plan.length} tasks, callbacks ${row.callbacks}: window ${m.seconds.toFixed(0)} s, ${m.requests} requests (${(m.requests / m.seconds).toFixed(0)}/s), ${after.errors - before.errors} failed, ${after.rounds - before.rounds} rounds; lag mean ${lag.mean} over ${lag.count}; ${cpuText(m, 'floor')}; the fake saw intervals p50 ${m.seen.intervalP50?.toFixed(1) ?? '—'} s, p99 ${m.seen.intervalP99?.toFixed(1) ?? '—'} s, ${m.seen.unpolled} task(s) not polled in the window`;
    console.log(`  ${details}`);
    return { row, details };
  } finally {
    await floor.stop();
  }
}

// ---- the scenario -------------------------------------------------------------------------------------

export async function run(dbUrl) {
  const o = {
    tasks: arg('tasks', '1000,10000').split(',').map(Number),
    protocols: arg('protocols', 'kling').split(','),
    windowS: Number(arg('window', 60)),
    settleS: Number(arg('settle', 40)),
    callbacks: { both: [false, true], off: [false], on: [true] }[arg('callbacks', 'both')],
    callbackWindowS: Number(arg('callback-window', 300)),
    floor: arg('floor', 'yes') !== 'no',
    idle: arg('idle', 'yes') !== 'no',
    acceptConcurrency: Number(arg('accept-concurrency', 32)),
    profile: arg('profile', undefined) && path.resolve(arg('profile')),
  };
  if (o.profile) mkdirSync(o.profile, { recursive: true });
  for (const p of o.protocols) if (!PROTOCOLS[p]) throw new Error(`--protocols: ${p} is not one of ${Object.keys(PROTOCOLS).join(', ')}`);
  if (!o.callbacks) throw new Error('--callbacks: both, off or on');
  const fake = await startFake();
  const pgCpu = await postgresCpu(dbUrl);
  const db = new pg.Client({ connectionString: dbUrl });
  await db.connect();
  onExit(() => db.end());
  console.log(
    `steady state of N tasks in flight, each upstream a fake in its own process that holds every task in progress; ` +
      `${o.settleS} s after the last create, a window of ${o.windowS} s (${o.callbackWindowS} s with callbacks: one safety-net period); ` +
      `PostgreSQL CPU: ${pgCpu.what}; CPU %/1k is % of one core per 1,000 tasks in flight, ms/req per upstream request in the window\n`,
  );
  const rows = [];
  const details = [];
  if (o.idle) {
    rows.push(await idleRow({ dbUrl, db, fake, pgCpu, o }));
    if (o.floor) rows.push({ ...(await floorRow({ dbUrl, db, fake, pgCpu, protocol: 'kling', plan: [], callbacks: false, o })).row, protocol: '—', callbacks: '—' });
  }
  for (const protocol of o.protocols) {
    for (const n of o.tasks) {
      for (const callbacks of o.callbacks) {
        const g = await gatewayRow({ dbUrl, db, fake, pgCpu, protocol, n, callbacks, o });
        rows.push(g.row);
        details.push(g.details);
        if (o.floor) {
          const f = await floorRow({ dbUrl, db, fake, pgCpu, protocol, plan: g.plan, callbacks, o });
          rows.push(f.row);
          details.push(f.details);
        }
      }
    }
  }
  console.log(`\n${table(rows, ['protocol', 'callbacks', 'side', 'tasks', 'accept s', 'create s', 'ratio (≤ 3)', 'gw CPU %', 'PG CPU %', 'gw CPU %/1k', 'PG CPU %/1k', 'polls/task-min seen', 'sched', 'lag p99', 'gw ms/req', 'PG ms/req'])}`);
  console.log(`\n(on a floor row, "gw" is the floor's own process)\n\n${details.map((d) => `- ${d}`).join('\n')}`);
  await fake.stop();
}
