import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { api, createKeyThrough } from '../support/api-client.js';
import { Child } from '../support/child-process.js';
import { freePort } from '../support/free-port.js';
import { correlation, decodeMono, decodeS16 } from '../support/media.js';
import { OwnPostgres } from '../support/own-postgres.js';
import { pollUntil } from '../support/poll.js';
import { queryDb, type TestDatabase } from '../support/test-database.js';

const ADMIN = 'admin-secret-0123456789';
/**
 * Every sandbox step of music, lyrics and stems waits this long before its work: a task seen running is still in
 * its step when the fault comes (the poll that sees it reads every 100 ms), however loaded the machine.
 */
const DELAY_MS = 5000;
/** A killed worker's tasks are taken again within about two leases. */
const LEASE_S = 3;
const TAKE_S = 6;
/** Each kind at its own price, so a charge counted twice shows in the total. */
const PRICES = { music: 7, lyrics: 2, stems: 3, wav: 1 };
const STEMS = { two: ['vocals', 'instrumental'], all: ['vocals', 'drums', 'bass', 'guitar', 'piano', 'other'] };

interface Row {
  id: string;
  kind: string;
  state: string;
  lease_owner: string | null;
  /** The task's current job: a step put back (as after an outage) is a new job, still in state running. */
  job_id: string | null;
  attempts: number;
  credits: number;
}

/** A log line's level, time and message (its error's message), without the error's whole dump. */
function brief(line: string): string {
  try {
    const l = JSON.parse(line) as { level: string; time: string; msg: string; err?: { message?: string } };
    return `${l.time} ${l.level} ${l.msg}${l.err?.message ? `: ${l.err.message}` : ''}`.slice(0, 400);
  } catch {
    return line.slice(0, 400);
  }
}

/** The process still runs; if not, the failure shows how it ended. */
function expectAlive(child: Child, name: string): void {
  const ended = child.process.exitCode !== null || child.process.signalCode !== null;
  expect([name, ended ? `exited ${child.process.exitCode ?? child.process.signalCode}:\n${child.output.slice(-4000)}` : 'running']).toEqual([name, 'running']);
}

/**
 * Issue 57's music kinds against the two faults operators meet: the real processes (dist/main.js: one API
 * instance, one worker) on a PostgreSQL of the test's own. A song is made; then lyrics, stems of its take (two,
 * and all) and a WAV of it (the sunoapi.org-shaped door's, accepted just before the database stops) are asked
 * for. While lyrics and stems run, the database stops until every stems step has met it gone, then starts
 * again: no process exits, and the steps the outage interrupted run again. While they run again, the worker is
 * killed (SIGKILL) and another started: it takes them over once their lease runs out. Every task succeeds,
 * once: each stems task has exactly its stems (one clip and one stored file each, none left from an earlier run
 * of its step), the WAV decodes to the take's samples, the stems to the song, and each task was charged once.
 * Before, a stems step that met the outage failed its task with the connection error (clipAudioRowOrFailure).
 */
