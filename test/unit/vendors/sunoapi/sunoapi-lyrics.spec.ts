import { UpstreamBusy, UpstreamRefused } from '../../../../src/infra/relay/upstream-client.js';
import type { LyricsCreate, LyricsStatus } from '../../../../src/vendors/contracts/lyrics-vendor.js';
import { UnusableAnswer } from '../../../../src/vendors/contracts/vendor.js';
import { refusesContent } from '../../../../src/vendors/registry.js';
import { SUNOAPI_NO_CALLBACK } from '../../../../src/vendors/sunoapi/sunoapi-music.vendor.js';
import {
  SUNOAPI_LYRICS_MODELS,
  SUNOAPI_LYRICS_PROMPT_MAX,
  sunoapiLyricsBody,
  sunoapiLyricsRecordStatus,
  sunoapiLyricsSubmitted,
  SunoapiLyricsVendor,
} from '../../../../src/vendors/sunoapi/sunoapi-lyrics.vendor.js';
import { SUNOAPI } from '../../../../src/vendors/sunoapi/sunoapi.vendor.js';
import { sendJson, startServer, type TestServer } from '../../../support/http-server.js';
import { pollUntil } from '../../../support/poll.js';
import { sunoapiLyricsRecordInfo } from '../../../support/vendors/sunoapi/sunoapi-bodies.js';
import { type FakeSunoapi, startFakeSunoapi } from '../../../support/vendors/sunoapi/sunoapi.fake.js';
import { loopbackUpstreamClient } from '../../../support/vendors/upstream-client.js';
import { thrown } from '../adapter-kit.js';

const KEY = 'sk-sunoapi-lyrics-test';
const model = SUNOAPI_LYRICS_MODELS[0];
/** docs.sunoapi.org's record-info example, as its bodies give it. */
const record = (status: 'PENDING' | 'SUCCESS' | 'CREATE_TASK_FAILED' | 'GENERATE_LYRICS_FAILED' | 'CALLBACK_EXCEPTION' | 'SENSITIVE_WORD_ERROR', more: { versions?: { text: string; title: string; status: 'complete' | 'failed'; errorMessage: string }[]; errorCode?: number | null; errorMessage?: string | null } = {}) =>
  sunoapiLyricsRecordInfo({ taskId: '11dc8b0f', param: { prompt: 'A song about peaceful night in the city' }, status, versions: more.versions ?? [], errorCode: more.errorCode ?? null, errorMessage: more.errorMessage ?? null }) as unknown as Record<string, unknown>;
const version = (text: string, title = 'Iron Man') => ({ text, title, status: 'complete' as const, errorMessage: '' });

