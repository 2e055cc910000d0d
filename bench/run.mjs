// npm run bench [-- accept|big|worker|scale|inflight ...] [--duration S] [--connections N] [--rounds N]
// Benchmarks of the gateway, each side by side with a floor measured in the same run (see README, "Performance").
// Without names it runs the default ones; inflight (tens of minutes) runs only when named, with its own
// options (see bench/inflight.mjs).
import os from 'node:os';
import { arg, cleanUp, database } from './support.mjs';

const scenarios = {
  accept: () => import('./accept.mjs'),
  big: () => import('./big.mjs'),
  worker: () => import('./worker.mjs'),
  scale: () => import('./scale.mjs'),
  inflight: () => import('./inflight.mjs'),
  door: () => import('./door.mjs'),
};
/** What runs when no scenario is named: the long ones are left out. */
const byDefault = ['accept', 'big', 'worker', 'scale', 'door'];

const chosen = process.argv.slice(2).filter((a, i, all) => scenarios[a] && !all[i - 1]?.startsWith('--'));
const names = chosen.length ? chosen : byDefault;
const options = { durationS: Number(arg('duration', 10)), connections: Number(arg('connections', 32)), rounds: Number(arg('rounds', 2)), requests: Number(arg('requests', 60)) };

try {
  const db = await database();
  console.log(`machine: ${os.cpus().length} × ${os.cpus()[0].model.trim()}, ${Math.round(os.totalmem() / 2 ** 30)} GiB, Node ${process.version}; PostgreSQL: ${db.kind}`);
  for (const name of names) {
    console.log(`\n## ${name}\n`);
    await (await scenarios[name]()).run(db.url, options);
  }
} catch (err) {
  console.error(err);
  process.exitCode = 1;
} finally {
  await cleanUp();
}
