import { runOpenAiVideos } from '../clients/openai-videos.client.js';
import { startHeldFiles } from '../support/held-files.js';
import { frameColour, probeVideo, solid } from '../support/media.js';
import { pollUntil } from '../support/poll.js';
import { api, startTestApp, type TestApp } from '../support/test-app.js';

const DOOR = '/openai/v1/videos';

/** The official openai SDK (7.x), baseURL <gateway>/openai/v1, as a team with OpenAI-style video code would use it. */
describe('the OpenAI-style video door', () => {
  let t: TestApp;
  let key: string;
  beforeAll(async () => {
    // the reference images by URL come from the tests' held file servers (loopback)
    t = await startTestApp({ ALLOW_PRIVATE_URLS: 'true' });
    key = await t.createKey('openai-team');
  });
  afterAll(() => t.close());

  it('videos.create (prompt only, with an image file, and from an image link) → retrieve until completed → downloadContent gives the asked seconds and size → list → delete', async () => {
    const red = await solid(720, 1280, [220, 30, 30]);
    // the third video's image, served when the test lets it: that video stays in_progress until the SDK's poll loop
    // has seen one in_progress, however slow the machine (a sandbox delay only made that likely)
    const linkedImage = await startHeldFiles('image/png', await solid(1280, 720, [30, 30, 220]));
    const run = await runOpenAiVideos(`${t.url}/openai/v1`, key, red, `${linkedImage.url}/blue.png`, () => linkedImage.release()).finally(() => linkedImage.close());
    for (const video of run.created) expect(video).toEqual(expect.objectContaining({ object: 'video', status: 'queued', progress: 0, model: 'auto', completed_at: null, error: null }));
    expect(run.created.map((v) => [v.seconds, v.size])).toEqual([['4', '1280x720'], ['8', '720x1280']]);
    expect(run.sawInProgress).toBe(true);
    expect(run.linked).toEqual(expect.objectContaining({ status: 'completed', seconds: '4', size: '1280x720' }));
    for (const video of run.completed) expect(video).toEqual(expect.objectContaining({ status: 'completed', progress: 100, completed_at: expect.any(Number), expires_at: expect.any(Number) }));
    const [a, b] = await Promise.all(run.contents.map((bytes) => probeVideo(bytes)));
    expect([a.codec, a.width, a.height, Math.round(a.durationS)]).toEqual(['h264', 1280, 720, 4]);
    expect([b.width, b.height, Math.round(b.durationS)]).toEqual([720, 1280, 8]);
    // the uploaded image is the first frame
    const [r, g] = await frameColour(run.contents[1], 'first');
    expect(r).toBeGreaterThan(150);
    expect(g).toBeLessThan(90);
    expect(run.thumbnail.subarray(0, 3)).toEqual(Buffer.from([0xff, 0xd8, 0xff]));
    expect(run.listedIds).toEqual(expect.arrayContaining(run.created.map((v) => v.id)));
    expect(run.deletedThenMissing).toBe(true);
    expect(run.badRequest).toEqual({ status: 400, message: expect.stringMatching(/^400 seconds: /), param: 'seconds', requestId: expect.any(String) });
    expect(run.notOffered).toMatch(/videos\.remix is not supported by this gateway/);
  }, 120_000);

  it('answers errors as OpenAI does, with request_id beside them; takes JSON and input_reference[image_url] too', async () => {
    const bad = await api(t.url, 'POST', DOOR, { key, body: { prompt: 'x', size: '1000x1000' } });
    expect(bad.status).toBe(400);
    expect(bad.body).toEqual({ error: { message: expect.stringMatching(/^size must be WxH whose shorter side is 480, 540, 720, 768, 1080 or 2160 px/), type: 'invalid_request_error', code: 'invalid_value', param: 'size' }, request_id: bad.headers.get('x-request-id') });
    const unauthorized = await api(t.url, 'GET', DOOR, { key: 'sk-not-a-key-0000000000' });
    expect([unauthorized.status, unauthorized.body.error.type, unauthorized.body.error.code]).toEqual([401, 'authentication_error', 'invalid_api_key']);
    // a number where OpenAI takes a string, and a field missing: OpenAI's own codes, the field as param
    const seconds = await api(t.url, 'POST', DOOR, { key, body: { prompt: 'x', seconds: 5 } });
    const noPrompt = await api(t.url, 'POST', DOOR, { key, body: { seconds: '4' } });
    expect([seconds.body.error.code, seconds.body.error.param, noPrompt.body.error.code, noPrompt.body.error.param]).toEqual(['invalid_type', 'seconds', 'missing_required_parameter', 'prompt']);
    // a value of the wrong type is told that alone, once; a size of the form WxH but out of range is told its range
    expect(seconds.body.error.message).toBe('seconds must be a string of whole seconds, such as "5"');
    const huge = await api(t.url, 'POST', DOOR, { key, body: { prompt: 'x', size: '100000x720' } });
    expect([huge.status, huge.body.error.param, huge.body.error.message]).toEqual([400, 'size', 'size must be WxH in pixels, each side 10 to 9999, such as "1280x720" or "720x1280"']);
    // a multipart text part of bytes that are not UTF-8 is refused as a JSON body's are (not read as U+FFFD and sent on)
    const boundary = 'mgw-boundary';
    const broken = Buffer.concat([Buffer.from(`--${boundary}\r\nContent-Disposition: form-data; name="prompt"\r\n\r\nx`), Buffer.from([0xff, 0xfe]), Buffer.from(`y\r\n--${boundary}--\r\n`)]);
    const notUtf8 = await fetch(`${t.url}${DOOR}`, { method: 'POST', headers: { authorization: `Bearer ${key}`, 'content-type': `multipart/form-data; boundary=${boundary}` }, body: broken });
    expect([notUtf8.status, ((await notUtf8.json()) as { error: { message: string } }).error.message]).toEqual([400, expect.stringMatching(/^prompt: the part is not valid UTF-8 text/)]);
    // a part multer nests (input_reference[image_url]) likewise, named as it was sent
    const nested = Buffer.concat([Buffer.from(`--${boundary}\r\nContent-Disposition: form-data; name="prompt"\r\n\r\nok\r\n--${boundary}\r\nContent-Disposition: form-data; name="input_reference[image_url]"\r\n\r\nhttps://example.com/`), Buffer.from([0xff]), Buffer.from(`.png\r\n--${boundary}--\r\n`)]);
    const nestedAnswer = await fetch(`${t.url}${DOOR}`, { method: 'POST', headers: { authorization: `Bearer ${key}`, 'content-type': `multipart/form-data; boundary=${boundary}` }, body: nested });
    expect([nestedAnswer.status, ((await nestedAnswer.json()) as { error: { message: string } }).error.message]).toEqual([400, expect.stringMatching(/^input_reference\[image_url\]: the part is not valid UTF-8 text/)]);
    // a text part sent twice, or as a list, is told so (multer reads both as a list), not that it must be a string
    const parts = (...named: [string, string][]) => Buffer.from(named.map(([name, value]) => `--${boundary}\r\nContent-Disposition: form-data; name="${name}"\r\n\r\n${value}\r\n`).join('') + `--${boundary}--\r\n`);
    for (const [body, words] of [
      [parts(['prompt', 'one'], ['prompt', 'two']), 'prompt must be one value: one part named prompt, sent once (it was sent 2 times)'],
      [parts(['prompt', 'ok'], ['seconds[]', '4']), 'seconds must be one value: one part named seconds, sent once (it was sent as a list, seconds[])'],
      [parts(['prompt', 'ok'], ['input_reference[image_url]', 'https://example.com/a.png'], ['input_reference[image_url]', 'https://example.com/b.png']), 'input_reference[image_url] must be one value: one part named input_reference[image_url], sent once (it was sent 2 times)'],
    ] as const) {
      const twice = await fetch(`${t.url}${DOOR}`, { method: 'POST', headers: { authorization: `Bearer ${key}`, 'content-type': `multipart/form-data; boundary=${boundary}` }, body });
      expect([twice.status, ((await twice.json()) as { error: { message: string; param: string } }).error]).toEqual([400, expect.objectContaining({ message: words, param: words.split(' ')[0] })]);
    }
    // a part the body does not declare, sent twice, is dropped as any unknown field is
    const once = await fetch(`${t.url}${DOOR}`, { method: 'POST', headers: { authorization: `Bearer ${key}`, 'content-type': `multipart/form-data; boundary=${boundary}` }, body: parts(['prompt', 'once'], ['seconds', '4'], ['user', 'a'], ['user', 'b']) });
    expect(once.status).toBe(200);
    const fileId = await api(t.url, 'POST', DOOR, { key, body: { prompt: 'x', input_reference: { file_id: 'file-123' } } });
    expect([fileId.status, fileId.body.error.param]).toEqual([400, 'input_reference.file_id']);
    const missing = await api(t.url, 'GET', `${DOOR}/00000000-0000-4000-8000-000000000000`, { key });
    expect([missing.status, missing.body.error.code]).toEqual([404, 'not_found']);
    // its image, the sample keyframe, is served when the test lets it: the video cannot be completed when its content
    // is asked for too early, however slow the machine (a sandbox delay only made that likely)
    const keyframe = await startHeldFiles('image/jpeg', Buffer.from(await (await fetch(`${t.url}/samples/keyframe.jpg`)).arrayBuffer()));
    const byUrl = await api(t.url, 'POST', DOOR, { key, body: { prompt: 'From a link', input_reference: { image_url: `${keyframe.url}/keyframe.jpg` } } });
    try {
      expect([byUrl.status, byUrl.body.status, byUrl.body.size, byUrl.body.seconds]).toEqual([200, 'queued', '1280x720', '5']);
      const notYet = await api(t.url, 'GET', `${DOOR}/${byUrl.body.id}/content`, { key });
      expect([notYet.status, notYet.body.error?.code]).toEqual([409, 'conflict']);
      keyframe.release();
      await pollUntil(() => api(t.url, 'GET', `${DOOR}/${byUrl.body.id}`, { key }), (r) => r.body.status === 'completed', { timeoutMs: 60_000, what: 'the video' });
    } finally {
      await keyframe.close();
    }
    const spritesheet = await api(t.url, 'GET', `${DOOR}/${byUrl.body.id}/content?variant=spritesheet`, { key });
    expect([spritesheet.status, spritesheet.body.error.param]).toEqual([400, 'variant']);
    // OpenAI's operations this door does not offer: 404 naming each
    for (const [method, path, operation] of [['POST', `${DOOR}/${byUrl.body.id}/remix`, 'videos.remix'], ['POST', `${DOOR}/edits`, 'videos.edit'], ['POST', `${DOOR}/extensions`, 'videos.extend'], ['POST', `${DOOR}/characters`, 'videos.createCharacter'], ['GET', `${DOOR}/characters/char_1`, 'videos.getCharacter']]) {
      const res = await api(t.url, method, path, { key, body: method === 'POST' ? { prompt: 'x' } : undefined, unchecked: true });
      expect([res.status, res.body.error?.code, res.body.error?.message]).toEqual([404, 'not_supported', expect.stringContaining(`${operation} is not supported by this gateway`)]);
    }
  }, 120_000);

  it("a named model asked no duration is made, priced and recorded at its own default (Veo's 8 s, T2V-01's 6 s), not the door's 5 s", async () => {
    const credits = async (id: string) => (await api(t.url, 'GET', `/tasks/${id}`, { key })).body.credits;
    const veo = await api(t.url, 'POST', DOOR, { key, body: { prompt: 'A heron at dawn', model: 'veo-3.1-generate-preview' } });
    const hailuo = await api(t.url, 'POST', '/video-b/v1/generations', { key, body: { prompt: 'A heron at dawn', model: 'T2V-01' } });
    const kling = await api(t.url, 'POST', '/video-a/v1/videos/text2video', { key, body: { prompt: 'A heron at dawn', model_name: 'kling-v2-master' } });
    // no model, or the sandbox's own named: the door's default, 5 s
    const auto = await api(t.url, 'POST', DOOR, { key, body: { prompt: 'A heron at dawn' } });
    const sandbox = await api(t.url, 'POST', DOOR, { key, body: { prompt: 'A heron at dawn', model: 'sandbox' } });
    expect([veo.status, veo.body.seconds, hailuo.status, hailuo.body.request.duration, kling.body.data?.task_id !== undefined, auto.body.seconds, sandbox.body.seconds]).toEqual([200, '8', 201, '6s', true, '5', '5']);
    const klingId = kling.body.data.task_id as string;
    expect(await Promise.all([veo.body.id, hailuo.body.id, klingId, auto.body.id, sandbox.body.id].map(credits))).toEqual([8, 6, 5, 5, 5]);
    // asked outright, the same duration is taken; another is refused naming the field and what the model makes
    const asked = await api(t.url, 'POST', DOOR, { key, body: { prompt: 'x', model: 'T2V-01', seconds: '5' } });
    expect([asked.status, asked.body.error.param, asked.body.error.message]).toEqual([400, 'seconds', expect.stringContaining('(it makes 6 s)')]);
    // made at it: the sandbox renders the model's 8 s
    const done = await pollUntil(() => api(t.url, 'GET', `${DOOR}/${veo.body.id}`, { key }), (r) => r.body.status !== 'queued' && r.body.status !== 'in_progress', { timeoutMs: 60_000, what: 'the Veo-named video' });
    expect([done.body.status, done.body.seconds, done.body.model]).toEqual(['completed', '8', 'veo-3.1-generate-preview']);
    const content = await fetch(`${t.url}${DOOR}/${veo.body.id}/content`, { headers: { authorization: `Bearer ${key}` } });
    expect(Math.round((await probeVideo(Buffer.from(await content.arrayBuffer()))).durationS)).toBe(8);
    const klingDone = await pollUntil(() => api(t.url, 'GET', `/video-a/v1/videos/text2video/${klingId}`, { key }), (r) => ['succeed', 'failed'].includes(r.body.data?.task_status), { timeoutMs: 60_000, what: 'the Kling-door video' });
    expect(klingDone.body.data.task_result.videos[0].duration).toBe('5');
  }, 240_000);

  it('one generation, every door: the Luma door reads what this door made, and this door what the Luma door made', async () => {
    const made = await api(t.url, 'POST', DOOR, { key, body: { prompt: 'Made through OpenAI', seconds: '5', size: '720x1280' } });
    const asLuma = await api(t.url, 'GET', `/video-b/v1/generations/${made.body.id}`, { key });
    expect([asLuma.status, asLuma.body.id, asLuma.body.request.prompt, asLuma.body.request.aspect_ratio, asLuma.body.request.duration]).toEqual([200, made.body.id, 'Made through OpenAI', '9:16', '5s']);
    const luma = await api(t.url, 'POST', '/video-b/v1/generations', { key, body: { prompt: 'Made through Luma', duration: '5s', resolution: '540p' } });
    const done = await pollUntil(() => api(t.url, 'GET', `${DOOR}/${luma.body.id}`, { key }), (r) => r.body.status === 'completed', { timeoutMs: 60_000, what: 'the Luma generation' });
    // no model named: 'auto' while it runs, then the model that made it (the sandbox here)
    expect(done.body).toEqual(expect.objectContaining({ id: luma.body.id, object: 'video', model: 'sandbox', prompt: 'Made through Luma', seconds: '5', size: '960x540' }));
    const asLumaDone = await api(t.url, 'GET', `/video-b/v1/generations/${luma.body.id}`, { key });
    expect([asLumaDone.body.model, asLumaDone.body.request.model]).toEqual(['sandbox', 'ray-2']);
    const list = await api(t.url, 'GET', `${DOOR}?limit=100`, { key });
    expect(list.body.data.map((v: { id: string }) => v.id)).toEqual(expect.arrayContaining([made.body.id, luma.body.id]));
    // another owner sees neither
    const other = await t.createKey('someone-else');
    expect((await api(t.url, 'GET', `${DOOR}/${made.body.id}`, { key: other })).status).toBe(404);
  }, 120_000);
});
