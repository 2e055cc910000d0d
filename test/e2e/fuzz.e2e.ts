import { appendFileSync } from 'node:fs';
import { callerIdOperations, type FuzzCase, operationsOf, runFuzz } from '../support/fuzz.js';
import type { Observed } from '../support/raw-http.js';
import { api, startTestApp, type TestApp } from '../support/test-app.js';

/** CI runs a bounded count; `npm run fuzz -- --count 20000 [--seed N]` runs more through this same test. */
const COUNT = Number(process.env.FUZZ_COUNT ?? 1000);
/**
 * The run with the default configuration, in npm test: fewer requests (the other run already reaches every
 * route with its hostile bodies; this one is for what the limit of failed authentications changes).
 */
const DEFAULT_CONFIG_COUNT = Number(process.env.FUZZ_COUNT ?? 500);
const SEED = process.env.FUZZ_SEED ? Number(process.env.FUZZ_SEED) : undefined;
/**
 * Which configurations run (FUZZ_CONFIG, `npm run fuzz -- --config`): `no-limit`, `default`, or `both` (npm
 * test: one seed each).
 */
const CONFIG = process.env.FUZZ_CONFIG ?? 'both';
/** Requests in flight at once, and how long each may wait for its answer. */
const CONCURRENCY = Number(process.env.FUZZ_CONCURRENCY ?? 12);
const DEADLINE_MS = Number(process.env.FUZZ_DEADLINE_MS ?? 20_000);
/** A file to append each request's time to (JSON lines), to see what is slow. */
const TIMINGS = process.env.FUZZ_TIMINGS;
/** Replay part of a seeded run: FUZZ_FROM and FUZZ_TO are positions in its sample. */
const SLICE: [number, number] | undefined = process.env.FUZZ_FROM ? [Number(process.env.FUZZ_FROM), Number(process.env.FUZZ_TO ?? COUNT)] : undefined;
const ADMIN = 'admin-secret-0123456789';

interface FuzzRun {
  name: string;
  /** What the run's app is started with besides the common settings. */
  env: Record<string, string>;
  count: number;
  /** What must be true of each answer besides what every run checks (problemWith). */
  check?: (c: FuzzCase, o: Observed, key: string) => string | null;
}

const ALL_RUNS: FuzzRun[] = [
  // AUTH_FAILURE_LIMIT=0: every hostile Authorization header is answered for itself (401), however many came before.
  { name: 'no-limit', env: { AUTH_FAILURE_LIMIT: '0' }, count: COUNT },
  // As shipped: the fuzzer's hostile Authorization headers soon limit its one address; its valid key and the
  // admin key must still be served (never 429 1005), and every answer, the limit's early 429s too, be read whole.
  { name: 'default', env: {}, count: CONFIG === 'default' ? COUNT : DEFAULT_CONFIG_COUNT, check: (c, o, key) => (carriesValid(c, key) && /"code":1005\b/.test(o.text) ? 'a valid credential answered 429 1005' : null) },
];
const RUNS = ALL_RUNS.filter((run) => CONFIG === 'both' || CONFIG === run.name);

/**
 * Whether the request carries a credential its route takes, as a well-formed Bearer credential (the scheme in
 * any case): the API key or the admin key (refused on some routes, 401 or 403, but never counted as a failure),
 * or on /metrics the admin key (an API key is a wrong token there).
 */
function carriesValid(c: FuzzCase, key: string): boolean {
  if (c.kind !== 'http') return false;
  const token = /^Bearer +(\S+) *$/i.exec(c.headers.authorization ?? '')?.[1];
  return token === ADMIN || (token === key && !c.path.startsWith('/metrics'));
}

