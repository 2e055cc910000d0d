import { api, startTestApp, type TestApp } from '../support/test-app.js';

/**
 * In sandbox mode each video door takes exactly what some vendor's model makes (its catalog), so what GET
 * /models lists and what the door accepts must be one set. Checked field by field at every value around it:
 * each listed value accepted, each other refused with a 400 naming the field. The served document enumerates
 * none of these (a channel's declared model may make a duration or shape no catalog model makes): it gives
 * their form (a pattern) and names the catalogs' values; only the resolution classes, a closed vocabulary
 * declared models name too, are an enumeration. An API-only instance: the accepted generations stay queued.
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
    models = (await api(t.url, 'GET', '/models', { key })).body.models.filter((m: { vendor: string; operation: string }) => m.vendor !== 'sandbox' && m.operation === 'video');
  });
  afterAll(() => t.close());

  /** A request field's schema, its operation's $ref followed. */
  const schemaOf = (route: string, field: string, media = 'application/json') => {
    let schema = doc.paths[route].post.requestBody.content[media].schema;
    if (schema.$ref) schema = doc.components.schemas[schema.$ref.split('/').at(-1)];
    return schema.properties[field];
  };
  /** The enumeration of a request field. */
  const enumOf = (route: string, field: string): string[] => {
    const values = schemaOf(route, field)?.enum;
    expect([route, field, Array.isArray(values)]).toEqual([route, field, true]);
    return values;
  };
  /** A field a declared model may exceed: no enumeration, a pattern, and a description naming each of `made` (the catalogs'). */
  const notEnumerated = (route: string, field: string, made: string[]) => {
    const schema = schemaOf(route, field);
    expect([route, field, schema.enum, typeof schema.pattern]).toEqual([route, field, undefined, 'string']);
    for (const value of made) expect([field, value, schema.description.includes(value)]).toEqual([field, value, true]);
  };
  const union = <T>(lists: T[][]): T[] => [...new Set(lists.flat())];
  /** Whole seconds from 1 to two past the longest enumerated: both sides of every bound. */
  const secondsAround = (enumerated: string[]) => Array.from({ length: Math.max(...enumerated.map((v) => parseInt(v, 10))) + 2 }, (_, i) => i + 1);
  const sizeOf = (ratio: string, side: number) => {
    const [w, h] = ratio.split(':').map(Number);
    const even = (v: number) => Math.round(v / 2) * 2;
    return w >= h ? `${even((side * w) / h)}x${side}` : `${side}x${even((side * h) / w)}`;
  };
  const SIDES: Record<string, number> = { '480p': 480, '540p': 540, '720p': 720, '768p': 768, '1080p': 1080, '4k': 2160 };

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
    const durations = union(models.map((m) => m.durations_s)).map((s) => `${s}s`);
    const ratios = union(models.map((m) => m.aspect_ratios));
    notEnumerated(route, 'duration', durations);
    notEnumerated(route, 'aspect_ratio', ratios);
    // the resolution classes are enumerated: every one some model makes is taken, any other (480p: no catalog model's) refused naming it
    const resolutions = enumOf(route, 'resolution');
    const made = union(models.map((m) => m.resolutions));
    expect(made.filter((r) => !resolutions.includes(r))).toEqual([]);
    const luma = (body: Record<string, unknown>) => api(t.url, 'POST', route, { key, body: { prompt: 'A heron in the reeds', ...body } });
    await agrees((r) => luma({ resolution: r }), 'resolution', made, resolutions);
    await agrees((d) => luma({ duration: d }), 'duration', durations, secondsAround(durations).map((s) => `${s}s`));
    await agrees((r) => luma({ aspect_ratio: r }), 'aspect_ratio', ratios, [...new Set([...ratios, '5:4', '4:5', '2:1', '3:2', '2:3', '9999:1'])]);
  }, 60_000);

  it("Kling's door: duration, as Kling's models make it", async () => {
    const route = '/video-a/v1/videos/text2video';
    const durations = union(models.filter((m) => m.vendor === 'kling').map((m) => m.durations_s)).map(String);
    notEnumerated(route, 'duration', durations);
    const kling = (d: string) => api(t.url, 'POST', route, { key, body: { prompt: 'A heron in the reeds', duration: d } });
    await agrees(kling, 'duration', durations, secondsAround(durations).map(String));
  }, 60_000);

  it("the OpenAI door: seconds and size (every whole-number shape at every resolution's side)", async () => {
    const route = '/openai/v1/videos';
    const seconds = union(models.map((m) => m.durations_s)).map(String);
    const made = union(models.map((m) => m.sizes ?? m.aspect_ratios.flatMap((r) => m.resolutions.map((res) => `${r}@${res}`))));
    const sizes = [...new Set(made.map((s) => sizeOf(s.split('@')[0], SIDES[s.split('@')[1]])))];
    notEnumerated(route, 'seconds', seconds);
    notEnumerated(route, 'size', sizes);
    const openai = (body: Record<string, string>) => api(t.url, 'POST', route, { key, body: { prompt: 'A heron in the reeds', ...body } });
    await agrees((s) => openai({ seconds: s }), 'seconds', seconds, secondsAround(seconds).map(String));
    const shapes = ['16:9', '9:16', '1:1', '4:3', '3:4', '21:9', '9:21', '3:2', '2:3', '5:4', '2:1'];
    await agrees((s) => openai({ size: s }), 'size', sizes, [...new Set(shapes.flatMap((r) => Object.values(SIDES).map((side) => sizeOf(r, side))))]);
  }, 60_000);
});
