import { execFile } from 'node:child_process';
import { copyFile, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { api, startTestApp, type TestApp } from '../support/test-app.js';

const run = promisify(execFile);
const bin = (name: string) => path.resolve('node_modules/.bin', name);

/** How long the program waits for its song to end (the app composes 3 s takes: it takes a second or two). */
const SONG_DEADLINE_MS = 30_000;

/**
 * A program a team would write against a client generated from our document: no casts, no `any`.
 * It polls its song with the suite's own pollUntil (test/support/poll.ts, copied beside it and compiled
 * with it): a deadline, no fixed sleeps; a song still unfinished at the deadline fails the run with its last state.
 */
const PROGRAM = `
import { createClient } from './client/client/index.js';
import { createExpandTask, createGeneration, fetchMusicTask, fetchMusicTasks, getGeneration, submitMusic, uploadAudioUrl } from './client/sdk.gen.js';
import type { GenerationDetailDto, MusicTaskDto } from './client/types.gen.js';
import { pollUntil } from './poll.js';

const [baseUrl, key, image, clip, songDeadlineMs] = process.argv.slice(2);
const client = createClient({ baseUrl, auth: () => key });

const expand = await createExpandTask({ client, throwOnError: true, body: { image, up_expansion_ratio: 0.1, bottom_expansion_ratio: 0.1, left_expansion_ratio: 0.1, right_expansion_ratio: 0.1, n: '2' } });
const taskId: string = expand.data.data.task_id;
const video = await createGeneration({ client, throwOnError: true, body: { prompt: 'A windmill turning slowly', aspect_ratio: '4:3', duration: '5s' } });
const generationId: string = video.data.id;
const audio = await uploadAudioUrl({ client, throwOnError: true, body: { url: clip } });
const clipId: string = audio.data.data;
const read = await getGeneration({ client, throwOnError: true, path: { id: generationId } });
const generation: GenerationDetailDto = read.data;
const missing = await getGeneration({ client, path: { id: '00000000-0000-4000-8000-000000000000' } });

const song = await submitMusic({ client, throwOnError: true, body: { prompt: '[Verse]\\nA windmill on the hill\\n[Chorus]\\nTurning slow', tags: 'lo-fi, piano', title: 'Windmill', mv: 'chirp-v4' } });
const songId: string = song.data.data;
const statuses: MusicTaskDto['status'][] = [];
const readSong = async (): Promise<MusicTaskDto> => {
  // the fetch answers music and lyrics tasks alike: its action tells them apart
  const task = (await fetchMusicTask({ client, throwOnError: true, path: { task_id: songId } })).data.data;
  if (task.action === 'LYRICS') throw new Error(\`task \${songId} is a lyrics task\`);
  if (statuses.at(-1) !== task.status) statuses.push(task.status);
  return task;
};
const ended = await pollUntil(readSong, (task) => task.status === 'SUCCESS' || task.status === 'FAILURE', { timeoutMs: Number(songDeadlineMs), what: \`song \${songId} to end\` });
const listed = await fetchMusicTasks({ client, throwOnError: true, body: { ids: [songId] } });
const music = {
  songId,
  codes: [song.data.code, listed.data.code],
  task: { task_id: ended.task_id, action: ended.action, status: ended.status, fail_reason: ended.fail_reason, statuses },
  clips: ended.data.map((c) => ({ status: c.status, audio_url: c.audio_url, duration: c.metadata.duration })),
  listed: listed.data.data.map((t) => ({ task_id: t.task_id, status: t.status, clips: Array.isArray(t.data) ? t.data.length : 0 })),
};
process.stdout.write(JSON.stringify({ taskId, taskStatus: expand.data.data.task_status, generationId, state: generation.state, end: generation.media_request.end, clipId, missingStatus: missing.response.status, missingCode: missing.error?.code, music }));
`;

describe('a TypeScript client generated from the OpenAPI document (@hey-api/openapi-ts)', () => {
  let t: TestApp;
  let dir: string;
  beforeAll(async () => {
    t = await startTestApp({ MUSIC_SANDBOX_DURATION_S: '3' });
    dir = await mkdtemp(path.join(tmpdir(), 'mgw-client-'));
  });
  afterAll(async () => {
    await t.close();
    await rm(dir, { recursive: true, force: true });
  });

  it('compiles with tsc --strict and calls the operations and queries against the real app, a new song polled to SUCCESS', async () => {
    const doc = (await api(t.url, 'GET', '/docs-json')).body;
    await writeFile(path.join(dir, 'openapi.json'), JSON.stringify(doc));
    await run(bin('openapi-ts'), ['-i', path.join(dir, 'openapi.json'), '-o', path.join(dir, 'client'), '-c', '@hey-api/client-fetch', '--no-log-file', '-s'], { timeout: 60_000 });
    await writeFile(path.join(dir, 'program.ts'), PROGRAM);
    await copyFile(path.resolve('test/support/poll.ts'), path.join(dir, 'poll.ts'));
    await writeFile(path.join(dir, 'package.json'), JSON.stringify({ type: 'module' }));
    await writeFile(
      path.join(dir, 'tsconfig.json'),
      JSON.stringify({ compilerOptions: { strict: true, target: 'ES2022', module: 'nodenext', moduleResolution: 'nodenext', lib: ['ES2022', 'DOM'], typeRoots: [path.resolve('node_modules/@types')], types: ['node'], skipLibCheck: true, outDir: 'out' }, include: ['program.ts', 'poll.ts', 'client'] }),
    );
    // a type error fails here, with tsc's words
    await run(process.execPath, [path.resolve('node_modules/typescript/bin/tsc'), '-p', dir], { timeout: 120_000 }).catch((err: { stdout?: string }) => {
      throw new Error(`the generated client and program do not compile:\n${err.stdout}`);
    });
    const key = await t.createKey('generated');
    // a song that does not end by its deadline fails here, with pollUntil's words (its last state) on stderr
    const { stdout } = await run(process.execPath, [path.join(dir, 'out', 'program.js'), t.url, key, `${t.url}/samples/photo.png`, `${t.url}/samples/clip.wav`, String(SONG_DEADLINE_MS)], {
      timeout: SONG_DEADLINE_MS + 30_000,
    }).catch((err: { message?: string; stderr?: string }) => {
      throw new Error(`the program failed:\n${err.stderr || err.message}`);
    });
    const result = JSON.parse(stdout);
    expect(result).toEqual({
      taskId: expect.stringMatching(/^[0-9a-f-]{36}$/),
      taskStatus: 'submitted',
      generationId: expect.stringMatching(/^[0-9a-f-]{36}$/),
      state: expect.stringMatching(/^(pending|dreaming|completed)$/),
      end: null,
      clipId: expect.stringMatching(/^[0-9a-f-]{36}$/),
      missingStatus: 404,
      missingCode: 1203,
      music: {
        songId: expect.stringMatching(/^[0-9a-f-]{36}$/),
        codes: ['success', 'success'],
        task: { task_id: result.music.songId, action: 'MUSIC', status: 'SUCCESS', fail_reason: '', statuses: expect.any(Array) },
        clips: [expect.anything(), expect.anything()],
        listed: [{ task_id: result.music.songId, status: 'SUCCESS', clips: 2 }],
      },
    });
    // the statuses the program saw, in order, end at SUCCESS and are all documented ones on the way there
    expect(result.music.task.statuses.at(-1)).toBe('SUCCESS');
    expect(result.music.task.statuses.filter((s: string) => !['SUBMITTED', 'QUEUED', 'IN_PROGRESS', 'SUCCESS'].includes(s))).toEqual([]);
    for (const clip of result.music.clips) {
      expect(clip).toEqual({ status: 'complete', audio_url: expect.stringMatching(/^https?:\/\//), duration: expect.any(Number) });
      expect(clip.duration).toBeGreaterThan(0);
      const mp3 = await fetch(clip.audio_url);
      expect([mp3.status, mp3.headers.get('content-type')]).toEqual([200, expect.stringMatching(/^audio\/mpeg/)]);
      expect((await mp3.arrayBuffer()).byteLength).toBeGreaterThan(1000);
    }
  }, 180_000);
});
