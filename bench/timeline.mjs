// Loaded into the gateway with `node --import ./bench/timeline.mjs dist/main.js` (the door scenario's
// BENCH_DOOR_TIMELINE=DIR): a timeline of what the process waits on, for one request at a time. Every
// PostgreSQL statement (node-postgres, whichever pool sends it), every outgoing HTTP exchange and every
// incoming request is timed in the process (ms since the epoch, with a fraction: the processes of one machine
// line up, so a request's time on an API instance lays out beside its step's on a worker); SIGUSR1 writes
// them to BENCH_TIMELINE_DIR/timeline-<pid>.json, which bench/timeline-summary.mjs reads. The hooks cost a
// little: compare timelines with timelines, not with a bench's figures.
import { writeFileSync } from 'node:fs';
import http from 'node:http';
import { PerformanceObserver } from 'node:perf_hooks';
import { createRequire } from 'node:module';
import path from 'node:path';

const dir = process.env.BENCH_TIMELINE_DIR;
if (dir) {
  // the gateway's own node-postgres (the one its pools and pg-boss load), from the process's working directory
  const pg = createRequire(path.join(process.cwd(), 'package.json'))('pg');
  /** [kind, start ms, end ms, what]: kind 'sql', 'out' (an outgoing HTTP exchange), 'in' (a request, start to its answer's end), 'gc' or 'stall'. */
  const events = [];
  const now = () => performance.timeOrigin + performance.now();
  const query = pg.Client.prototype.query;
  pg.Client.prototype.query = function (config, values, callback) {
    const what = String((typeof config === 'string' ? config : (config?.text ?? config?.name)) ?? '?').replace(/\s+/g, ' ').trim().slice(0, 60);
    const start = now();
    const done = () => events.push(['sql', start, now(), what]);
    const timed = (fn) =>
      function (...args) {
        done();
        return fn.apply(this, args);
      };
    // node-postgres answers by a callback (as its pools ask) or a promise
    if (typeof values === 'function') values = timed(values);
    else if (typeof callback === 'function') callback = timed(callback);
    else if (typeof config?.callback === 'function') config.callback = timed(config.callback);
    const result = query.call(this, config, values, callback);
    if (typeof result?.then === 'function') result.then(done, () => undefined);
    return result;
  };
  const emit = http.Server.prototype.emit;
  http.Server.prototype.emit = function (name, req, res) {
    if (name === 'request') {
      const start = now();
      res.once('finish', () => events.push(['in', start, now(), `${req.method} ${req.url}`]));
    }
    return emit.apply(this, arguments);
  };
  const request = http.request;
  http.request = function (...args) {
    const start = now();
    const req = request.apply(this, args);
    const target = args[0];
    req.once('response', (res) => res.once('end', () => events.push(['out', start, now(), String(target?.pathname ?? target?.path ?? target)])));
    return req;
  };
  // the collections, each a pause of the whole process: [gc, start, end, its kind]
  new PerformanceObserver((list) => {
    for (const e of list.getEntries()) events.push(['gc', performance.timeOrigin + e.startTime, performance.timeOrigin + e.startTime + e.duration, `gc ${e.detail?.kind ?? ''}`]);
  }).observe({ entryTypes: ['gc'] });
  // the event loop held up: a 5 ms timer's tick more than 10 ms late, [stall, last tick, this tick, '']
  let tick = now();
  setInterval(() => {
    const at = now();
    if (at - tick > 15) events.push(['stall', tick, at, '']);
    tick = at;
  }, 5).unref();
  // this process's two clocks at one moment: the epoch's (the events') and the monotonic one (a --cpu-prof's)
  process.on('SIGUSR1', () => events.push(['clock', now(), Number(process.hrtime.bigint()) / 1e6, '']));
  process.on('SIGUSR1', () => writeFileSync(path.join(dir, `timeline-${process.pid}.json`), JSON.stringify(events)));
}
