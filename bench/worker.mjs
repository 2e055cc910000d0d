// worker: sandbox expands of a 1-megapixel image (n = 1) through the queue (claim, read the input, render,
// store the result, finish), in tasks per second, against raw sharp doing the same extend + PNG encode with
// the same concurrency, in the same run. The tasks are queued first by a ROLE=api instance (the accept
// path is the accept scenario's) and held back, then run by a ROLE=worker instance in segments that
// alternate with raw sharp's (see run).
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import pg from 'pg';
import sharp from 'sharp';
import { availableParallelism } from 'node:os';
import { benchKey, cleanUpAfter, startGateway, table } from './support.mjs';

const RATIOS = { up_expansion_ratio: 0.25, bottom_expansion_ratio: 0.25, left_expansion_ratio: 0.25, right_expansion_ratio: 0.25 };

/** A 1000 × 1000 picture with gradients and texture, so PNG has real work to do. */
export async function photo() {
  const width = 1000;
  const height = 1000;
  const raw = Buffer.alloc(width * height * 3);
  for (let y = 0; y < height; y++) {
    for (let x = 0; x < width; x++) {
      const i = (y * width + x) * 3;
      const n = (Math.sin(x / 7) * Math.cos(y / 11) + 1) * 40;
      raw[i] = (x / 4 + n) & 255;
      raw[i + 1] = (y / 4 + n) & 255;
      raw[i + 2] = ((x + y) / 8 + ((x * 31 + y * 17) % 23)) & 255;
    }
  }
  const picture = sharp(raw, { raw: { width, height, channels: 3 } });
  return process.env.BENCH_WORKER_FORMAT === 'jpeg' ? picture.jpeg({ quality: 90 }).toBuffer() : picture.png().toBuffer();
}

/** What the sandbox does for n = 1: extend by the margins with a mirrored fill, encode as PNG. */
async function rawSharp(image, tasks, concurrency) {
  // a fresh copy per task, as each task's input is its own buffer in the gateway
  const margins = { top: 250, bottom: 250, left: 250, right: 250 };
  let next = 0;
  const finished = [];
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (next++ < tasks) {
        await sharp(Buffer.from(image)).extend({ ...margins, extendWith: 'mirror' }).png({ compressionLevel: 6 }).toBuffer();
        finished.push(performance.now());
      }
    }),
  );
  return steadyRate(finished.map((ms) => ms / 1000));
}

/**
 * Tasks per second in the steady state, the same on both sides: from the first finish to the last,
 * (finishes - 1) / elapsed. The ramp to full concurrency (and, for the gateway, its own start, which
 * overlaps its first tasks) stays out of the figure.
 */
function steadyRate(finishedS) {
  const first = Math.min(...finishedS);
  const last = Math.max(...finishedS);
  return (finishedS.length - 1) / (last - first);
}

