import { execFile } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { api, startTestApp, type TestApp } from '../support/test-app.js';

const run = promisify(execFile);
const bin = (name: string) => path.resolve('node_modules/.bin', name);

/** A program a team would write against a client generated from our document: no casts, no `any`. */
const PROGRAM = `
import { createClient } from './client/client/index.js';
import { createExpandTask, createGeneration, getGeneration, uploadAudioUrl } from './client/sdk.gen.js';
import type { GenerationDetailDto } from './client/types.gen.js';

const [baseUrl, key, image, clip] = process.argv.slice(2);
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
process.stdout.write(JSON.stringify({ taskId, taskStatus: expand.data.data.task_status, generationId, state: generation.state, end: generation.media_request.end, clipId, missingStatus: missing.response.status, missingCode: missing.error?.code }));
`;

describe('a TypeScript client generated from the OpenAPI document (@hey-api/openapi-ts)', () => {
  let t: TestApp;
  let dir: string;
  beforeAll(async () => {
    t = await startTestApp();
    dir = await mkdtemp(path.join(tmpdir(), 'mgw-client-'));
  });
  afterAll(async () => {
    await t.close();
    await rm(dir, { recursive: true, force: true });
  });

  it('compiles with tsc --strict and calls the three operations and a query against the real app', async () => {
    const doc = (await api(t.url, 'GET', '/docs-json')).body;
    await writeFile(path.join(dir, 'openapi.json'), JSON.stringify(doc));
    await run(bin('openapi-ts'), ['-i', path.join(dir, 'openapi.json'), '-o', path.join(dir, 'client'), '-c', '@hey-api/client-fetch', '--no-log-file', '-s'], { timeout: 60_000 });
    await writeFile(path.join(dir, 'program.ts'), PROGRAM);
    await writeFile(path.join(dir, 'package.json'), JSON.stringify({ type: 'module' }));
    await writeFile(
      path.join(dir, 'tsconfig.json'),
      JSON.stringify({ compilerOptions: { strict: true, target: 'ES2022', module: 'nodenext', moduleResolution: 'nodenext', lib: ['ES2022', 'DOM'], typeRoots: [path.resolve('node_modules/@types')], types: ['node'], skipLibCheck: true, outDir: 'out' }, include: ['program.ts', 'client'] }),
    );
    // a type error fails here, with tsc's words
    await run(process.execPath, [path.resolve('node_modules/typescript/bin/tsc'), '-p', dir], { timeout: 120_000 }).catch((err: { stdout?: string }) => {
      throw new Error(`the generated client and program do not compile:\n${err.stdout}`);
    });
    const key = await t.createKey('generated');
    const { stdout } = await run(process.execPath, [path.join(dir, 'out', 'program.js'), t.url, key, `${t.url}/samples/photo.png`, `${t.url}/samples/clip.wav`], { timeout: 30_000 });
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
    });
  }, 180_000);
});