describe('music kinds (lyrics, stems, WAV) through a database outage and a killed worker', () => {
  it('every accepted task succeeds once, with exactly its stems, a WAV that decodes, and one charge each; no process exits on the outage', async () => {
    const pg = await OwnPostgres.start();
    const db: TestDatabase = { url: pg.url, name: 'gateway', drop: async () => undefined };
    const dataDir = await mkdtemp(path.join(tmpdir(), 'mgw-music-outage-'));
    const env = {
      DATABASE_URL: pg.url,
      ADMIN_API_KEY: ADMIN,
      SANDBOX_DELAY_MS: String(DELAY_MS),
      MUSIC_SANDBOX_DURATION_S: String(TAKE_S),
      WORKER_LEASE_S: String(LEASE_S),
      WORKER_CONCURRENCY: '4',
      PRICE_MUSIC: String(PRICES.music),
      PRICE_LYRICS: String(PRICES.lyrics),
      PRICE_STEMS: String(PRICES.stems),
      PRICE_WAV: String(PRICES.wav),
      DEFAULT_REQUESTS_PER_MINUTE: '1000000',
      LOG_LEVEL: 'info',
      DATA_DIR: dataDir, // one storage for every process, as a shared volume would be
    };
    const start = async (role: string) => {
      const port = await freePort();
      const child = Child.start('dist/main.js', [], { ...env, ROLE: role, PORT: String(port) });
      return { child, url: `http://127.0.0.1:${port}`, ready: child.waitFor(/"listening"/, 90_000) };
    };
    const apiProcess = await start('api');
    let worker = await start('worker');
    const workers = [worker];
    const base = apiProcess.url;
    const rows = (ids: string[]) => queryDb<Row>(db, 'SELECT id, kind, state::text, lease_owner, job_id::text, attempts, credits FROM tasks WHERE id = ANY($1::uuid[]) ORDER BY created_at', [ids]);
    /** What the database and the processes say of tasks that did not end as expected. */
    const explain = async (err: Error, ids: string[]) => {
      const now = await rows(ids).catch((e: Error) => e.message);
      const lines = [apiProcess, ...workers].map((p, i) => `${i === 0 ? 'api' : `worker ${i}`}:\n${p.child.output.split('\n').filter((l) => /"level":"(warn|error)"/.test(l) || (ids.some((id) => l.includes(id)) && !l.includes('"request completed"'))).map(brief).slice(-40).join('\n')}`);
      return new Error(`${err.message}\n${JSON.stringify(now)}\n${lines.join('\n')}`);
    };
    try {
      await Promise.all([apiProcess.ready, worker.ready]);
      const key = await createKeyThrough(base, ADMIN, 'music-outage');
      const submitted = async (route: string, body: unknown): Promise<string> => {
        const res = await api(base, 'POST', route, { key, body });
        expect([route, res.status, res.body.code]).toEqual([route, 200, route.startsWith('/sunoapi') ? 200 : 'success']);
        return (route.startsWith('/sunoapi') ? res.body.data.taskId : res.body.data) as string;
      };
      const fetchTask = async (id: string) => (await api(base, 'GET', `/music-a/fetch/${id}`, { key })).body.data;

      // the song whose take feeds stems and the WAV
      const songId = await submitted('/music-a/submit/music', { prompt: '[Verse]\nLanterns on the water', tags: 'folk, guitar', title: 'Lanterns' });
      const song = await pollUntil(() => fetchTask(songId), (d) => d?.status === 'SUCCESS' || d?.status === 'FAILURE', { timeoutMs: 60_000, what: 'the song to end' });
      expect([song.status, song.fail_reason]).toEqual(['SUCCESS', '']);
      const take = song.data[0] as { id: string; audio_url: string };

      const delayedIds = {
        lyrics: await submitted('/music-a/submit/lyrics', { prompt: 'a night ferry crossing the straits' }),
        two: await submitted('/music-a/submit/stems', { clip_id: take.id, stems: 'two' }),
        all: await submitted('/music-a/submit/stems', { clip_id: take.id, stems: 'all' }),
      };
      const delayed = Object.values(delayedIds);

      // 1. The database stops while lyrics and both stems tasks are in their steps, and just after the WAV was
      // accepted (its conversion takes no delay: queued, converting or done when the database stops, it must end once)
      const first = await pollUntil(() => rows(delayed), (r) => r.filter((t) => t.state === 'running').length === delayed.length, { intervalMs: 100, what: 'lyrics and both stems tasks to run' });
      const ids = { ...delayedIds, wav: await submitted('/sunoapi/api/v1/wav/generate', { taskId: songId, audioId: take.id }) };
      const all = [songId, ...Object.values(ids)];
      await pg.stop();
      const ready = await pollUntil(() => api(base, 'GET', '/health/ready'), (r) => r.status === 503, { what: 'readiness to fail' });
      expect(ready.headers.get('retry-after')).toMatch(/^\d+$/);
      // a request that needs the database is refused, not accepted (the count of tasks below proves it made none)
      const refused = await pollUntil(() => api(base, 'POST', '/music-a/submit/lyrics', { key, body: { prompt: 'lost at sea' } }), (r) => r.status !== 200, { what: 'submissions to be refused' });
      expect([refused.status, refused.headers.get('retry-after')]).toEqual([503, expect.stringMatching(/^\d+$/)]);
      // the outage lasts until each stems step, its delay over, has needed the database and met it gone
      await pollUntil(async () => [ids.two, ids.all].filter((id) => worker.child.output.includes(`task ${id} interrupted by a database outage`)).length, (n) => n === 2, {
        timeoutMs: DELAY_MS + 30_000,
        what: 'both stems steps to meet the outage',
      }).catch(async (err: Error) => {
        throw await explain(err, all);
      });
      expectAlive(apiProcess.child, 'api');
      expectAlive(worker.child, 'worker');
      await pg.restart();
      await pollUntil(() => api(base, 'GET', '/health/ready'), (r) => r.status === 200, { timeoutMs: 30_000, what: 'readiness after the database returned' });
      for (const p of [apiProcess, worker]) await p.child.waitFor(/the database answers again/, 30_000);

      // 2. The worker is killed (SIGKILL) while the steps the outage interrupted run again.
      const killed = worker.child.process.pid!;
      // (started again: a step put back is a new job, its task still running; one that still has its first job has not been put back yet)
      const startedAgain = (t: Row) => t.state === 'running' && t.lease_owner?.startsWith(`${killed}-`) && t.job_id !== first.find((f) => f.id === t.id)!.job_id;
      await pollUntil(() => rows(delayed), (r) => r.some(startedAgain), { intervalMs: 100, timeoutMs: 30_000, what: 'an interrupted task to run again' }).catch(async (err: Error) => {
        throw await explain(err, all);
      });
      worker.child.process.kill('SIGKILL');
      expect((await worker.child.exited).signal).toBe('SIGKILL');
      // what it held when it died (nothing runs workers now: the API instance does not sweep, so these rows stay as it left them)
      const held = (await rows(all)).filter((t) => t.state === 'running' && t.lease_owner?.startsWith(`${killed}-`));
      expect(held.length).toBeGreaterThan(0);
      worker = await start('worker');
      workers.push(worker);
      await worker.ready;

      const final = await pollUntil(() => rows(all), (r) => r.every((t) => t.state === 'succeeded' || t.state === 'failed'), { timeoutMs: 60_000, what: 'every task to end' }).catch(async (err: Error) => {
        throw await explain(err, all);
      });
      expect(final.map((t) => [t.kind, t.state])).toEqual([
        ['music', 'succeeded'],
        ['lyrics', 'succeeded'],
        ['stems', 'succeeded'],
        ['stems', 'succeeded'],
        ['wav', 'succeeded'],
      ]);
      // the tasks the worker held when it died were started again by the new one
      for (const { id, attempts } of held) expect([id, final.find((t) => t.id === id)!.attempts > attempts]).toEqual([id, true]);
      // nothing was made of the refused request
      const [{ n: tasks }] = await queryDb<{ n: number }>(db, 'SELECT count(*)::int AS n FROM tasks');
      expect(tasks).toBe(all.length);

      // lyrics: written, as its door words it
      const lyrics = await fetchTask(ids.lyrics);
      expect([lyrics.action, lyrics.status, lyrics.fail_reason, lyrics.data.status]).toEqual(['LYRICS', 'SUCCESS', '', 'complete']);
      expect(lyrics.data.text).toMatch(/\[Verse\]/);

      // stems: exactly their stems, one clip (type stem, made from the take) and one stored file each
      const clipRows = await queryDb<{ task_id: string; type: string; title: string; idx: number }>(db, 'SELECT task_id, type, title, idx FROM clips WHERE task_id = ANY($1::uuid[]) ORDER BY task_id, idx', [[ids.two, ids.all]]);
      const mediaRows = await queryDb<{ task_id: string; role: string; index: number }>(db, 'SELECT task_id, role, index FROM media WHERE task_id = ANY($1::uuid[]) ORDER BY task_id, index', [[ids.two, ids.all]]);
      const song0 = await decodeMono(Buffer.from(await (await fetch(take.audio_url)).arrayBuffer()));
      for (const split of ['two', 'all'] as const) {
        const id = ids[split];
        const task = await fetchTask(id);
        expect([split, task.action, task.status, task.fail_reason]).toEqual([split, 'STEMS', 'SUCCESS', '']);
        expect(task.data.map((c: any) => [c.title, c.metadata.type, c.metadata.stem_of])).toEqual(STEMS[split].map((name) => [name, 'stem', take.id]));
        expect(clipRows.filter((c) => c.task_id === id).map((c) => [c.idx, c.type, c.title])).toEqual(STEMS[split].map((name, i) => [i, 'stem', name]));
        expect(mediaRows.filter((m) => m.task_id === id).map((m) => [m.role, m.index])).toEqual(STEMS[split].map((_, i) => ['clip', i]));
        const detail = (await api(base, 'GET', `/tasks/${id}`, { key })).body;
        expect([detail.state, detail.clips.length, detail.media.length]).toEqual(['succeeded', STEMS[split].length, STEMS[split].length]);
        // every stem decodes, and together they are the song: the stems of one run of the step, not a mix of two
        const stems = await Promise.all(task.data.map(async (c: any) => decodeMono(Buffer.from(await (await fetch(c.audio_url)).arrayBuffer()))));
        const n = Math.min(song0.length, ...stems.map((s) => s.length));
        expect(n).toBeGreaterThan((TAKE_S - 0.1) * 44_100);
        const sum = new Float32Array(n).map((_, i) => stems.reduce((acc, s) => acc + s[i], 0));
        expect([split, correlation(sum, song0.subarray(0, n)) > 0.99]).toEqual([split, true]);
      }
      // no stem clip from any other run: the song's takes and these stems are every clip there is
      const [{ n: clips }] = await queryDb<{ n: number }>(db, 'SELECT count(*)::int AS n FROM clips');
      expect(clips).toBe(song.data.length + STEMS.two.length + STEMS.all.length);

      // the WAV: its record SUCCESS, one stored file, the take's own samples
      const record = (await api(base, 'GET', `/sunoapi/api/v1/wav/record-info?taskId=${ids.wav}`, { key })).body;
      expect([record.code, record.data.successFlag, record.data.musicId]).toEqual([200, 'SUCCESS', take.id]);
      const wav = Buffer.from(await (await fetch(record.data.response.audioWavUrl)).arrayBuffer());
      expect([wav.toString('latin1', 0, 4), wav.toString('latin1', 8, 12)]).toEqual(['RIFF', 'WAVE']);
      const fromMp3 = await decodeS16(Buffer.from(await (await fetch(take.audio_url)).arrayBuffer()), 'mp3');
      expect(fromMp3.length).toBeGreaterThan((TAKE_S - 0.1) * 44_100 * 2);
      expect((await decodeS16(wav, 'wav')).equals(fromMp3)).toBe(true);
      const [{ n: wavFiles }] = await queryDb<{ n: number }>(db, 'SELECT count(*)::int AS n FROM media WHERE task_id = $1::uuid', [ids.wav]);
      expect(wavFiles).toBe(1);

      // charged once each: its price on its row and in GET /tasks/{id}, and the month's total is their sum
      const price = (kind: string) => PRICES[kind as keyof typeof PRICES];
      expect(final.map((t) => [t.kind, t.credits])).toEqual(final.map((t) => [t.kind, price(t.kind)]));
      for (const t of final) expect([t.kind, (await api(base, 'GET', `/tasks/${t.id}`, { key })).body.credits]).toEqual([t.kind, price(t.kind)]);
      const total = final.reduce((sum, t) => sum + price(t.kind), 0);
      expect((await api(base, 'GET', '/usage', { key })).body.credits.used).toBe(total);

      expectAlive(apiProcess.child, 'api');
      expectAlive(worker.child, 'the new worker');
    } finally {
      for (const p of [apiProcess, ...workers]) await p.child.stop('SIGTERM').catch(() => p.child.stop('SIGKILL'));
      await pg.destroy();
      await rm(dataDir, { recursive: true, force: true });
    }
    // about 25 s of work on a quiet machine; 117 s was seen beside the full suite (six files on two cores)
  }, 300_000);
});
