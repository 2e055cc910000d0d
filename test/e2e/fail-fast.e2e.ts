import OpenAI from 'openai';
import { deadEndWords } from '../../src/modules/channels/channel-routing.js';
import type { FakeUpstream } from '../support/fake-upstreams.js';
import { type FakeBfl, startFakeBfl } from '../support/vendors/bfl/bfl.fake.js';
import { type FakeGemini, startFakeGemini } from '../support/vendors/google/gemini.fake.js';
import { startFakeLuma } from '../support/vendors/luma/luma.fake.js';
import { type FakeOpenAIImages, startFakeOpenAIImages } from '../support/vendors/openai/openai.fake.js';
import { pollUntil } from '../support/poll.js';
import { api, queryDb, startTestApp, type TestApp } from '../support/test-app.js';

const ADMIN = 'admin-secret-0123456789';
const OPENAI_KEY = 'sk-openai-fail-fast-0123456789';
const GEMINI_KEY = 'AIza-gemini-fail-fast-0123456789';
const BFL_KEY = 'bfl-fail-fast-0123456789';
const LUMA_KEY = 'luma-fail-fast-0123456789';
const KLING_DOOR = '/video-a/v1/images/generations';

type ApiError = InstanceType<typeof OpenAI.APIError>;

/** What a call came to: the SDK's error (the test fails when it succeeded). */
async function refusal(call: Promise<unknown>): Promise<ApiError> {
  const outcome = await call.then(
    () => new Error('the call succeeded'),
    (err: unknown) => err,
  );
  expect(outcome).toBeInstanceOf(OpenAI.APIError);
  return outcome as ApiError;
}

/** The task id an OpenAI-door error names ("the image task <id> failed: …"). */
const taskIdIn = (message: string) => /the image task ([0-9a-f-]{36}) failed/.exec(message)?.[1];

/**
 * A configuration with nowhere to go answers at once: a channel whose vendor refuses the gateway's key is
 * disabled, and its task (and every later one) fails in its first step, saying why in words the caller can act
 * on, however long the task's deadline; the synchronous OpenAI door answers in OpenAI's shape. With
 * RELAY_FAILOVER_ON_CONTENT=true, a content refusal of any vendor (FLUX's, Gemini's, OpenAI's) goes on to the
 * next capable channel, the task charged once.
 */
