// scale: latency of submit, query by task_id, query by external_task_id and list page 1, for one owner with
// 1,000 and then 1,000,000 stored expand tasks (seeded in SQL), against the gateway (ROLE=api).
import pg from 'pg';
import sharp from 'sharp';
import { benchKey, cleanUpAfter, startGateway, table } from './support.mjs';

const OWNER = 'bench-scale';
const EXPAND = '/video-a/v1/images/editing/expand';

/** Finished tasks of OWNER numbered from..to-1, as the workers leave them (external_task_id ext-<n>). */
async function seed(db, from, to) {
  for (let start = from; start < to; start += 200_000) {
    const end = Math.min(to, start + 200_000);
    await db.query(
      `INSERT INTO expand_tasks (id, owner, external_task_id, status, up_ratio, bottom_ratio, left_ratio, right_ratio, n, slots, credits,
                                 created_at, updated_at, deadline_at, started_at, finished_at, attempts, image_url)
       SELECT gen_random_uuid(), $1, 'ext-' || i, CASE WHEN i % 10 = 0 THEN 'failed' ELSE 'succeed' END::expand_task_status, 0.1, 0.1, 0.1, 0.1, 1, 1, 1,
              now() - make_interval(secs => ($3 - i)), now() - make_interval(secs => ($3 - i)), now(), now() - make_interval(secs => ($3 - i)), now() - make_interval(secs => ($3 - i)), 1,
              'https://example.com/' || i || '.png'
       FROM generate_series($2::int, $4::int - 1) AS i`,
      [OWNER, start, to, end],
    );
  }
  await db.query('VACUUM ANALYZE expand_tasks');
}

/** `count` sequential requests made by `next(i)`; p50 and p99 in ms. */
async function latency(count, next) {
  const times = [];
  for (let i = 0; i < count; i++) {
    const t0 = performance.now();
    const res = await next(i);
    await res.arrayBuffer();
    if (!res.ok) throw new Error(`HTTP ${res.status}`);
    times.push(performance.now() - t0);
  }
  times.sort((a, b) => a - b);
  return { p50: times[Math.floor(times.length * 0.5)], p99: times[Math.floor(times.length * 0.99)] };
}

export async function run(dbUrl) {
  const requests = Number(process.env.BENCH_SCALE_REQUESTS ?? 400);
  const large = Number(process.env.BENCH_SCALE_TASKS ?? 1_000_000);
  const gateway = await startGateway(dbUrl);
  const db = new pg.Client({ connectionString: dbUrl });
  await db.connect();
  try {
    const key = await benchKey(gateway, OWNER);
    const headers = { authorization: `Bearer ${key}`, 'content-type': 'application/json' };
    const image = (await sharp({ create: { width: 320, height: 320, channels: 3, background: '#3a6ea5' } }).png().toBuffer()).toString('base64');
    let submitted = 0;
    const operations = {
      submit: () => fetch(`${gateway.url}${EXPAND}`, { method: 'POST', headers, body: JSON.stringify({ image, up_expansion_ratio: 0.1, bottom_expansion_ratio: 0.1, left_expansion_ratio: 0, right_expansion_ratio: 0, external_task_id: `new-${Date.now()}-${submitted++}` }) }),
      'query by task_id': (ids) => (i) => fetch(`${gateway.url}${EXPAND}/${ids[i % ids.length]}`, { headers }),
      'query by external_task_id': (n) => (i) => fetch(`${gateway.url}${EXPAND}/ext-${(i * 7919) % n}`, { headers }),
      'list page 1': () => fetch(`${gateway.url}${EXPAND}?pageNum=1&pageSize=30`, { headers }),
    };
    const measure = async (stored) => {
      const { rows } = await db.query('SELECT id FROM expand_tasks WHERE owner = $1 ORDER BY random() LIMIT 500', [OWNER]);
      const ids = rows.map((r) => r.id);
      const result = {};
      for (const [name, op] of Object.entries(operations)) {
        const next = name === 'query by task_id' ? op(ids) : name === 'query by external_task_id' ? op(stored) : op;
        await latency(Math.ceil(requests / 4), next); // warm
        result[name] = await latency(requests, next);
      }
      return result;
    };
    await seed(db, 0, 1000);
    await measure(1000); // warm up (JIT, pools, caches) before anything is measured
    const small = await measure(1000);
    await seed(db, 1000, large);
    const big = await measure(large);
    const rowsOut = Object.keys(operations).map((name) => ({
      operation: name,
      'p50 ms @1k': small[name].p50.toFixed(2),
      [`p50 ms @${large / 1e6}M`]: big[name].p50.toFixed(2),
      'p50 ratio (≤ 1.2)': (big[name].p50 / small[name].p50).toFixed(2),
      'p99 ms @1k': small[name].p99.toFixed(2),
      [`p99 ms @${large / 1e6}M`]: big[name].p99.toFixed(2),
    }));
    console.log(`${requests} sequential requests per operation and size, one owner\n`);
    console.log(table(rowsOut, ['operation', 'p50 ms @1k', `p50 ms @${large / 1e6}M`, 'p50 ratio (≤ 1.2)', 'p99 ms @1k', `p99 ms @${large / 1e6}M`]));
  } finally {
    await db.end();
    await gateway.stop();
    await cleanUpAfter(dbUrl, OWNER);
  }
}
