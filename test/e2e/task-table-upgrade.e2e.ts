import { cp, mkdtemp, readdir, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import PgBoss from 'pg-boss';
import { applyMigrations, MIGRATIONS_DIR } from '../../src/infra/database/migrator.js';
import { png } from '../support/images.js';
import { pollUntil } from '../support/poll.js';
import { api, createTestDatabase, queryDb as sql, startTestApp, type TestApp, type TestDatabase } from '../support/test-app.js';

const quiet = { info: () => undefined, warn: () => undefined };
/** The migration that moved the three task tables into one. */
const ENGINE_MIGRATION = '20261123000000_task_engine';
const OWNER = 'team-old';
const ids = {
  expandQueued: '11111111-1111-4111-8111-111111111111',
  expandDone: '22222222-2222-4222-8222-222222222222',
  expandFailed: '33333333-3333-4333-8333-333333333333',
  videoPending: '44444444-4444-4444-8444-444444444444',
  videoDeleted: '55555555-5555-4555-8555-555555555555',
  audioReady: '66666666-6666-4666-8666-666666666666',
  keyframe: '77777777-7777-4777-8777-777777777777',
  media: '88888888-8888-4888-8888-888888888888',
  delivery: '99999999-9999-4999-8999-999999999999',
};

/**
 * A deployment running the three task tables upgrades in place: the migration moves every row into the
 * one task table with its id, so its media, callback deliveries, usage and queued jobs still point at
 * it, and the new engine finishes what was waiting.
 */
describe('upgrading a database of the three task tables to the task engine', () => {
  let db: TestDatabase;
  let t: TestApp;
  let key: string;

  beforeAll(async () => {
    db = await createTestDatabase();
    const before = await mkdtemp(path.join(tmpdir(), 'mgw-migrations-'));
    try {
      for (const name of (await readdir(MIGRATIONS_DIR)).filter((n) => n < ENGINE_MIGRATION)) await cp(path.join(MIGRATIONS_DIR, name), path.join(before, name), { recursive: true });
      await applyMigrations(db.url, quiet, before);
    } finally {
      await rm(before, { recursive: true, force: true });
    }
    // the old service's queue, with the jobs it had sent (video and audio jobs named their ids otherwise)
    const boss = new PgBoss({ connectionString: db.url, schema: 'pgboss', supervise: false, schedule: false });
    await boss.start();
    for (const name of ['expand.run', 'video.run', 'audio.run']) await boss.createQueue(name, { name, retryLimit: 5, expireInSeconds: 3600 });
    const expandJob = await boss.send('expand.run', { taskId: ids.expandQueued });
    const videoJob = await boss.send('video.run', { generationId: ids.videoPending });
    await boss.stop({ graceful: false, close: true });

    const image = await png(320, 320);
    await sql(
      db,
      `INSERT INTO expand_tasks (id, owner, external_task_id, status, status_message, image_format, image_width, image_height, up_ratio, bottom_ratio, left_ratio, right_ratio, prompt, n,
         callback_url, watermark, base_url, created_at, updated_at, deadline_at, finished_at, attempts, slots, credits, started_at, job_id)
       VALUES ($1, $4, 'old-queued', 'submitted', NULL, 'png', 320, 320, 0.1, 0.2, 0.1, 0.1, 'a meadow', 2, NULL, false, NULL, now(), now(), now() + interval '10 minutes', NULL, 0, 2, 2, NULL, $5),
              ($2, $4, 'old-done', 'succeed', NULL, 'png', 320, 320, 0.1, 0.1, 0.1, 0.1, NULL, 1, 'https://example.com/hook', true, 'http://old.example', now(), now(), now(), now(), 1, 1, 1, now(), NULL),
              ($3, $4, NULL, 'failed', 'the upstream refused the task', NULL, NULL, NULL, 0.1, 0.1, 0.1, 0.1, NULL, 3, NULL, false, NULL, now(), now(), now(), now(), 1, 3, 3, now(), NULL)`,
      [ids.expandQueued, ids.expandDone, ids.expandFailed, OWNER, expandJob],
    );
    await sql(db, 'INSERT INTO expand_inputs (task_id, bytes) VALUES ($1, $2)', [ids.expandQueued, image]);
    await sql(
      db,
      `INSERT INTO media (id, owner, task_id, role, index, content_type, size_bytes, width, height, driver, storage_key) VALUES ($1, $2, $3, 'image', 0, 'image/png', $4, 384, 384, 'postgres', $5)`,
      [ids.media, OWNER, ids.expandDone, image.length, `${ids.expandDone}/image-0.png`],
    );
    await sql(db, 'INSERT INTO media_blobs (key, bytes) VALUES ($1, $2)', [`${ids.expandDone}/image-0.png`, image]);
    await sql(
      db,
      `INSERT INTO callback_deliveries (id, owner, task_kind, task_id, sequence, status, url, payload, state, attempts) VALUES ($1, $2, 'expand', $3, 1, 'succeed', 'https://example.com/hook', '{}', 'delivered', 1)`,
      [ids.delivery, OWNER, ids.expandDone],
    );
    await sql(
      db,
      `INSERT INTO video_generations (id, owner, state, failure_reason, prompt, aspect_ratio, loop, enhance, model, resolution, duration, concepts, created_at, updated_at, deadline_at, slots, credits, job_id, deleted_at, finished_at)
       VALUES ($1, $3, 'pending', NULL, 'clouds over hills', '4:3', true, true, 'ray-2', NULL, '5s', '[{"key": "dolly_zoom"}]', now(), now(), now() + interval '30 minutes', 1, 5, $4, NULL, NULL),
              ($2, $3, 'completed', NULL, 'gone', '16:9', false, true, 'ray-2', NULL, NULL, NULL, now(), now(), now(), 1, 5, NULL, now(), now())`,
      [ids.videoPending, ids.videoDeleted, OWNER, videoJob],
    );
    await sql(db, `INSERT INTO video_keyframes (id, generation_id, position, kind, url) VALUES ($1, $2, 'frame0', 'image', $3)`, [ids.keyframe, ids.videoPending, 'https://example.com/f0.jpg']);
    await sql(
      db,
      `INSERT INTO audio_uploads (id, owner, url, status, format, duration, size_bytes, sha256, created_at, updated_at, deadline_at, finished_at, slots, credits)
       VALUES ($1, $2, 'https://example.com/clip.mp3', 'ready', 'mp3', 12.5, 204800, $3, now(), now(), now(), now(), 1, 1)`,
      [ids.audioReady, OWNER, 'a'.repeat(64)],
    );
    await sql(db, `INSERT INTO owner_counters (owner, active_slots, credits_month, credits_used) VALUES ($1, 3, to_char(now() AT TIME ZONE 'UTC', 'YYYY-MM'), 14)`, [OWNER]);
    expect(await applyMigrations(db.url, quiet)).toContain(ENGINE_MIGRATION);

    // the keyframe URL is not reachable here: the generation's job must still run, and fail with the reason
    t = await startTestApp({ STORAGE_DRIVER: 'postgres', WORKER_LEASE_S: '3' }, { db });
    key = await t.createKey(OWNER);
  }, 120_000);
  afterAll(async () => {
    await t?.close();
    await db.drop();
  });

  it('leaves one task table: every row moved, with its id, kind, normalized state and documents', async () => {
    const tables = await sql<{ t: string }>(db, "SELECT tablename AS t FROM pg_tables WHERE schemaname = 'public' AND tablename IN ('expand_tasks', 'video_generations', 'audio_uploads', 'video_keyframes')");
    expect(tables).toEqual([]);
    const rows = await sql<{ id: string; kind: string; state: string; external_id: string | null; deleted: boolean }>(
      db,
      'SELECT id, kind, state, external_id, deleted_at IS NOT NULL AS deleted FROM tasks WHERE owner = $1 ORDER BY id',
      [OWNER],
    );
    expect(rows.map((r) => [r.id, r.kind, r.deleted])).toEqual([
      [ids.expandQueued, 'expand', false],
      [ids.expandDone, 'expand', false],
      [ids.expandFailed, 'expand', false],
      [ids.videoPending, 'video', false],
      [ids.videoDeleted, 'video', true],
      [ids.audioReady, 'audio', false],
    ]);
    const [audio] = await sql<{ state: string; params: unknown; result: unknown }>(db, 'SELECT state, params, result FROM tasks WHERE id = $1', [ids.audioReady]);
    expect(audio).toEqual({ state: 'succeeded', params: { url: 'https://example.com/clip.mp3' }, result: { format: 'mp3', duration: 12.5, size_bytes: 204800, sha256: 'a'.repeat(64) } });
  });

  it('answers the old records through the API as before: state names, parameters, media links, deliveries', async () => {
    const done = await api(t.url, 'GET', `/video-a/v1/images/editing/expand/old-done`, { key });
    expect(done.body.data).toEqual(
      expect.objectContaining({ task_id: ids.expandDone, task_status: 'succeed', watermark_info: { enabled: true }, final_unit_deduction: '1', task_info: { external_task_id: 'old-done' } }),
    );
    expect(done.body.data.task_result.images[0].url).toMatch(new RegExp(`^http://old\\.example/media/${ids.media}\\?`));
    const link = new URL(done.body.data.task_result.images[0].url);
    const file = await fetch(`${t.url}${link.pathname}${link.search}`);
    expect([file.status, file.headers.get('content-type')]).toEqual([200, 'image/png']);

    const failed = await api(t.url, 'GET', `/video-a/v1/images/editing/expand/${ids.expandFailed}`, { key });
    expect([failed.body.data.task_status, failed.body.data.task_status_msg, failed.body.data.final_unit_deduction]).toEqual(['failed', 'the upstream refused the task', '0']);

    const deliveries = await api(t.url, 'GET', `/video-a/v1/images/editing/expand/${ids.expandDone}/callbacks`, { key });
    expect(deliveries.body.data.map((d: { id: string; state: string }) => [d.id, d.state])).toEqual([[ids.delivery, 'delivered']]);

    const upload = await api(t.url, 'GET', `/music-a/uploads/${ids.audioReady}`, { key });
    expect(upload.body.data).toEqual(expect.objectContaining({ status: 'ready', format: 'mp3', duration: 12.5, size_bytes: 204800, sha256: 'a'.repeat(64) }));
    // …and it is a clip music can continue: its id, type upload, its duration
    const asClip = await api(t.url, 'GET', `/music-a/fetch/${ids.audioReady}`, { key });
    expect([asClip.body.data.action, asClip.body.data.status, asClip.body.data.data]).toEqual(['UPLOAD', 'SUCCESS', [expect.objectContaining({ id: ids.audioReady, status: 'complete' })]]);
    expect(asClip.body.data.data[0].metadata).toEqual(expect.objectContaining({ type: 'upload', duration: 12.5 }));

    expect((await api(t.url, 'GET', `/video-b/v1/generations/${ids.videoDeleted}`, { key })).status).toBe(404);
  });

  it("runs the waiting tasks to the end from the old jobs: the expand from its stored image, the video's job read in its new form", async () => {
    const expand = await pollUntil(() => api(t.url, 'GET', `/video-a/v1/images/editing/expand/${ids.expandQueued}`, { key }), (r) => ['succeed', 'failed'].includes(r.body.data.task_status), {
      timeoutMs: 30_000,
      what: 'the migrated expand task to finish',
    });
    expect(expand.body.data.task_status).toBe('succeed');
    expect(expand.body.data.task_result.images).toHaveLength(2);
    expect(expand.body.data.task_result.images[0]).toEqual({ index: 0, url: expect.any(String) });

    const video = await pollUntil(() => api(t.url, 'GET', `/video-b/v1/generations/${ids.videoPending}`, { key }), (r) => ['completed', 'failed'].includes(r.body.state), {
      timeoutMs: 30_000,
      what: 'the migrated generation to finish',
    });
    // it ran: its keyframe URL (an outside address) is refused by the outbound rules, and says so
    expect([video.body.state, video.body.failure_reason]).toEqual(['failed', expect.stringMatching(/^could not fetch keyframes\.frame0\.url/)]);
    expect(video.body.request).toEqual(expect.objectContaining({ prompt: 'clouds over hills', aspect_ratio: '4:3', loop: true, duration: '5s', concepts: [{ key: 'dolly_zoom' }], keyframes: { frame0: { type: 'image', url: 'https://example.com/f0.jpg' } } }));
    expect(video.body.media_request.start).toEqual({ id: ids.keyframe, media_type: null, thumbnail: null, type: 'upload' });
  });

  it('keeps usage and the owner counters: both ended, their slots given back once, the failed video refunded', async () => {
    await pollUntil(() => sql<{ n: number }>(db, "SELECT count(*)::int AS n FROM tasks WHERE owner = $1 AND state IN ('queued', 'running')", [OWNER]), (r) => r[0].n === 0, { what: 'nothing left running' });
    const usage = await api(t.url, 'GET', '/usage', { key });
    expect(usage.body.operations).toEqual({
      expand: { accepted: 3, succeeded: 2, failed: 1, credits_charged: 6, credits_refunded: 3 },
      video: { accepted: 2, succeeded: 1, failed: 1, credits_charged: 10, credits_refunded: 5 },
      audio: { accepted: 1, succeeded: 1, failed: 0, credits_charged: 1, credits_refunded: 0 },
      music: { accepted: 0, succeeded: 0, failed: 0, credits_charged: 0, credits_refunded: 0 },
      concat: { accepted: 0, succeeded: 0, failed: 0, credits_charged: 0, credits_refunded: 0 },
      image: { accepted: 0, succeeded: 0, failed: 0, credits_charged: 0, credits_refunded: 0 },
      speech: { accepted: 0, succeeded: 0, failed: 0, credits_charged: 0, credits_refunded: 0 },
      lyrics: { accepted: 0, succeeded: 0, failed: 0, credits_charged: 0, credits_refunded: 0 },
      stems: { accepted: 0, succeeded: 0, failed: 0, credits_charged: 0, credits_refunded: 0 },
      wav: { accepted: 0, succeeded: 0, failed: 0, credits_charged: 0, credits_refunded: 0 },
    });
    const [counters] = await sql<{ active_slots: number; credits_used: number }>(db, 'SELECT active_slots, credits_used FROM owner_counters WHERE owner = $1', [OWNER]);
    // the 3 slots the two waiting tasks held came back; the failed video's 5 credits were refunded
    expect(counters).toEqual({ active_slots: 0, credits_used: 9 });
  });
});
