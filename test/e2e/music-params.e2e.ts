import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { pollUntil } from '../support/poll.js';
import { api, createTestDatabase, queryDb, startTestApp, type TestApp, type TestDatabase } from '../support/test-app.js';

/** The migration that renamed music's and concat's parameters into the gateway's own words. */
const MUSIC_PARAMS_MIGRATION = '20261130000000_music_params';

/**
 * Music's parameters document is the gateway's own (lyrics, description, style, avoid_style, model,
 * instrumental, continues), not the Suno-style door's request. Tasks accepted before the change were stored
 * in the door's names: an upgrade rewrites them, and a song, its join and a continuation waiting in the queue
 * read as they did and run to the end. Their old shape is written here with SQL, as the old code wrote it.
 */
describe("music's parameters in the gateway's own words", () => {
  let db: TestDatabase;
  let dataDir: string;
  let t: TestApp | undefined;
  let key: string;
  const env = () => ({ DATA_DIR: dataDir, MUSIC_SANDBOX_DURATION_S: '3' });
  beforeAll(async () => {
    db = await createTestDatabase({ migrated: true });
    dataDir = await mkdtemp(path.join(tmpdir(), 'mgw-music-params-'));
  });
  afterAll(async () => {
    await t?.close();
    await db.drop();
    await rm(dataDir, { recursive: true, force: true });
  });

  const submit = async (route: string, body: unknown): Promise<string> => {
    const res = await api(t!.url, 'POST', route, { key, body });
    expect([route, res.status, res.body.code, res.body.message]).toEqual([route, 200, 'success', res.body.message]);
    return res.body.data;
  };
  const fetchOne = async (id: string) => (await api(t!.url, 'GET', `/music-a/fetch/${id}`, { key })).body.data;
  const ended = (id: string) => pollUntil(() => fetchOne(id), (d) => d.status === 'SUCCESS' || d.status === 'FAILURE', { timeoutMs: 60_000, what: `task ${id} to end` });
  /** What a caller reads of a song's clips that comes from its parameters. */
  const described = (task: any) => task.data.map((c: any) => ({ id: c.id, title: c.title, model_name: c.model_name, tags: c.metadata.tags, prompt: c.metadata.prompt, gpt_description_prompt: c.metadata.gpt_description_prompt, negative_tags: c.metadata.negative_tags, continue_clip_id: c.metadata.continue_clip_id, continue_at: c.metadata.continue_at }));

  it('stores a song in its own words, and an upgrade rewrites songs, joins and queued continuations stored in the door\'s names, which then read and run as before', async () => {
    t = await startTestApp(env(), { db });
    key = await t.createKey('team-songs');
    const songId = await submit('/music-a/submit/music', { prompt: '[Verse] waves', tags: 'ambient', negative_tags: 'metal', title: 'Sea', mv: 'chirp-auk', make_instrumental: false });
    const song = await ended(songId);
    expect(song.status).toBe('SUCCESS');
    const [stored] = await queryDb<{ params: any }>(db, 'SELECT params FROM tasks WHERE id = $1', [songId]);
    expect(stored.params).toEqual({ lyrics: '[Verse] waves', description: null, style: 'ambient', avoid_style: 'metal', title: 'Sea', model: 'chirp-auk', instrumental: false, clip_ids: song.data.map((c: any) => c.id), continues: null });
    const joinId = await submit('/music-a/submit/concat', { clip_ids: [song.data[0].id, song.data[1].id] });
    const join = await ended(joinId);
    expect(join.status).toBe('SUCCESS');
    const before = { song: described(song), join: described(join) };
    await t.close();

    // a continuation accepted by an instance without workers: it waits in the queue through the upgrade
    t = await startTestApp({ ...env(), ROLE: 'api' }, { db });
    const continuationId = await submit('/music-a/submit/music', { continue_clip_id: song.data[1].id, continue_at: 2, gpt_description_prompt: 'a calmer end', tags: 'lofi', mv: 'chirp-auk' });
    const [queued] = await queryDb<{ params: any }>(db, 'SELECT params FROM tasks WHERE id = $1', [continuationId]);
    expect(queued.params.continues).toEqual({ clip_id: song.data[1].id, at_s: 2, from_upload: false, upstream_clip_id: null, channel_id: null });
    await t.close();
    t = undefined;

    // the rows as the code before the change wrote them (the door's names), and the migration not yet applied
    await queryDb(
      db,
      `UPDATE tasks SET params = jsonb_build_object(
         'prompt', params->'lyrics', 'gpt_description_prompt', params->'description', 'tags', params->'style',
         'negative_tags', params->'avoid_style', 'title', params->'title', 'mv', params->'model',
         'make_instrumental', params->'instrumental', 'clip_ids', params->'clip_ids',
         'continue_clip_id', COALESCE(params->'continues'->'clip_id', 'null'), 'continue_at', COALESCE(params->'continues'->'at_s', 'null'),
         'task', CASE WHEN params->'continues' = 'null' THEN 'null'::jsonb WHEN (params->'continues'->>'from_upload')::boolean THEN '"upload_extend"' ELSE '"extend"' END,
         'continue_upstream_id', COALESCE(params->'continues'->'upstream_clip_id', 'null'), 'continue_channel_id', COALESCE(params->'continues'->'channel_id', 'null'))
       WHERE kind = 'music'`,
    );
    await queryDb(db, `UPDATE tasks SET params = (params - 'style' - 'lyrics' - 'model') || jsonb_build_object('tags', params->'style', 'prompt', params->'lyrics', 'mv', params->'model') WHERE kind = 'concat'`);
    const old = await queryDb<{ id: string; params: any }>(db, "SELECT id, params FROM tasks WHERE kind IN ('music', 'concat') ORDER BY created_at");
    expect(old.map((r) => [r.id, Object.keys(r.params).sort()])).toEqual([
      [songId, ['clip_ids', 'continue_at', 'continue_channel_id', 'continue_clip_id', 'continue_upstream_id', 'gpt_description_prompt', 'make_instrumental', 'mv', 'negative_tags', 'prompt', 'tags', 'task', 'title']],
      [joinId, expect.arrayContaining(['mv', 'prompt', 'tags', 'title'])],
      [continuationId, expect.arrayContaining(['continue_clip_id', 'mv', 'task'])],
    ]);
    await queryDb(db, 'DELETE FROM _prisma_migrations WHERE migration_name = $1', [MUSIC_PARAMS_MIGRATION]);

    // the upgrade: the instance applies the migration at its start
    t = await startTestApp(env(), { db });
    const rewritten = await queryDb<{ id: string; params: any }>(db, "SELECT id, params FROM tasks WHERE kind IN ('music', 'concat') ORDER BY created_at");
    expect(rewritten[0].params).toEqual(stored.params);
    expect(Object.keys(rewritten[1].params)).toEqual(expect.arrayContaining(['style', 'lyrics', 'model', 'title']));
    expect(Object.keys(rewritten[1].params)).not.toEqual(expect.arrayContaining(['tags']));
    expect({ song: described(await fetchOne(songId)), join: described(await fetchOne(joinId)) }).toEqual(before);
    const continuation = await ended(continuationId);
    expect(continuation.status).toBe('SUCCESS');
    expect(described(continuation)).toEqual(
      [0, 1].map(() => expect.objectContaining({ model_name: 'chirp-auk', tags: 'lofi', gpt_description_prompt: 'a calmer end', prompt: expect.stringMatching(/^\[Verse\]\n[\s\S]*calmer/), continue_clip_id: song.data[1].id, continue_at: 2 })),
    );
  }, 180_000);
});
