// Summarises the timelines bench/timeline.mjs wrote (one file per gateway process, times on the machine's
// clock): per process, each statement and outgoing exchange with how often it ran and its median and p90 round
// trip (ms); then the requests one process answered, one at a time: the median request split into statements
// and outgoing exchanges (of every process, within the request's span), and the slowest laid out event by
// event, each process's events beside the others'.
//
//   node bench/timeline-summary.mjs <dir> [path of the requests, default /openai/v1/images/generations]
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';

const [dir, route = '/openai/v1/images/generations'] = process.argv.slice(2);
const at = (sorted, q) => sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))];
const ms = (v) => v.toFixed(2).padStart(7);

const files = readdirSync(dir).filter((f) => /^timeline-\d+\.json$/.test(f));
const all = [];
for (const file of files) {
  const pid = /(\d+)/.exec(file)[1];
  const events = JSON.parse(readFileSync(path.join(dir, file), 'utf8'));
  console.log(`\nprocess ${pid}: ${events.length} events`);
  const byWhat = new Map();
  for (const [kind, start, end, what] of events) if (kind !== 'in') byWhat.set(`${kind} ${what}`, [...(byWhat.get(`${kind} ${what}`) ?? []), end - start]);
  for (const [what, times] of [...byWhat].filter(([, t]) => t.length >= 10).sort((a, b) => b[1].length - a[1].length || a[0].localeCompare(b[0]))) {
    times.sort((a, b) => a - b);
    console.log(`  ${String(times.length).padStart(6)} ×  median ${ms(at(times, 0.5))}  p90 ${ms(at(times, 0.9))}  ${what}`);
  }
  for (const e of events) all.push([...e, pid]);
}
all.sort((a, b) => a[1] - b[1]);
const requests = all.filter(([kind, , , what]) => kind === 'in' && what.endsWith(route));
if (requests.length > 0) {
  const inside = requests.map(([, start, end, , pid]) => {
    const parts = all.filter(([kind, s, e]) => kind !== 'in' && s >= start && e <= end);
    const sum = (k) => parts.filter(([kind]) => kind === k).reduce((t, [, s, e]) => t + e - s, 0);
    return { total: end - start, sql: sum('sql'), out: sum('out'), start, pid, parts };
  });
  const median = (key) => at(inside.map((r) => r[key]).sort((a, b) => a - b), 0.5);
  console.log(`\n${requests.length} requests to ${route}: median ${ms(median('total'))} ms; within them, statements ${ms(median('sql'))} and outgoing ${ms(median('out'))} (each a median, every process)`);
  for (const r of inside.sort((a, b) => b.total - a.total).slice(0, 3)) {
    console.log(`a slow one (answered by ${r.pid}): ${ms(r.total)} ms`);
    for (const [kind, s, e, what, pid] of r.parts) console.log(`  +${ms(s - r.start)} ${ms(e - s)} ms  ${pid}  ${kind} ${what}`);
  }
}
