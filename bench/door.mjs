// door: what OpenAI's Images door adds to its vendor. The same generation (1024x1024, b64_json) is sent
// straight to a fake OpenAI Images vendor (bench/fake-images.mjs, a process of its own) and through the
// door of a gateway whose one image channel is that vendor, in the same run: for a vendor answering at
// once (requests one at a time; measured twice, after 40 generations and again after 240) and for vendors
// taking 2 s and 6.5 s (twenty at a time, their starts spread over the vendor's time, as independent callers'
// are), on one instance
// (ROLE=all) and on two (the request on a ROLE=api instance, the task's step on a ROLE=worker one, sharing
// the database and the storage). The overhead is the door's percentile minus the vendor's own.
import { mkdir, mkdtemp, readdir, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { adminCall, benchKey, cleanUpAfter, freePort, onExit, startChild, startGateway, table } from './support.mjs';

const API_KEY = 'bench-openai-key';
const BODY = { model: 'gpt-image-1', prompt: 'A lighthouse at dusk, waves breaking', size: '1024x1024', quality: 'medium', response_format: 'b64_json' };
/**
 * Each vendor time, with how many requests go at once (one at a time where the vendor answers at once), how
 * many are measured and how many warm the gateway up first (a process's first requests compile its code).
 */
const VENDORS = [
  { delayMs: 0, concurrency: 1, requests: 200, warmUp: 40 },
  // the same vendor again, with no more warm-up: the gateway has then served 240 generations, its code
  // compiled (in the first window its compiler threads still compete with it and PostgreSQL for two cores)
  { delayMs: 0, concurrency: 1, requests: 200, warmUp: 0 },
  // the slower vendors, 200 requests each as the vendor at once has, so that p99 is the third slowest of them (it
  // was the slowest of 60: one collision with anything else on the machine decided the cell); twenty at a time
  // (the same wall time as 60 six at a time), a few requests a second
  { delayMs: 2000, concurrency: 20, requests: 200, warmUp: 20 },
  { delayMs: 6500, concurrency: 20, requests: 200, warmUp: 20 },
];

export async function run(dbUrl, options) {
  const scale = options.requests ? Number(options.requests) / 60 : 1;
  const fakePort = await freePort();
  const image = process.env.BENCH_DOOR_IMAGE ?? 'photo';
  const fake = `http://127.0.0.1:${fakePort}`;
  await startChild('the fake vendor', 'bench/fake-images.mjs', { PORT: String(fakePort), FAKE_API_KEY: API_KEY, FAKE_IMAGE: image }, async () => (await fetch(`${fake}/v1/models`)).status === 401);
  const dataDir = await mkdtemp(path.join(tmpdir(), 'mgw-bench-door-'));
  onExit(() => rm(dataDir, { recursive: true, force: true }));
  const env = { IMAGE_PROVIDER: 'relay', OUTBOUND_ALLOW_HOSTS: '127.0.0.1', DATA_DIR: dataDir, LOG_LEVEL: 'warn' };
  // BENCH_NODE_ARGS (e.g. --cpu-prof) for the gateways; BENCH_DOOR_VENDORS (vendor ms, e.g. "0") and
  // BENCH_DOOR_INSTANCES ("1" or "2") keep a part of the run, to profile it
  const nodeArgs = process.env.BENCH_NODE_ARGS ? process.env.BENCH_NODE_ARGS.split(' ') : [];
  // BENCH_DOOR_TIMELINE=DIR: each gateway times its statements and HTTP exchanges (bench/timeline.mjs), written
  // to DIR/<topology>/ after the topology's windows; read them with bench/timeline-summary.mjs
  const timeline = process.env.BENCH_DOOR_TIMELINE;
  if (timeline) nodeArgs.push('--import', './bench/timeline.mjs');
  const topologies = [
    { name: 'one instance', count: 1, start: async () => [await startGateway(dbUrl, { ...env, ROLE: 'all' }, nodeArgs)] },
    { name: 'two instances', count: 2, start: async () => [await startGateway(dbUrl, { ...env, ROLE: 'api' }, nodeArgs), await startGateway(dbUrl, { ...env, ROLE: 'worker' }, nodeArgs)] },
  ].filter((t) => !process.env.BENCH_DOOR_INSTANCES || String(t.count) === process.env.BENCH_DOOR_INSTANCES);
  const vendors = VENDORS.filter((v) => !process.env.BENCH_DOOR_VENDORS || process.env.BENCH_DOOR_VENDORS.split(',').map(Number).includes(v.delayMs));
  const rows = [];
  const overheads = [];
  for (const topology of topologies) {
    const timelineDir = timeline && path.join(timeline, topology.count === 1 ? 'one-instance' : 'two-instances');
    if (timelineDir) await mkdir(timelineDir, { recursive: true });
    process.env.BENCH_TIMELINE_DIR = timelineDir ?? '';
    const instances = await topology.start();
    const door = instances[0];
    if (topology === topologies[0]) await adminCall(door.url, 'POST', '/admin/channels', { name: 'openai', operations: ['image'], protocol: 'openai', base_url: `${fake}/v1`, credentials: { api_key: API_KEY } });
    const key = await benchKey(door, 'bench-door');
    let served = 0; // generations the door has answered before the window
    for (const { delayMs, concurrency, requests: count, warmUp } of vendors) {
      const requests = Math.max(1, Math.round(count * scale));
      await fetch(`${fake}/_control/delay?ms=${delayMs}`, { method: 'POST' });
      const straight = { url: `${fake}/v1/images/generations`, key: API_KEY };
      const through = { url: `${door.url}/openai/v1/images/generations`, key };
      // warm both up, then the vendor's own time and the door's; requests that go several at a time start
      // spread over the vendor's time, as independent callers' do, not all in the same millisecond
      const spreadMs = delayMs / concurrency;
      const warming = Math.min(requests, warmUp);
      if (warming > 0) {
        await measure(straight, warming, concurrency, spreadMs);
        await measure(through, warming, concurrency, spreadMs);
      }
      const after = served + warming;
      const vendor = await measure(straight, requests, concurrency, spreadMs);
      const viaDoor = await measure(through, requests, concurrency, spreadMs);
      served = after + requests;
      for (const [side, r] of [['vendor', vendor], ['door', viaDoor]]) rows.push({ instances: topology.name, 'vendor ms': delayMs, 'at once': concurrency, after, side, 'p50 ms': r.p50.toFixed(1), 'p99 ms': r.p99.toFixed(1), failed: r.failed });
      overheads.push({ instances: topology.name, 'vendor ms': delayMs, after, 'p50 added ms': (viaDoor.p50 - vendor.p50).toFixed(1), 'p99 added ms (≤ 20)': (viaDoor.p99 - vendor.p99).toFixed(1) });
    }
    if (timelineDir) {
      for (const instance of instances) process.kill(instance.pid, 'SIGUSR1');
      const written = () => readdir(timelineDir).then((files) => files.filter((f) => f.startsWith('timeline-')).length === instances.length);
      for (const deadline = Date.now() + 10_000; !(await written()) && Date.now() < deadline; ) await new Promise((resolve) => setTimeout(resolve, 100));
    }
    for (const instance of instances.reverse()) await instance.stop();
  }
  await fetch(`${fake}/_control/delay?ms=0`, { method: 'POST' });
  console.log(`the vendor's image: ${image} (BENCH_DOOR_IMAGE: photo or plain)\n`);
  console.log('(after: the generations the door had answered before the window)');
  console.log(table(rows, ['instances', 'vendor ms', 'at once', 'after', 'side', 'p50 ms', 'p99 ms', 'failed']));
  console.log(`\n${table(overheads, ['instances', 'vendor ms', 'after', 'p50 added ms', 'p99 added ms (≤ 20)'])}`);
  await cleanUpAfter(dbUrl, 'bench-door');
}

/**
 * `count` generations, `concurrency` at a time (the i-th of them starting `spreadMs` × i later), each read to
 * its end: the latencies' p50 and p99 (ms), and how many were not a 200 with an image.
 */
async function measure({ url, key }, count, concurrency, spreadMs = 0) {
  const times = [];
  let failed = 0;
  let next = 0;
  await Promise.all(
    Array.from({ length: concurrency }, async (_, i) => {
      if (i > 0 && spreadMs > 0) await new Promise((resolve) => setTimeout(resolve, spreadMs * i));
      while (next < count) {
        next++;
        const started = performance.now();
        const res = await fetch(url, { method: 'POST', headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' }, body: JSON.stringify(BODY) });
        const body = await res.json().catch(() => null);
        times.push(performance.now() - started);
        if (res.status !== 200 || !body?.data?.[0]?.b64_json) {
          failed++;
          if (failed === 1) console.warn(`${url}: ${res.status} ${JSON.stringify(body).slice(0, 300)}`);
        }
      }
    }),
  );
  times.sort((a, b) => a - b);
  const at = (q) => times[Math.min(times.length - 1, Math.ceil(q * times.length) - 1)];
  return { p50: at(0.5), p99: at(0.99), failed };
}
