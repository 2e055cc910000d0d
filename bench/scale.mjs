// scale: latency of submit, query by task_id, query by external_task_id and list page 1, for one owner with
// 1,000 and for one with 1,000,000 stored expand tasks (seeded in SQL), against the gateway (ROLE=api).
import pg from 'pg';
import sharp from 'sharp';
import { benchKey, cleanUpAfter, siblingDatabase, startGateway, table } from './support.mjs';

const OWNER = 'bench-scale';
const EXPAND = '/video-a/v1/images/editing/expand';

/** Finished tasks of OWNER numbered from..to-1, as the workers leave them (external_task_id ext-<n>). */
async function seed(db, from, to) {
  for (let start = from; start < to; start += 200_000) {
    const end = Math.min(to, start + 200_000);
    await db.query(
      `INSERT INTO tasks (id, kind, owner, external_id, state, params, slots, credits,
                         created_at, updated_at, deadline_at, started_at, finished_at, attempts)
       SELECT gen_random_uuid(), 'expand', $1, 'ext-' || i, CASE WHEN i % 10 = 0 THEN 'failed' ELSE 'succeeded' END::task_state,
              jsonb_build_object('image_url', 'https://example.com/' || i || '.png', 'up_ratio', 0.1, 'bottom_ratio', 0.1, 'left_ratio', 0.1, 'right_ratio', 0.1, 'n', 1, 'watermark', false), 1, 1,
              now() - make_interval(secs => ($3 - i)), now() - make_interval(secs => ($3 - i)), now(), now() - make_interval(secs => ($3 - i)), now() - make_interval(secs => ($3 - i)), 1
       FROM generate_series($2::int, $4::int - 1) AS i`,
      [OWNER, start, to, end],
    );
  }
  await db.query('VACUUM ANALYZE tasks');
  // the seed's writes reach the data files now, not in a checkpoint in the middle of the measurement
  await db.query('CHECKPOINT').catch(() => undefined); // (needs the pg_checkpoint role or a superuser)
}

/** `count` sequential requests made by `next(i)`, `from` onwards; their times in ms. */
async function timed(count, next, from = 0) {
  const times = [];
  for (let i = from; i < from + count; i++) {
    const t0 = performance.now();
    const res = await next(i);
    await res.arrayBuffer();
    if (!res.ok) throw new Error(`HTTP ${res.status}`);
    times.push(performance.now() - t0);
  }
  return times;
}

function percentiles(times) {
  const sorted = [...times].sort((a, b) => a - b);
  return { p50: sorted[Math.floor(sorted.length * 0.5)], p99: sorted[Math.floor(sorted.length * 0.99)] };
}

/** The four operations against one gateway, for an owner with `stored` tasks whose ids are `ids`. */
function operationsOf(gateway, key, image, stored, ids) {
  const headers = { authorization: `Bearer ${key}`, 'content-type': 'application/json' };
  let submitted = 0;
  return {
    submit: () => fetch(`${gateway.url}${EXPAND}`, { method: 'POST', headers, body: JSON.stringify({ image, up_expansion_ratio: 0.1, bottom_expansion_ratio: 0.1, left_expansion_ratio: 0, right_expansion_ratio: 0, external_task_id: `new-${Date.now()}-${submitted++}` }) }),
    'query by task_id': (i) => fetch(`${gateway.url}${EXPAND}/${ids[i % ids.length]}`, { headers }),
    'query by external_task_id': (i) => fetch(`${gateway.url}${EXPAND}/ext-${(i * 7919) % stored}`, { headers }),
    'list page 1': () => fetch(`${gateway.url}${EXPAND}?pageNum=1&pageSize=30`, { headers }),
  };
}

/** A gateway on `dbUrl` whose owner has `stored` tasks, and its operations. */
async function side(dbUrl, stored, image) {
  const gateway = await startGateway(dbUrl);
  const db = new pg.Client({ connectionString: dbUrl });
  await db.connect();
  try {
    const key = await benchKey(gateway, OWNER);
    await seed(db, 0, stored);
    const { rows } = await db.query('SELECT id FROM tasks WHERE owner = $1 ORDER BY random() LIMIT 500', [OWNER]);
    return { gateway, operations: operationsOf(gateway, key, image, stored, rows.map((r) => r.id)) };
  } finally {
    await db.end();
  }
}

/**
 * The owner with 1,000 tasks and the owner with 1,000,000 each have a database (and a gateway) of their
 * own on the same server, and each operation alternates between them in segments: the host's speed
 * drifts from minute to minute (measured one after the other, minutes apart, the same code gave
 * ratios from 0.44 to 1.33), and adjacent segments see the same machine.
 */
export async function run(dbUrl) {
  const requests = Number(process.env.BENCH_SCALE_REQUESTS ?? 400);
  const large = Number(process.env.BENCH_SCALE_TASKS ?? 1_000_000);
  const segments = 4;
  const image = (await sharp({ create: { width: 320, height: 320, channels: 3, background: '#3a6ea5' } }).png().toBuffer()).toString('base64');
  const smallUrl = await siblingDatabase(dbUrl, 'small');
  const sides = { small: await side(smallUrl, 1000, image), big: await side(dbUrl, large, image) };
  try {
    const result = { small: {}, big: {} };
    for (const name of Object.keys(sides.small.operations)) {
      for (const s of Object.values(sides)) await timed(Math.ceil(requests / 4), s.operations[name]); // warm up (JIT, pools, caches)
      const times = { small: [], big: [] };
      for (let segment = 0; segment < segments; segment++) {
        const count = Math.ceil(requests / segments);
        for (const size of segment % 2 ? ['big', 'small'] : ['small', 'big']) times[size].push(...(await timed(count, sides[size].operations[name], segment * count)));
      }
      result.small[name] = percentiles(times.small);
      result.big[name] = percentiles(times.big);
    }
    const rowsOut = Object.keys(result.small).map((name) => ({
      operation: name,
      'p50 ms @1k': result.small[name].p50.toFixed(2),
      [`p50 ms @${large / 1e6}M`]: result.big[name].p50.toFixed(2),
      'p50 ratio (≤ 1.2)': (result.big[name].p50 / result.small[name].p50).toFixed(2),
      'p99 ms @1k': result.small[name].p99.toFixed(2),
      [`p99 ms @${large / 1e6}M`]: result.big[name].p99.toFixed(2),
    }));
    console.log(`${requests} sequential requests per operation and size, one owner, the two sizes alternating in ${segments} segments\n`);
    console.log(table(rowsOut, ['operation', 'p50 ms @1k', `p50 ms @${large / 1e6}M`, 'p50 ratio (≤ 1.2)', 'p99 ms @1k', `p99 ms @${large / 1e6}M`]));
  } finally {
    for (const s of Object.values(sides)) await s.gateway.stop();
    await cleanUpAfter(dbUrl, OWNER);
  }
}
