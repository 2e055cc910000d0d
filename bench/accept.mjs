// accept: submissions per second against the gateway (ROLE=api, every limit on) and the floor, same
// database, same run, alternating rounds: a prompt-only video generation and a small-image expand, sent by
// one team (one key) and by 16 teams (a key each, the connections shared among them).
import sharp from 'sharp';
import { benchKey, cleanUpAfter, load, startFloor, startGateway, table } from './support.mjs';

/** The teams sending at once: one, and as many as issue 58 measured (each its own key and limits). */
const TEAMS = [1, 16];

export async function run(dbUrl, { durationS, connections, rounds }) {
  const gateway = await startGateway(dbUrl, process.env.BENCH_GATEWAY_ENV ? JSON.parse(process.env.BENCH_GATEWAY_ENV) : {}, process.env.BENCH_NODE_ARGS ? process.env.BENCH_NODE_ARGS.split(' ') : []);
  const floor = await startFloor(dbUrl);
  const owners = Array.from({ length: Math.max(...TEAMS) }, (_, i) => `bench-accept-${i + 1}`);
  const keys = [];
  for (const owner of owners) keys.push(await benchKey(gateway, owner));
  const image = (await sharp({ create: { width: 320, height: 320, channels: 3, background: '#3a6ea5' } }).png().toBuffer()).toString('base64');
  const bodies = {
    video: { path: '/video-b/v1/generations', body: { prompt: 'A lighthouse at dusk, waves breaking', aspect_ratio: '16:9' } },
    expand: { path: '/video-a/v1/images/editing/expand', body: { image, up_expansion_ratio: 0.1, bottom_expansion_ratio: 0.1, left_expansion_ratio: 0.1, right_expansion_ratio: 0.1, n: 1 } },
  };
  const teams = (process.env.BENCH_ACCEPT_TEAMS ?? TEAMS.join(',')).split(',').map(Number);
  const sides = { gateway, floor };
  // warm both up (JIT, pools, every team's key), then measure in alternating order
  for (const [, side] of Object.entries(sides)) for (const op of Object.values(bodies)) await load({ url: side.url, ...op, key: keys, connections, durationS: 5 });
  const results = [];
  for (let round = 1; round <= rounds; round++) {
    const order = round % 2 ? ['gateway', 'floor'] : ['floor', 'gateway'];
    for (const [operation, op] of Object.entries(bodies)) {
      for (const n of teams) {
        for (const side of order) results.push({ round, operation, teams: n, side, ...(await load({ url: sides[side].url, ...op, key: keys.slice(0, n), connections, durationS })) });
      }
    }
  }
  const rows = results.map((r) => ({ round: r.round, operation: r.operation, teams: r.teams, side: r.side, 'req/s': Math.round(r.rps), 'p50 ms': r.p50, 'p99 ms': r.p99, 'not 2xx': r.bad }));
  console.log(table(rows, ['round', 'operation', 'teams', 'side', 'req/s', 'p50 ms', 'p99 ms', 'not 2xx']));
  const ratios = [];
  for (let round = 1; round <= rounds; round++) {
    for (const operation of Object.keys(bodies)) {
      for (const n of teams) {
        const g = results.find((r) => r.round === round && r.operation === operation && r.teams === n && r.side === 'gateway');
        const f = results.find((r) => r.round === round && r.operation === operation && r.teams === n && r.side === 'floor');
        ratios.push({ round, operation, teams: n, 'req/s ratio (≥ 0.8)': (g.rps / f.rps).toFixed(2), 'p99 ratio (≤ 1.5)': (g.p99 / f.p99).toFixed(2) });
      }
    }
  }
  console.log(`\n${table(ratios, ['round', 'operation', 'teams', 'req/s ratio (≥ 0.8)', 'p99 ratio (≤ 1.5)'])}`);
  await gateway.stop();
  await floor.stop();
  for (const owner of owners) await cleanUpAfter(dbUrl, owner);
}