/** Queues `tasks` expands for each of `owners` through a ROLE=api instance (not timed: that is the accept scenario). */
export async function queueTasks(dbUrl, image, tasks, owners) {
  const api = await startGateway(dbUrl, { ROLE: 'api', ...sharedDir() });
  try {
    const body = JSON.stringify({ image: image.toString('base64'), ...RATIOS, n: 1 });
    for (const owner of [owners].flat()) {
      const key = await benchKey(api, owner);
      for (let i = 0; i < tasks; i += 8) {
        const statuses = await Promise.all(
          Array.from({ length: Math.min(8, tasks - i) }, async () => {
            const res = await fetch(`${api.url}/video-a/v1/images/editing/expand`, { method: 'POST', headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' }, body });
            await res.arrayBuffer();
            return res.status;
          }),
        );
        if (statuses.some((st) => st !== 200)) throw new Error(`submissions answered ${statuses.join(', ')}`);
      }
    }
  } finally {
    await api.stop();
  }
}

/** Holds the queued jobs of these owners' tasks back (their start a day ahead), or lets them start now. */
async function holdJobs(db, owners, hold) {
  await db.query(
    `UPDATE pgboss.job SET start_after = ${hold ? "now() + interval '1 day'" : 'now()'}
     WHERE name = 'expand.run' AND state = 'created' AND (data->>'taskId')::uuid IN (SELECT id FROM tasks WHERE owner = ANY($1))`,
    [owners],
  );
}

/**
 * Lets one owner's queued tasks go to the running worker (claim, read the input, render, store the
 * result, finish) and answers tasks per second in the steady state, from finish times as the database saw them.
 */
async function runQueued(db, owner, tasks) {
  await holdJobs(db, [owner], false);
  for (;;) {
    const { rows } = await db.query("SELECT count(*) FILTER (WHERE state = 'succeeded')::int AS done, count(*) FILTER (WHERE state = 'failed')::int AS failed FROM tasks WHERE owner = $1", [owner]);
    if (rows[0].failed > 0) throw new Error(`${rows[0].failed} task(s) failed`);
    if (rows[0].done >= tasks) break;
    await new Promise((r) => setTimeout(r, 20));
  }
  const { rows } = await db.query('SELECT extract(epoch FROM finished_at)::float8 AS s FROM tasks WHERE owner = $1', [owner]);
  return steadyRate(rows.map((r) => r.s));
}

let shared;
/** One DATA_DIR for the API and the worker, as a deployment with the local driver has. */
function sharedDir() {
  shared ??= { DATA_DIR: mkdtempSync(path.join(tmpdir(), 'mgw-bench-data-')) };
  return shared;
}

/**
 * Each round queues its tasks first (held back), starts a worker, then alternates short segments: raw
 * sharp runs a segment's tasks, then the worker runs as many. Adjacent segments see the same machine, so
 * the drift of a shared host (raw sharp alone moves by ±15 % between minutes here) cancels in each pair.
 */
export async function run(dbUrl) {
  const tasks = Number(process.env.BENCH_WORKER_TASKS ?? 64);
  const segments = Number(process.env.BENCH_WORKER_SEGMENTS ?? 4);
  const perSegment = Math.max(4, Math.round(tasks / segments));
  // the gateway's default WORKER_CONCURRENCY (or BENCH_WORKER_CONCURRENCY), and the same for raw sharp
  const concurrency = Number(process.env.BENCH_WORKER_CONCURRENCY ?? Math.max(2, availableParallelism() + 1));
  const db = new pg.Client({ connectionString: dbUrl });
  await db.connect();
  try {
    const image = await photo();
    const rows = [];
    await rawSharp(image, 4, concurrency); // warm up
    for (let round = 1; round <= 2; round++) {
      const warm = `bench-worker-${round}-warm`;
      const owners = Array.from({ length: segments }, (_, s) => `bench-worker-${round}-${s + 1}`);
      await queueTasks(dbUrl, image, perSegment, owners);
      await queueTasks(dbUrl, image, 4, warm);
      await holdJobs(db, [warm, ...owners], true);
      const worker = await startGateway(dbUrl, { ROLE: 'worker', ...sharedDir(), PROVIDER: 'sandbox', SANDBOX_DELAY_MS: '0', WORKER_CONCURRENCY: String(concurrency), ...(process.env.BENCH_WORKER_ENV ? JSON.parse(process.env.BENCH_WORKER_ENV) : {}) });
      const pairs = [];
      try {
        await runQueued(db, warm, 4); // warm up, as raw sharp was
        for (const owner of owners) pairs.push({ floor: await rawSharp(image, perSegment, concurrency), ours: await runQueued(db, owner, perSegment) });
      } finally {
        await worker.stop();
      }
      for (const [s, { floor, ours }] of pairs.entries()) rows.push({ round: `${round}.${s + 1}`, 'raw sharp tasks/s': floor.toFixed(2), 'gateway tasks/s': ours.toFixed(2), 'ratio (≥ 0.8)': (ours / floor).toFixed(2) });
      const mean = (key) => pairs.reduce((sum, p) => sum + p[key], 0) / pairs.length;
      rows.push({ round: `${round}, all`, 'raw sharp tasks/s': mean('floor').toFixed(2), 'gateway tasks/s': mean('ours').toFixed(2), 'ratio (≥ 0.8)': `**${(mean('ours') / mean('floor')).toFixed(2)}**` });
      for (const owner of [warm, ...owners]) await cleanUpAfter(dbUrl, owner);
    }
    console.log(`1000×1000 PNG (${(image.length / 2 ** 20).toFixed(1)} MB), margins 25 % on each side, n = 1, ${segments} segments of ${perSegment} tasks per side and round, ${concurrency} at a time on both sides\n`);
    console.log(table(rows, ['round', 'raw sharp tasks/s', 'gateway tasks/s', 'ratio (≥ 0.8)']));
  } finally {
    await db.end();
  }
}
