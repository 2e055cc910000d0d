import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { EXAMPLE_BASE } from '../../src/common/swagger/samples.js';
import { ADMIN_KEY_SCHEME, API_KEY_SCHEME, ELEVENLABS_KEY_SCHEME, METRICS_TOKEN_SCHEME } from '../../src/common/swagger/security-schemes.js';
import { LUMA_UNSUPPORTED } from '../../src/doors/luma/luma-unsupported.controller.js';
import { OPENAI_VIDEOS_UNSUPPORTED } from '../../src/doors/openai/openai-videos-unsupported.controller.js';
import { OPENAI_IMAGES_UNSUPPORTED } from '../../src/doors/openai/openai-images.controller.js';
import { api, startTestApp, type TestApp } from '../support/test-app.js';

describe('Swagger UI and the OpenAPI document', () => {
  let t: TestApp;
  let doc: any;
  beforeAll(async () => {
    t = await startTestApp({ ADMIN_API_KEY: 'admin-secret-0123456789' });
    doc = (await api(t.url, 'GET', '/docs-json')).body;
  });
  afterAll(() => t.close());

  it('serves Swagger UI at /docs without a key', async () => {
    const res = await api(t.url, 'GET', '/docs');
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toMatch(/text\/html/);
    expect(res.text).toContain('swagger-ui');
    const init = await api(t.url, 'GET', '/docs/swagger-ui-init.js');
    expect(init.status).toBe(200);
  });

  it("gives Swagger UI the same document written as OpenAPI 3.0.3 (its 3.1 reader took seconds per operation), while /docs-json stays 3.1", async () => {
    const init = (await api(t.url, 'GET', '/docs/swagger-ui-init.js')).text;
    const shown = JSON.parse(/"swaggerDoc":\s*(\{[\s\S]*\}),\s*"customOptions"/.exec(init)![1]);
    expect([doc.openapi, shown.openapi]).toEqual(['3.1.0', '3.0.3']);
    // the same operations, and no 3.1-only nullable left: a nullable is `nullable: true`
    expect(Object.keys(shown.paths)).toEqual(Object.keys(doc.paths));
    const text = JSON.stringify(shown);
    expect(text).not.toMatch(/"type":\[[^\]]*"null"/);
    expect(text).not.toContain('{"type":"null"}');
    expect(text).toContain('"nullable":true');
    expect(shown.info.license).toEqual({ name: doc.info.license.name });
    // served for the address the browser reached, as the JSON is
    expect(shown.servers).toEqual(doc.servers);
  });

  it('declares bearer security schemes and the error-code table', () => {
    expect(doc.openapi).toMatch(/^3\./);
    expect(doc.components.securitySchemes[API_KEY_SCHEME]).toEqual(expect.objectContaining({ type: 'http', scheme: 'bearer', bearerFormat: expect.stringMatching(/mgw_/) }));
    expect(doc.components.securitySchemes[ADMIN_KEY_SCHEME]).toEqual(expect.objectContaining({ type: 'http', scheme: 'bearer' }));
    expect(doc.components.securitySchemes[METRICS_TOKEN_SCHEME]).toEqual(expect.objectContaining({ type: 'http', scheme: 'bearer', bearerFormat: expect.stringMatching(/METRICS_TOKEN/) }));
    expect(doc.components.securitySchemes[ELEVENLABS_KEY_SCHEME]).toEqual(expect.objectContaining({ type: 'apiKey', in: 'header', name: 'xi-api-key' }));
    expect(Object.keys(doc.components.securitySchemes)).toEqual([API_KEY_SCHEME, ADMIN_KEY_SCHEME, METRICS_TOKEN_SCHEME, ELEVENLABS_KEY_SCHEME]);
    // ElevenLabs' door: either the Bearer key or its xi-api-key header
    expect(doc.paths['/elevenlabs/v1/music'].post.security).toEqual(expect.arrayContaining([{ [API_KEY_SCHEME]: [] }, { [ELEVENLABS_KEY_SCHEME]: [] }]));
    // GET /metrics: the metrics token or the admin key, either alone
    expect(doc.paths['/metrics'].get.security).toEqual(expect.arrayContaining([{ [METRICS_TOKEN_SCHEME]: [] }, { [ADMIN_KEY_SCHEME]: [] }]));
    for (const code of [1000, 1001, 1002, 1004, 1005, 1103, 1200, 1201, 1203, 1302, 1303, 5000, 5001]) {
      expect(doc.info.description).toContain(`| ${code} |`);
    }
  });

  it('documents every route: security, error envelope, and a success reply', () => {
    const operations = Object.entries(doc.paths).flatMap(([p, ops]: [string, any]) => Object.entries(ops).map(([m, op]) => ({ p, m, op: op as any })));
    expect(operations.length).toBeGreaterThan(0);
    for (const { p, m, op } of operations) {
      const where = `${m.toUpperCase()} ${p}`;
      const statuses = Object.keys(op.responses);
      expect([where, statuses.some((s) => s.startsWith('2'))]).toEqual([where, true]);
      if (!['/health', '/media', '/samples', '/upstream-callbacks'].some((open) => p.startsWith(open))) {
        expect([where, op.security]).toEqual([where, expect.arrayContaining([expect.any(Object)])]);
        expect([where, op.responses['401']?.content?.['application/json']?.schema?.$ref]).toEqual([where, expect.stringMatching(/ErrorEnvelope/)]);
      } else {
        expect([where, op.security]).toEqual([where, []]); // public, and saying so
      }
    }
  });

  it("leaves no route undocumented: every route Express serves (but the docs, and Luma's and OpenAI's operations it refuses) is in the document", () => {
    const router = t.app.getHttpAdapter().getInstance().router as { stack: { route?: { path: string; methods: Record<string, boolean> } }[] };
    const served = router.stack
      .filter((layer) => layer.route && !layer.route.path.startsWith('/docs'))
      .flatMap((layer) => Object.keys(layer.route!.methods).map((m) => `${m.toUpperCase()} ${layer.route!.path.replace(/:(\w+)/g, '{$1}')}`));
    const documented = Object.entries(doc.paths).flatMap(([p, ops]: [string, any]) => Object.keys(ops).map((m) => `${m.toUpperCase()} ${p}`));
    const refused = [
      ...LUMA_UNSUPPORTED.map((r) => `${r.method} /video-b/v1/${r.path.replace(/:(\w+)/g, '{$1}')}`),
      ...OPENAI_VIDEOS_UNSUPPORTED.map((r) => `${r.method} /openai/v1/videos/${r.path.replace(/:(\w+)/g, '{$1}')}`),
      ...OPENAI_IMAGES_UNSUPPORTED.map((r) => `${r.method} /openai/v1/images/${r.path}`),
    ];
    expect(served.length).toBeGreaterThan(3);
    expect(refused.every((r) => served.includes(r))).toBe(true);
    expect(documented.sort()).toEqual([...new Set(served)].filter((r) => !refused.includes(r)).sort());
  });

  it('lints clean with @redocly/cli and its recommended rules: no error, no warning', async () => {
    const dir = mkdtempSync(path.join(tmpdir(), 'openapi-lint-'));
    writeFileSync(path.join(dir, 'openapi.json'), JSON.stringify(doc));
    let output = '';
    try {
      output = execFileSync(path.resolve('node_modules/.bin/redocly'), ['lint', path.join(dir, 'openapi.json'), '--format', 'json'], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] });
    } catch (err) {
      output = (err as { stdout: string }).stdout; // redocly exits 1 on errors; the report says which
    }
    const report = JSON.parse(output);
    const problems = report.problems.map((p: { ruleId: string; message: string; location: { pointer: string }[] }) => `${p.ruleId}: ${p.message} at ${p.location[0]?.pointer}`);
    expect(problems).toEqual([]);
    expect(report.totals).toEqual({ errors: 0, warnings: 0, ignored: 0 });
  });

  it('types paging parameters as integers, and every public route says it needs no key (security: [])', () => {
    for (const [p, name] of [['/video-b/v1/generations', 'limit'], ['/video-b/v1/generations', 'offset'], ['/video-a/v1/images/editing/expand', 'pageNum'], ['/video-a/v1/images/editing/expand', 'pageSize']]) {
      expect([p, name, doc.paths[p].get.parameters.find((x: { name: string }) => x.name === name)?.schema?.type]).toEqual([p, name, 'integer']);
    }
    expect(doc.paths['/health'].get.security).toEqual([]);
    expect(doc.servers).toEqual([{ url: '/', description: 'This service' }]);
  });

  it('gives every operation a distinct, meaningful operationId, for client generators', () => {
    const ids = Object.values(doc.paths).flatMap((ops: any) => Object.values(ops).map((op: any) => op.operationId));
    expect(new Set(ids).size).toBe(ids.length);
    expect(ids.filter((id: string) => !/^[a-z][A-Za-z]+$/.test(id))).toEqual([]); // no Controller_method[0]
    expect(ids).toEqual(expect.arrayContaining(['createExpandTask', 'getExpandTask', 'createGeneration', 'getGeneration', 'uploadAudioUrl']));
  });

  it('checks answers against itself: the checker every e2e test uses refuses a body that breaks it and an undocumented status', async () => {
    const { OpenApiValidator } = await import('../support/openapi-validator.js');
    const validator = new OpenApiValidator(doc);
    const id = '3f2b1c4d-5e6f-4a7b-8c9d-0e1f2a3b4c5d';
    const good = { id, generation_type: 'video', state: 'pending', model: 'ray-2', created_at: '2026-11-21T10:00:00.000Z', request: { prompt: 'p', aspect_ratio: '16:9', enhance: true, request_type: 'text_to_video', generation_type: 'video', model: 'ray-2', loop: false }, media_request: { end: null, loop: false, prompt_type: 'text', start: null, text: 'p' }, media_expired: false };
    expect(validator.check('GET', `/video-b/v1/generations/${id}`, 200, 'application/json', good)).toBeNull();
    expect(validator.check('GET', `/video-b/v1/generations/${id}`, 200, 'application/json', { ...good, state: 'processing' })).toMatch(/state must be equal to one of the allowed values/);
    expect(validator.check('GET', `/video-b/v1/generations/${id}`, 200, 'application/json', { ...good, assets: null })).toMatch(/assets must be object/);
    expect(validator.check('GET', `/video-b/v1/generations/${id}`, 418, 'application/json', {})).toMatch(/answered 418, which the document does not list/);
    expect(validator.check('GET', '/no/such/route', 200, 'application/json', {})).toBeNull();
  });

  it('shows the request body of each spec operation with types, limits and a working example', () => {
    const expand = doc.components.schemas.CreateExpandTaskDto.properties;
    expect(expand.up_expansion_ratio).toEqual(expect.objectContaining({ type: 'number', minimum: 0, maximum: 2 }));
    expect(expand.prompt).toEqual(expect.objectContaining({ type: 'string', maxLength: 2500 }));
    expect(expand.image.example).toMatch(/^iVBORw0KGgo/);
    expect(doc.paths['/video-a/v1/images/editing/expand'].post.requestBody.content['application/json'].examples.base64.value.image).toBe(expand.image.example);
    expect(doc.components.schemas.CreateGenerationDto.properties.prompt).toEqual(expect.objectContaining({ maxLength: 5000 }));
    expect(doc.components.schemas.CreateAudioUploadDto.properties.url).toEqual(expect.objectContaining({ type: 'string' }));
    expect(doc.paths['/music-a/uploads/audio-url'].post.responses['400'].content['application/json'].schema.$ref).toMatch(/StringCodeErrorEnvelope/);
  });

  it('is what `npm run openapi` writes', () => {
    const out = path.join(mkdtempSync(path.join(tmpdir(), 'openapi-')), 'openapi.json');
    execFileSync(process.execPath, ['dist/cli/openapi.js', out], { env: { ...process.env, ADMIN_API_KEY: 'admin-secret-0123456789' } });
    // the same document; the one served puts the base the caller reached where the file has the placeholder
    expect(JSON.parse(readFileSync(out, 'utf8'))).toEqual(JSON.parse(JSON.stringify(doc).replaceAll(t.url, EXAMPLE_BASE)));
  });
});
