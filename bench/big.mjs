// big: N concurrent expands with a ~13.7 MB Base64 image (a 10 MB PNG), against the gateway (ROLE=api);
// prints accepted/s and the peak growth of the process's resident memory per body in flight.
import { readFileSync } from 'node:fs';
import { randomBytes } from 'node:crypto';
import sharp from 'sharp';
import { benchKey, cleanUpAfter, startGateway, table } from './support.mjs';

const TARGET_BYTES = 10_200_000;

/** A PNG of random pixels, just under the 10 MB rule: its Base64 is about 13.7 MB. */
async function bigPng() {
  let side = 1800;
  for (;;) {
    const png = await sharp(randomBytes(side * side * 3), { raw: { width: side, height: side, channels: 3 } }).png({ compressionLevel: 0 }).toBuffer();
    if (png.length <= TARGET_BYTES && png.length > TARGET_BYTES * 0.97) return png;
    side = Math.floor(side * Math.sqrt(TARGET_BYTES / png.length) * 0.995);
  }
}

const rssBytes = (pid) => Number(/VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))[1]) * 1024;

export async function run(dbUrl, { connections }) {
  const concurrent = Number(process.env.BENCH_BIG_CONCURRENCY ?? 10);
  const waves = Number(process.env.BENCH_BIG_WAVES ?? 3);
  const gateway = await startGateway(dbUrl);
  const key = await benchKey(gateway, 'bench-big');
  const png = await bigPng();
  const body = JSON.stringify({ image: png.toString('base64'), up_expansion_ratio: 0.1, bottom_expansion_ratio: 0.1, left_expansion_ratio: 0, right_expansion_ratio: 0 });
  const send = async () => {
    const res = await fetch(`${gateway.url}/video-a/v1/images/editing/expand`, { method: 'POST', headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' }, body });
    await res.arrayBuffer();
    return res.status;
  };
  // warm up with one, let the heap settle, then measure the resting size
  await send();
  await new Promise((r) => setTimeout(r, 3000));
  const idle = rssBytes(gateway.pid);
  let peak = idle;
  const sampler = setInterval(() => (peak = Math.max(peak, rssBytes(gateway.pid))), 20);
  const started = Date.now();
  const statuses = [];
  for (let wave = 0; wave < waves; wave++) statuses.push(...(await Promise.all(Array.from({ length: concurrent }, send))));
  const seconds = (Date.now() - started) / 1000;
  clearInterval(sampler);
  const ok = statuses.filter((s) => s === 200).length;
  const mb = (b) => (b / 2 ** 20).toFixed(1);
  const perBody = (peak - idle) / concurrent;
  console.log(
    table(
      [
        {
          'body MB': mb(Buffer.byteLength(body)),
          'in flight': concurrent,
          accepted: `${ok}/${statuses.length}`,
          'accepted/s': (ok / seconds).toFixed(1),
          'idle RSS MB': mb(idle),
          'peak RSS MB': mb(peak),
          'growth per body MB': mb(perBody),
          'growth / body (≤ 3)': (perBody / Buffer.byteLength(body)).toFixed(2),
        },
      ],
      ['body MB', 'in flight', 'accepted', 'accepted/s', 'idle RSS MB', 'peak RSS MB', 'growth per body MB', 'growth / body (≤ 3)'],
    ),
  );
  void connections;
  await gateway.stop();
  await cleanUpAfter(dbUrl, 'bench-big');
}