describe('sunoapi lyrics: its model and its words', () => {
  it('one model, two versions a task, the 200 characters of its prompt; the protocol and poll floor of its descriptor', () => {
    expect(SUNOAPI_LYRICS_MODELS).toEqual([{ id: 'suno_lyrics', promptMax: 200, takes: 2 }]);
    expect([SunoapiLyricsVendor.protocol, SunoapiLyricsVendor.models]).toEqual([SUNOAPI.protocol, SUNOAPI_LYRICS_MODELS]);
    expect(new SunoapiLyricsVendor(loopbackUpstreamClient()).minPollS).toBe(SUNOAPI.pollFloorS);
  });

  it('the body: the prompt and the callBackUrl (its stand-in when the gateway has none); an empty prompt or one over 200 characters refused naming prompt', async () => {
    expect(sunoapiLyricsBody('a night in the city', 'https://gw.example/cb/1')).toEqual({ prompt: 'a night in the city', callBackUrl: 'https://gw.example/cb/1' });
    expect(sunoapiLyricsBody('a night', undefined)).toEqual({ prompt: 'a night', callBackUrl: SUNOAPI_NO_CALLBACK });
    // 200 characters as code points: an emoji is one
    expect(sunoapiLyricsBody('🌙'.repeat(SUNOAPI_LYRICS_PROMPT_MAX), undefined).prompt).toHaveLength(400);
    const long = await thrown(() => sunoapiLyricsBody('x'.repeat(SUNOAPI_LYRICS_PROMPT_MAX + 1), undefined));
    expect([long instanceof UpstreamRefused, long.message]).toEqual([true, 'prompt: the sunoapi.org family takes at most 200 characters of a lyrics theme; the request has 201']);
    expect((await thrown(() => sunoapiLyricsBody('  ', undefined))).message).toMatch(/^prompt: /);
  });

  it('a create’s answer: its taskId; a refusal under HTTP 200 thrown as the client throws it; a taskId of another type named', async () => {
    expect(sunoapiLyricsSubmitted({ code: 200, msg: 'success', data: { taskId: '5c79be8e' } })).toBe('5c79be8e');
    expect(await thrown(() => sunoapiLyricsSubmitted({ code: 413, msg: 'Theme or prompt too long', data: null }))).toMatchObject({ kind: 'request', status: 413 });
    expect(await thrown(() => sunoapiLyricsSubmitted({ code: 429, msg: 'The current credits are insufficient', data: null }))).toMatchObject({ kind: 'account' });
    expect(await thrown(() => sunoapiLyricsSubmitted({ code: 430, msg: 'Your call frequency is too high', data: null }))).toBeInstanceOf(UpstreamBusy);
    const wrong = await thrown(() => sunoapiLyricsSubmitted({ code: 200, msg: 'success', data: { taskId: 5079 } }));
    expect([wrong instanceof UnusableAnswer, wrong.message]).toEqual([true, expect.stringMatching(/^the upstream answered the lyrics task without a usable data\.taskId \(expected string/)]);
  });

  it('record-info: PENDING working; SUCCESS its two versions with their titles; older pages’ lyricsData read too', () => {
    expect(sunoapiLyricsRecordStatus(record('PENDING'))).toEqual({ state: 'working' });
    const two = [version('[Verse]\nWalking through the night'), version('[Verse]\nWind is calling', '')];
    expect(sunoapiLyricsRecordStatus(record('SUCCESS', { versions: two }))).toEqual({
      state: 'succeeded',
      lyrics: [
        { title: 'Iron Man', text: '[Verse]\nWalking through the night' },
        { title: null, text: '[Verse]\nWind is calling' },
      ],
    });
    const older = { code: 200, msg: 'success', data: { taskId: 't', status: 'SUCCESS', response: { taskId: 't', lyricsData: [version('[Chorus]\nla')] } } };
    expect(sunoapiLyricsRecordStatus(older)).toEqual({ state: 'succeeded', lyrics: [{ title: 'Iron Man', text: '[Chorus]\nla' }] });
    // CALLBACK_EXCEPTION (its call to our callBackUrl failed) with versions written is the lyrics made
    expect(sunoapiLyricsRecordStatus(record('CALLBACK_EXCEPTION', { versions: two })).state).toBe('succeeded');
  });

  it('a version that failed is left out; a SUCCESS whose versions all failed is failed with their words; one with none is unusable, naming the field', async () => {
    const mixed = [{ text: '', title: '', status: 'failed' as const, errorMessage: 'generation failed' }, version('[Verse]\nkept')];
    expect(sunoapiLyricsRecordStatus(record('SUCCESS', { versions: mixed }))).toEqual({ state: 'succeeded', lyrics: [{ title: 'Iron Man', text: '[Verse]\nkept' }] });
    expect(sunoapiLyricsRecordStatus(record('SUCCESS', { versions: [mixed[0]] }))).toEqual({ state: 'failed', reason: 'generation failed (SUCCESS, no version written)', secrets: ['11dc8b0f'] });
    const none = await thrown(() => sunoapiLyricsRecordStatus(record('SUCCESS')));
    expect([none instanceof UnusableAnswer, none.message]).toEqual([true, expect.stringContaining('without a usable data.response.data')]);
  });

  it('its failed states with their words, state and code; SENSITIVE_WORD_ERROR reads as a content refusal, the others not', () => {
    const refused = sunoapiLyricsRecordStatus(record('SENSITIVE_WORD_ERROR', { errorCode: 400, errorMessage: 'Content contains prohibited words' }));
    expect(refused).toEqual({ state: 'failed', reason: 'Content contains prohibited words (SENSITIVE_WORD_ERROR, code 400)', secrets: ['11dc8b0f'] });
    expect(refusesContent('sunoapi', (refused as { reason: string }).reason)).toBe(true);
    const failed = sunoapiLyricsRecordStatus(record('GENERATE_LYRICS_FAILED'));
    expect(failed).toEqual({ state: 'failed', reason: 'failed to generate lyrics (GENERATE_LYRICS_FAILED)', secrets: ['11dc8b0f'] });
    expect(refusesContent('sunoapi', (failed as { reason: string }).reason)).toBe(false);
    expect(sunoapiLyricsRecordStatus(record('CREATE_TASK_FAILED', { errorMessage: 'create failed' }))).toMatchObject({ state: 'failed', reason: 'create failed (CREATE_TASK_FAILED)' });
    expect(sunoapiLyricsRecordStatus(record('CALLBACK_EXCEPTION'))).toMatchObject({ state: 'failed', reason: 'an error occurred during the callback (CALLBACK_EXCEPTION)' });
    // a failed state it does not document yet still ends the task
    expect(sunoapiLyricsRecordStatus({ code: 200, data: { taskId: 't', status: 'GENERATE_TEXT_ERROR' } })).toMatchObject({ state: 'failed', reason: 'the lyrics task failed (GENERATE_TEXT_ERROR)' });
  });

  it('an answer it cannot use names the field: no status, a status of another type; versions of another type are read as none', async () => {
    for (const data of [{ taskId: 't' }, { taskId: 't', status: 3 }]) {
      const err = await thrown(() => sunoapiLyricsRecordStatus({ code: 200, msg: 'success', data }));
      expect([err instanceof UnusableAnswer, err.message]).toEqual([true, expect.stringMatching(/^the upstream answered the lyrics record-info query without a usable data\.status/)]);
    }
    expect(sunoapiLyricsRecordStatus({ code: 200, data: { taskId: 't', status: 'SUCCESS', response: { data: [{ text: 7, title: 'x' }, 'junk', version('[Verse]\nok')] } } })).toEqual({ state: 'succeeded', lyrics: [{ title: 'Iron Man', text: '[Verse]\nok' }] });
    expect(await thrown(() => sunoapiLyricsRecordStatus({ code: 401, msg: 'You do not have access permissions' }))).toMatchObject({ kind: 'auth' });
  });
});

describe('sunoapi lyrics: the adapter against its fake', () => {
  const client = loopbackUpstreamClient();
  const vendor = new SunoapiLyricsVendor(client);
  let fake: FakeSunoapi;
  let gateway: TestServer;
  const received: unknown[] = [];
  const account = () => ({ baseUrl: fake.url, auth: SUNOAPI.auth({ api_key: KEY }) });
  const create = (prompt: string): LyricsCreate => ({ request: { prompt, model: null }, model, taskId: 'task-1', callbackUrl: `${gateway.url}/callbacks/task-1` });
  const ended = (id: string) => pollUntil(() => vendor.query(account(), id, true), (s: LyricsStatus) => s.state !== 'working', { what: `lyrics task ${id} ends` });

  beforeAll(async () => {
    gateway = await startServer((req, res) => (received.push(JSON.parse(req.body.toString())), sendJson(res, 200, { ok: true })));
  });
  afterAll(() => gateway.close());
  beforeEach(async () => {
    received.length = 0;
    fake = await startFakeSunoapi(KEY);
    fake.knobs.pollsUntilDone = 3;
  });
  afterEach(() => fake.close());

  it('lyrics asked in its words, polled from PENDING to SUCCESS: its two versions; it called back once, at complete', async () => {
    const { upstreamId } = (await vendor.create(account(), create('a quiet night in the city'))) as { upstreamId: string };
    expect(fake.lyrics.get(upstreamId)?.body).toEqual({ prompt: 'a quiet night in the city', callBackUrl: `${gateway.url}/callbacks/task-1` });
    expect(await vendor.query(account(), upstreamId, true)).toEqual({ state: 'working' });
    const done = await ended(upstreamId);
    expect(done).toEqual({ state: 'succeeded', lyrics: [expect.objectContaining({ title: 'A Quiet Night' }), expect.objectContaining({ title: 'A Quiet Night' })] });
    expect((done as { lyrics: { text: string }[] }).lyrics.map((l) => l.text)).toEqual([expect.stringMatching(/^\[Verse\]\n.*a quiet night in the city/), expect.stringMatching(/\[Chorus\]\nSing of a quiet night in the city/)]);
    await pollUntil(async () => received.length, (n) => n > 0, { what: 'the complete callback' });
    expect(received).toEqual([{ code: 200, msg: 'All generated successfully.', data: { callbackType: 'complete', taskId: upstreamId, data: [expect.objectContaining({ status: 'complete' }), expect.objectContaining({ status: 'complete' })] } }]);
  });

  it('a content refusal ends the task with its words (a content refusal by its descriptor), called back as an error', async () => {
    fake.lyricsEnding = { kind: 'failure', status: 'SENSITIVE_WORD_ERROR', errorCode: 400, errorMessage: 'Content contains prohibited words' };
    const { upstreamId } = (await vendor.create(account(), create('something forbidden'))) as { upstreamId: string };
    const done = await ended(upstreamId);
    expect(done).toEqual({ state: 'failed', reason: 'Content contains prohibited words (SENSITIVE_WORD_ERROR, code 400)', secrets: [upstreamId] });
    expect(refusesContent(SUNOAPI.protocol, (done as { reason: string }).reason)).toBe(true);
    await pollUntil(async () => received.length, (n) => n > 0, { what: 'the error callback' });
    expect(received).toEqual([{ code: 400, msg: 'Content contains prohibited words', data: { callbackType: 'error', taskId: upstreamId, data: null } }]);
  });

  it('its refusals as the client throws them: the key, the credits, busy; a prompt too long never sent', async () => {
    expect(await thrown(vendor.create({ baseUrl: fake.url, auth: SUNOAPI.auth({ api_key: 'wrong' }) }, create('x')))).toMatchObject({ kind: 'auth' });
    fake.credits = 0;
    expect(await thrown(vendor.create(account(), create('x')))).toMatchObject({ kind: 'account' });
    fake.credits = 10;
    fake.knobs.createBusy = 1;
    expect(await thrown(vendor.create(account(), create('x')))).toBeInstanceOf(UpstreamBusy);
    expect(await thrown(vendor.create(account(), create('x'.repeat(201))))).toMatchObject({ kind: 'request', message: expect.stringMatching(/^prompt: /) });
    expect(fake.lyrics.size).toBe(0);
  });

  it('the fake keeps its rules: a prompt over 200 characters is its 413, no callBackUrl its 400', async () => {
    const post = async (body: Record<string, unknown>) => (await fetch(`${fake.url}/api/v1/lyrics`, { method: 'POST', headers: { authorization: `Bearer ${KEY}`, 'content-type': 'application/json' }, body: JSON.stringify(body) })).json();
    expect(await post({ prompt: 'x'.repeat(201), callBackUrl: 'https://gw.example/cb' })).toEqual({ code: 413, msg: 'Theme or prompt too long', data: null });
    expect(await post({ prompt: 'x' })).toEqual({ code: 400, msg: 'Please enter callBackUrl.', data: null });
  });
});
