// `npm run fuzz -- --count 20000 [--seed N] [--concurrency C] [--config no-limit|default|both]`: the fuzz test
// (test/e2e/fuzz.e2e.ts, in the abuse group) with more requests; `--config` picks the configuration it runs
// against: `no-limit` (AUTH_FAILURE_LIMIT=0), `default` (as shipped: the limit of failed authentications on), or
// `both` (the default: one run of each, --count requests each).
import { spawnSync } from 'node:child_process';
import { parseArgs } from 'node:util';

const { values } = parseArgs({ options: { count: { type: 'string', default: '20000' }, seed: { type: 'string' }, concurrency: { type: 'string' }, config: { type: 'string', default: 'both' } }, strict: true });
if (!/^\d+$/.test(values.count) || (values.concurrency !== undefined && !/^[1-9]\d*$/.test(values.concurrency))) {
  process.stderr.write('--count and --concurrency must be whole numbers\n');
  process.exit(1);
}
if (!['no-limit', 'default', 'both'].includes(values.config)) {
  process.stderr.write('--config is no-limit, default or both\n');
  process.exit(1);
}
const env = { ...process.env, FUZZ_COUNT: values.count, FUZZ_CONFIG: values.config, ...(values.seed ? { FUZZ_SEED: values.seed } : {}), ...(values.concurrency ? { FUZZ_CONCURRENCY: values.concurrency } : {}) };
const jest = ['--disable-warning=ExperimentalWarning', '--experimental-vm-modules', 'node_modules/jest/bin/jest.js', 'test/e2e/abuse.group.spec.ts', '-t', '^fuzzing every route'];
const { status } = spawnSync(process.execPath, jest, { stdio: 'inherit', env });
process.exit(status ?? 1);