describe('failing fast: a dead configuration, and content refusals that fail over', () => {
  let t: TestApp;
  let key: string;
  let openaiFake: FakeOpenAIImages;
  let luma: FakeUpstream;
  const admin = (method: string, path: string, body?: unknown) => api(t.url, method, path, { key: ADMIN, body });
  const attempts = async (id: string) => ((await admin('GET', `/admin/tasks/${id}/attempts`)).body as { channel: string; outcome: string; message: string }[]).map((a) => [a.channel, a.outcome]);
  const steps = async (id: string) => (await queryDb<{ attempts: number }>(t.db, 'SELECT attempts FROM tasks WHERE id = $1', [id]))[0].attempts;

  beforeAll(async () => {
    [openaiFake, luma] = await Promise.all([startFakeOpenAIImages(OPENAI_KEY), startFakeLuma(LUMA_KEY)]);
    // the tasks' deadlines are the defaults (image 300 s, video 1,800 s): only a dead end can end them within this test
    t = await startTestApp({ IMAGE_PROVIDER: 'relay', VIDEO_PROVIDER: 'relay', ADMIN_API_KEY: ADMIN, OUTBOUND_ALLOW_HOSTS: '127.0.0.1', RELAY_POLL_MS: '100' });
    key = await t.createKey('team-fail-fast');
    const refused = await admin('POST', '/admin/channels', { name: 'openai-stale-key', operations: ['image'], protocol: 'openai', base_url: openaiFake.url, credentials: { api_key: 'sk-revoked-by-openai-000000' } });
    expect(refused.status).toBe(201);
    const video = await admin('POST', '/admin/channels', { name: 'luma-stale-key', operations: ['video'], protocol: 'luma', base_url: luma.url, credentials: { api_key: 'luma-revoked-000000' } });
    expect(video.status).toBe(201);
  }, 60_000);
  afterAll(async () => {
    await t.close();
    await Promise.all([openaiFake.close(), luma.close()]);
  });

  it("OpenAI's door: the openai SDK gets OpenAI's error naming refused credentials from the task's first step; the next request too, without knocking on the vendor", async () => {
    // the SDK as a team uses it: its default retries (none here: x-should-retry: false)
    const openai = new OpenAI({ apiKey: key, baseURL: `${t.url}/openai/v1` });
    const error = await refusal(openai.images.generate({ model: 'gpt-image-1', prompt: 'A lighthouse at dusk', size: '1024x1024' }));
    expect([error.status, error.type, error.message]).toEqual([502, 'server_error', expect.stringContaining("the image vendor refused the gateway's credentials, so its channel was disabled")]);
    const id = taskIdIn(error.message)!;
    expect(id).toBeDefined();
    // the task is failed with that reason, in its first step (not at its deadline)
    const task = (await api(t.url, 'GET', `${KLING_DOOR}/${id}`, { key })).body.data;
    expect([task.task_status, task.task_status_msg]).toEqual(['failed', deadEndWords('image', 'task', 'auth')]);
    expect(await steps(id)).toBe(1);
    expect(await attempts(id)).toEqual([
      ['openai-stale-key', 'refused_account'],
      ['openai-stale-key', 'gateway_error'],
    ]);
    // the operator sees the same on the channel
    const [channel] = ((await admin('GET', '/admin/channels')).body as { name: string; status: string; status_reason: string }[]).filter((c) => c.name === 'openai-stale-key');
    expect([channel.status, channel.status_reason]).toEqual(['auto_disabled', expect.stringMatching(/^the upstream refused the account's credentials: /)]);
    // the next request: the disabled channel is not asked again; its task fails in its first step too
    // creates only: the periodic test of the auto-disabled channel (CHANNEL_TEST_INTERVAL_S) may probe GET /models meanwhile
    const creates = () => openaiFake.server.requests.filter((r) => r.method === 'POST' && r.url === '/v1/images/generations').length;
    const knocks = creates();
    const second = await refusal(openai.images.generate({ model: 'gpt-image-1', prompt: 'A lighthouse at dawn', size: '1024x1024' }));
    expect([second.status, second.message]).toEqual([502, expect.stringContaining("refused the gateway's credentials")]);
    const secondId = taskIdIn(second.message)!;
    expect([await steps(secondId), await attempts(secondId)]).toEqual([1, [['openai-stale-key', 'gateway_error']]]);
    expect(creates()).toBe(knocks);
  }, 60_000);

  it("Luma's door: a generation whose channel's key the vendor refuses fails in its first step, saying so", async () => {
    const creates = () => luma.server.requests.filter((r) => r.method === 'POST' && r.url === '/generations').length;
    const before = creates();
    const created = await api(t.url, 'POST', '/video-b/v1/generations', { key, body: { prompt: 'Waves on a pier', aspect_ratio: '16:9' } });
    expect(created.status).toBe(201);
    const done = await pollUntil(() => api(t.url, 'GET', `/video-b/v1/generations/${created.body.id}`, { key }), (r) => ['completed', 'failed'].includes(r.body.state), { what: 'the generation to end' });
    expect([done.body.state, done.body.failure_reason]).toEqual(['failed', deadEndWords('video', 'generation', 'auth')]);
    expect(await steps(created.body.id)).toBe(1);
    // one create, refused (the channel's periodic test may probe the vendor meanwhile: it is no create)
    expect(creates() - before).toBe(1);
  });
});

describe('content refusals fail over with RELAY_FAILOVER_ON_CONTENT=true, for every vendor that reports one', () => {
  let t: TestApp;
  let key: string;
  let bfl: FakeBfl;
  let gemini: FakeGemini;
  let openaiRefusing: FakeOpenAIImages;
  let openaiMaking: FakeOpenAIImages;
  const admin = (method: string, path: string, body?: unknown) => api(t.url, method, path, { key: ADMIN, body });

  beforeAll(async () => {
    [bfl, gemini, openaiRefusing, openaiMaking] = await Promise.all([startFakeBfl(BFL_KEY), startFakeGemini(GEMINI_KEY), startFakeOpenAIImages(OPENAI_KEY), startFakeOpenAIImages(`${OPENAI_KEY}-2`)]);
    bfl.knobs.pollsUntilReady = 1;
    bfl.knobs.moderate = 'Content Moderated';
    gemini.knobs.blockPrompt = true;
    openaiRefusing.knobs.moderation = true;
    // four tries: FLUX's task, Gemini's and OpenAI's refusals, then the channel that makes it
    t = await startTestApp({ IMAGE_PROVIDER: 'relay', ADMIN_API_KEY: ADMIN, OUTBOUND_ALLOW_HOSTS: '127.0.0.1', RELAY_POLL_MS: '100', RELAY_FAILOVER_ON_CONTENT: 'true', RELAY_UPSTREAM_ATTEMPTS: '4' });
    key = await t.createKey('team-content-failover');
    const add = async (name: string, priority: number, body: Record<string, unknown>) => expect([name, (await admin('POST', '/admin/channels', { name, operations: ['image'], priority, ...body })).status]).toEqual([name, 201]);
    await add('flux', 40, { protocol: 'bfl', base_url: bfl.url, credentials: { api_key: BFL_KEY } });
    await add('gemini', 30, { protocol: 'gemini', base_url: gemini.baseUrl, credentials: { api_key: GEMINI_KEY } });
    await add('openai-strict', 20, { protocol: 'openai', base_url: openaiRefusing.url, credentials: { api_key: OPENAI_KEY } });
    await add('openai-other', 10, { protocol: 'openai', base_url: openaiMaking.url, credentials: { api_key: `${OPENAI_KEY}-2` } });
  }, 60_000);
  afterAll(async () => {
    await t.close();
    await Promise.all([bfl.close(), gemini.close(), openaiRefusing.close(), openaiMaking.close()]);
  });

  it("FLUX's Content Moderated, Gemini's PROHIBITED_CONTENT and OpenAI's moderation_blocked each go on to the next capable channel; the task is made once and charged once", async () => {
    const usage = async () => (await api(t.url, 'GET', '/usage', { key })).body.operations.image;
    const charged = (await usage()).credits_charged;
    const created = await api(t.url, 'POST', KLING_DOOR, { key, body: { prompt: 'A red balloon over a city', aspect_ratio: '1:1' } });
    expect([created.status, created.body.code]).toEqual([200, 0]);
    const id = created.body.data.task_id as string;
    const task = (await pollUntil(() => api(t.url, 'GET', `${KLING_DOOR}/${id}`, { key }), (r) => ['succeed', 'failed'].includes(r.body.data?.task_status), { timeoutMs: 30_000, what: 'the image task' })).body.data;
    expect([task.task_status, task.task_status_msg, task.task_result.images.length]).toEqual(['succeed', '', 1]);
    const tries = ((await admin('GET', `/admin/tasks/${id}/attempts`)).body as { channel: string; outcome: string; message: string | null }[]).map((a) => [a.channel, a.outcome, a.message]);
    expect(tries).toEqual([
      ['flux', 'accepted', null],
      ['flux', 'abandoned', expect.stringMatching(/^the upstream failed the task: Content Moderated/)],
      ['gemini', 'failed', expect.stringMatching(/^the upstream refused the task: the upstream's safety filters blocked the prompt \(blockReason PROHIBITED_CONTENT\)/)],
      ['openai-strict', 'failed', expect.stringMatching(/^the upstream refused the task: the upstream's safety system refused the request \(moderation_blocked\)/)],
      ['openai-other', 'accepted', null],
    ]);
    // each vendor was asked once; the tenant was charged for one image
    expect([bfl.received.length, gemini.received.length, openaiRefusing.received.length, openaiMaking.received.length]).toEqual([1, 1, 1, 1]);
    expect((await usage()).credits_charged).toBe(charged + 1);
  }, 60_000);

  it('with no capable channel left, the task ends with the last vendor\'s words, as a content refusal (OpenAI\'s door: 400 moderation_blocked)', async () => {
    const other = ((await admin('GET', '/admin/channels')).body as { id: string; name: string }[]).find((c) => c.name === 'openai-other')!;
    expect((await admin('POST', `/admin/channels/${other.id}/disable`)).status).toBe(200);
    try {
      const openai = new OpenAI({ apiKey: key, baseURL: `${t.url}/openai/v1` });
      const refused = await refusal(openai.images.generate({ prompt: 'A red balloon over a village', size: '1024x1024' }));
      expect([refused.status, refused.code, refused.message]).toEqual([400, 'moderation_blocked', expect.stringMatching(/failed: the upstream refused the task: the upstream's safety system refused the request \(moderation_blocked\)/)]);
    } finally {
      await admin('POST', `/admin/channels/${other.id}/enable`);
    }
  }, 60_000);
});
