import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
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

  it('declares bearer security schemes and the error-code table', () => {
    expect(doc.openapi).toMatch(/^3\./);
    expect(doc.components.securitySchemes['api-key']).toEqual(expect.objectContaining({ type: 'http', scheme: 'bearer' }));
    expect(doc.components.securitySchemes['admin-key']).toEqual(expect.objectContaining({ type: 'http', scheme: 'bearer' }));
    for (const code of [1000, 1001, 1002, 1004, 1103, 1200, 1201, 1203, 1302, 1303, 5000, 5001]) {
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
      if (!['/health', '/media', '/metrics'].some((open) => p.startsWith(open))) {
        expect([where, op.security]).toEqual([where, expect.arrayContaining([expect.any(Object)])]);
        expect([where, op.responses['401']?.content?.['application/json']?.schema?.$ref]).toEqual([where, expect.stringMatching(/ErrorEnvelope/)]);
      }
    }
  });

  it('leaves no route undocumented: every route Express serves (but the docs) is in the document', () => {
    const router = t.app.getHttpAdapter().getInstance().router as { stack: { route?: { path: string; methods: Record<string, boolean> } }[] };
    const served = router.stack
      .filter((layer) => layer.route && !layer.route.path.startsWith('/docs'))
      .flatMap((layer) => Object.keys(layer.route!.methods).map((m) => `${m.toUpperCase()} ${layer.route!.path.replace(/:(\w+)/g, '{$1}')}`));
    const documented = Object.entries(doc.paths).flatMap(([p, ops]: [string, any]) => Object.keys(ops).map((m) => `${m.toUpperCase()} ${p}`));
    expect(served.length).toBeGreaterThan(3);
    expect(documented.sort()).toEqual([...new Set(served)].sort());
  });

  it('gives every operation a distinct operationId, for client generators', () => {
    const ids = Object.values(doc.paths).flatMap((ops: any) => Object.values(ops).map((op: any) => op.operationId));
    expect(new Set(ids).size).toBe(ids.length);
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
    expect(JSON.parse(readFileSync(out, 'utf8'))).toEqual(doc);
  });
});