describe.each(RUNS)('fuzzing every route from the OpenAPI document ($name configuration)', (run) => {
  let t: TestApp;
  beforeAll(async () => {
    // LOG_LEVEL=error: what the service logs of an answer it could not give (a 500's cause, by request_id), and nothing else.
    // ROLE=api: the accepted tasks are not run, so no fuzzed URL is ever fetched.
    // IMAGE_HOLD_S=1, SPEECH_HOLD_S=1, MUSIC_HOLD_S=1: OpenAI's image and speech doors and ElevenLabs' music door, which answer when their task ends, answer an accepted request (never run here) at once;
    // AUDIO_HOLD_S=1: so does the sunoapi.org-style door's upload-extend, which waits for its upload's check
    // DATABASE_POOL_TIMEOUT_MS: twelve hostile requests at a time (50 MB bombs among them) on a machine running the
    // full suite once kept a request waiting past the default 5 s for a pooled connection, answered with the
    // documented 503 and Retry-After (the database-outage tests hold that answer to its shape): here the question
    // is what hostile input gets, not how the pool fares on an overloaded machine
    t = await startTestApp({ ROLE: 'api', ADMIN_API_KEY: ADMIN, LOG_LEVEL: 'error', IMAGE_HOLD_S: '1', SPEECH_HOLD_S: '1', MUSIC_HOLD_S: '1', AUDIO_HOLD_S: '1', DATABASE_POOL_TIMEOUT_MS: '30000', ...run.env });
  });
  afterAll(() => t.close());

  it(`answers ${run.count} hostile requests below 500, ${CONCURRENCY} at a time, every error with the envelope and its X-Request-Id`, async () => {
    const doc = (await api(t.url, 'GET', '/docs-json')).body;
    const key = await t.createKey('fuzz');
    const report = await runFuzz({
      base: t.url,
      doc,
      keys: { api: key, admin: ADMIN },
      count: run.count,
      seed: SEED,
      slice: SLICE,
      concurrency: CONCURRENCY,
      deadlineMs: DEADLINE_MS,
      check: run.check ? (c, o) => run.check!(c, o, key) : undefined,
      onTiming: TIMINGS ? (timing) => appendFileSync(TIMINGS, `${JSON.stringify({ at: Date.now(), run: run.name, ...timing })}\n`) : undefined,
    });
    const summary = `${run.name}, seed ${report.seed}: ${JSON.stringify(report.statuses)}; slowest: ${report.slowest.map((t) => `${t.ms} ms #${t.index} ${t.case}`).join(', ')}`;
    // a 500 comes with what the service logged of it: the cause, which the answer rightly does not say
    const logged = (body: string) => {
      const id = /"request_id":"([^"]+)"/.exec(body)?.[1];
      const line = id ? t.logs.lines.find((l) => l.request_id === id) : undefined;
      return line ? String((line.err as { stack?: string } | undefined)?.stack ?? line.msg).split('\n').slice(0, 8).join('\n') : undefined;
    };
    // the first few of each kind of problem, so that a frequent one does not hide a rare one
    const problems: Record<string, number> = {};
    for (const v of report.violations) problems[v.problem] = (problems[v.problem] ?? 0) + 1;
    const shown = report.violations.filter((v, i, all) => all.slice(0, i).filter((w) => w.problem === v.problem).length < 3).slice(0, 12);
    const violations = shown.map((v) => (v.status === 500 ? { ...v, logged: logged(v.body) } : v));
    expect([summary, problems, violations]).toEqual([summary, {}, []]);
    if (SLICE) return;
    expect(report.sent).toBe(run.count);
    // the fuzzer reached past the door: accepted, refused, unknown, too large, wrong type and framing answers
    for (const status of ['200', '201', '400', '401', '404', '413', '415']) expect([status, report.statuses[status] ?? 0]).toEqual([status, expect.any(Number)]);
    expect(Object.keys(report.statuses).filter((s) => /^2/.test(s)).length).toBeGreaterThan(0);
    // a caller's id sent again was refused 409 on every route that takes one (Kling's four; each twice in every run), never a 500
    const idRoutes = callerIdOperations(doc);
    expect(idRoutes.length).toBeGreaterThanOrEqual(4);
    expect(idRoutes.filter((op) => !report.reusedIds[`${op} 409`])).toEqual([]);
    // every operation got lone surrogates, NUL, noncharacters or invalid UTF-8 (the issue's 500s hid in a few)
    const missed = operationsOf(doc).map((op) => `${op.method} ${op.path}`).filter((op) => !report.hostileUnicode[op]);
    expect(missed).toEqual([]);
  }, 600_000);
});
