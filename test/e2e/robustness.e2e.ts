import { api, startTestApp, type TestApp } from '../support/test-app.js';

/** Wrong types in every field of every operation: always a 4xx with the envelope, never a 500. */
const ODD_VALUES: unknown[] = [null, true, false, 0, -1, 1.5, 1e308, '', ' ', 'x', 'x'.repeat(5000), [], [1], {}, { a: 1 }, '{"a":1}', '\u0000', '\ud800', 'a\udfffb', 'data:', 'https://'];

const OPERATIONS: { path: string; valid: Record<string, unknown>; fields: string[] }[] = [
  {
    path: '/video-a/v1/images/editing/expand',
    valid: { image: 'https://example.com/a.png', up_expansion_ratio: 0.1, bottom_expansion_ratio: 0.1, left_expansion_ratio: 0.1, right_expansion_ratio: 0.1 },
    fields: ['image', 'up_expansion_ratio', 'bottom_expansion_ratio', 'down_expansion_ratio', 'left_expansion_ratio', 'right_expansion_ratio', 'prompt', 'n', 'callback_url', 'external_task_id'],
  },
  {
    path: '/video-b/v1/generations',
    valid: { prompt: 'p', keyframes: { frame0: { type: 'image', url: 'https://example.com/a.png' } } },
    fields: ['prompt', 'loop', 'aspect_ratio', 'keyframes', 'callback_url', 'keyframes.frame0', 'keyframes.frame1', 'keyframes.frame0.type', 'keyframes.frame0.url', 'keyframes.frame0.id'],
  },
  { path: '/music-a/uploads/audio-url', valid: { url: 'https://example.com/a.mp3' }, fields: ['url'] },
];

function withField(body: Record<string, unknown>, path: string, value: unknown): Record<string, unknown> {
  const copy = structuredClone(body);
  const parts = path.split('.');
  let node: Record<string, unknown> = copy;
  for (const part of parts.slice(0, -1)) node = (node[part] ??= {}) as Record<string, unknown>;
  node[parts[parts.length - 1]] = value;
  return copy;
}

describe('bad input never answers 500', () => {
  let t: TestApp;
  let key: string;
  beforeAll(async () => {
    t = await startTestApp();
    key = await t.createKey();
  });
  afterAll(() => t.close());

  it.each(OPERATIONS.map((o) => [o.path, o] as const))('%s', async (_, op) => {
    const statuses = new Set<number>();
    for (const field of op.fields) {
      for (const value of ODD_VALUES) {
        const res = await api(t.url, 'POST', op.path, { key, body: withField(op.valid, field, value) });
        statuses.add(res.status);
        if (res.status >= 500 || !(res.status < 300 || (res.body && 'request_id' in res.body))) {
          throw new Error(`${op.path} ${field}=${JSON.stringify(value)?.slice(0, 40)} answered ${res.status} ${res.text.slice(0, 200)}`);
        }
      }
    }
    for (const body of ['[]', '"s"', '1', 'null', '[{}]', '{"a":']) {
      const res = await api(t.url, 'POST', op.path, { key, rawBody: body, headers: { 'content-type': 'application/json' } });
      expect([body, res.status]).toEqual([body, 400]);
    }
    expect([...statuses].every((s) => [200, 201, 400, 409].includes(s))).toBe(true);
  });
});
