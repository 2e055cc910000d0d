import { api, startTestApp, type TestApp } from '../support/test-app.js';

/**
 * In sandbox mode each video door takes exactly what some vendor's model makes (its catalog), so what the
 * served document enumerates, what GET /models lists and what the door accepts must be one set. Checked
 * field by field at every value around the enumerations: each enumerated value accepted, each other refused
 * with a 400 naming the field. An API-only instance: the accepted generations stay queued (nothing renders).
 */
describe('the video doors\' enumerations in sandbox mode', () => {
  let t: TestApp;
  let key: string;
  let doc: any;
  let models: { name: string; vendor: string; durations_s: number[]; aspect_ratios: string[]; resolutions: string[]; sizes?: string[] }[];

  beforeAll(async () => {
    t = await startTestApp({ ROLE: 'api' });
    key = await t.createKey('team-enums');
    doc = (await api(t.url, 'GET', '/docs-json')).body;
    // the catalogs' models; `sandbox` (free-form, taken only when named) is not what a request naming no model gets
    models = (await api(t.url, 'GET', '/models', { key })).body.models.filter((m: { vendor: string }) => m.vendor !== 'sandbox');
  });
  afterAll(() => t.close());

  /** The enumeration of a request field of an operation, its schema's $ref followed. */
  const enumOf = (route: string, field: string, media = 'application/json'): string[] => {
    let schema = doc.paths[route].post.requestBody.content[media].schema;
    if (schema.$ref) schema = doc.components.schemas[schema.$ref.split('/').at(-1)];
    const values = schema.properties[field]?.enum;
    expect([route, field, Array.isArray(values)]).toEqual([route, field, true]);
    return values;
  };
  const union = <T>(lists: T[][]): T[] => [...new Set(lists.flat())];
  /** Whole seconds from 1 to two past the longest enumerated: both sides of every bound. */
  const secondsAround = (enumerated: string[]) => Array.from({ length: Math.max(...enumerated.map((v) => parseInt(v, 10))) + 2 }, (_, i) => i + 1);
  const sorted = (values: string[]) => [...values].sort();
  const sizeOf = (ratio: string, side: number) => {
    const [w, h] = ratio.split(':').map(Number);
    const even = (v: number) => Math.round(v / 2) * 2;
    return w >= h ? `${even((side * w) / h)}x${side}` : `${side}x${even((side * h) / w)}`;
  };
  const SIDES: Record<string, number> = { '540p': 540, '720p': 720, '768p': 768, '1080p': 1080, '4k': 2160 };

  /** Each candidate value sent alone in `field`: accepted exactly when enumerated, else a 400 that names the field. */
  const agrees = async (send: (value: string) => Promise<{ status: number; body: any }>, field: string, enumerated: string[], candidates: string[]) => {
    const seen: [string, number, string][] = [];
    for (const value of candidates) {
      const res = await send(value);
      const message = String(res.body?.message ?? res.body?.error?.message ?? '');
      seen.push([value, res.status, res.status === 400 ? (message.includes(field) ? 'names it' : message) : '']);
    }
    expect(seen).toEqual(candidates.map((v) => (enumerated.includes(v) ? [v, expect.any(Number), ''] : [v, 400, 'names it'])));
    for (const [value, status] of seen) if (enumerated.includes(value)) expect([field, value, status >= 200 && status < 300]).toEqual([field, value, true]);
  };

  it('the Luma door: duration, aspect_ratio and resolution', async () => {
    const route = '/video-b/v1/generations';
    const durations = enumOf(route, 'duration');
    const ratios = enumOf(route, 'aspect_ratio');
    expect(sorted(durations)).toEqual(sorted(union(models.map((m) => m.durations_s)).map((s) => `${s}s`)));
    expect(sorted(ratios)).toEqual(sorted(union(models.map((m) => m.aspect_ratios))));
    // every resolution the door names is made by some model
    for (const resolution of enumOf(route, 'resolution')) expect([resolution, models.some((m) => m.resolutions.includes(resolution))]).toEqual([resolution, true]);
    const luma = (body: Record<string, unknown>) => api(t.url, 'POST', route, { key, body: { prompt: 'A heron in the reeds', ...body } });
    await agrees((d) => luma({ duration: d }), 'duration', durations, secondsAround(durations).map((s) => `${s}s`));
    await agrees((r) => luma({ aspect_ratio: r }), 'aspect_ratio', ratios, [...new Set([...ratios, '5:4', '4:5', '2:1', '3:2', '2:3', '9999:1'])]);
  }, 60_000);

  it("Kling's door: duration, as Kling's models make it", async () => {
    const route = '/video-a/v1/videos/text2video';
    const durations = enumOf(route, 'duration');
    expect(sorted(durations)).toEqual(sorted(union(models.filter((m) => m.vendor === 'kling').map((m) => m.durations_s)).map(String)));
    const kling = (d: string) => api(t.url, 'POST', route, { key, body: { prompt: 'A heron in the reeds', duration: d } });
    await agrees(kling, 'duration', durations, secondsAround(durations).map(String));
  }, 60_000);

  it("the OpenAI door: seconds and size (every whole-number shape at every resolution's side)", async () => {
    const route = '/openai/v1/videos';
    const seconds = enumOf(route, 'seconds');
    const sizes = enumOf(route, 'size');
    expect(sorted(seconds)).toEqual(sorted(union(models.map((m) => m.durations_s)).map(String)));
    const made = union(models.map((m) => m.sizes ?? m.aspect_ratios.flatMap((r) => m.resolutions.map((res) => `${r}@${res}`))));
    expect(sorted(sizes)).toEqual(sorted([...new Set(made.map((s) => sizeOf(s.split('@')[0], SIDES[s.split('@')[1]])))]));
    const openai = (body: Record<string, string>) => api(t.url, 'POST', route, { key, body: { prompt: 'A heron in the reeds', ...body } });
    await agrees((s) => openai({ seconds: s }), 'seconds', seconds, secondsAround(seconds).map(String));
    const shapes = ['16:9', '9:16', '1:1', '4:3', '3:4', '21:9', '9:21', '3:2', '2:3', '5:4', '2:1'];
    await agrees((s) => openai({ size: s }), 'size', sizes, [...new Set(shapes.flatMap((r) => Object.values(SIDES).map((side) => sizeOf(r, side))))]);
  }, 60_000);
});
