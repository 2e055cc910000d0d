// Loaded into the gateway with `node --import ./bench/cpu-window.mjs dist/main.js` (the inflight scenario's
// --profile DIR): a CPU profile of a window only, not of the whole life of the process. The first SIGUSR2
// starts V8's sampling profiler, the next one stops it and writes BENCH_CPU_PROFILE_DIR/window-<pid>-<n>.cpuprofile
// (the format of `node --cpu-prof`, for Chrome DevTools or bench/profile-summary.mjs).
import { writeFileSync } from 'node:fs';
import { Session } from 'node:inspector';
import path from 'node:path';

const dir = process.env.BENCH_CPU_PROFILE_DIR;
if (dir) {
  const session = new Session();
  session.connect();
  const post = (method, params) => new Promise((resolve, reject) => session.post(method, params, (err, result) => (err ? reject(err) : resolve(result))));
  let running = false;
  let n = 0;
  process.on('SIGUSR2', async () => {
    try {
      if (!running) {
        running = true;
        await post('Profiler.enable');
        await post('Profiler.setSamplingInterval', { interval: Number(process.env.BENCH_CPU_PROFILE_INTERVAL_US ?? 1000) });
        await post('Profiler.start');
      } else {
        running = false;
        const { profile } = await post('Profiler.stop');
        writeFileSync(path.join(dir, `window-${process.pid}-${++n}.cpuprofile`), JSON.stringify(profile));
      }
    } catch (err) {
      console.error(`cpu-window: ${err}`);
    }
  });
}
