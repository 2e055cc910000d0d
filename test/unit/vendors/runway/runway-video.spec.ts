import type Runway from '@runwayml/sdk';
import { UpstreamRefused } from '../../../../src/infra/relay/upstream-client.js';
import { UnusableAnswer } from '../../../../src/vendors/contracts/vendor.js';
import { RUNWAY, RUNWAY_VERSION } from '../../../../src/vendors/runway/runway.vendor.js';
import { RUNWAY_MODELS, runwayBody, runwayCreditRefusal, runwayInline, runwayPath, runwayRatio, runwayStatus, RunwayVendor } from '../../../../src/vendors/runway/runway-video.vendor.js';
import { ask, canned, createOf, FRAME, model, realClient, thrown } from '../adapter-kit.js';

// Answers typed by @runwayml/sdk 4.20 (TaskRetrieveResponse): a change of the SDK's shapes breaks the build of these tests
const succeeded: Runway.TaskRetrieveResponse = { id: '17f20503-6c24-4c16-946b-35dbbce2af2f', createdAt: '2024-06-27T19:49:32.334Z', status: 'SUCCEEDED', output: ['https://dnznrvs05pmza.cloudfront.net/video.mp4'], cost: { credits: 50 } } as Runway.TaskRetrieveResponse;
const failed = { id: 't', createdAt: '2024-06-27T19:49:32.334Z', status: 'FAILED', failure: 'Prompt was flagged', failureCode: 'SAFETY.INPUT.TEXT', cost: { credits: 0 } } as Runway.TaskRetrieveResponse;
const running = { id: 't', createdAt: '2024-06-27T19:49:32.334Z', status: 'RUNNING', progress: 0.4, estimatedCost: { credits: 50 } } as unknown as Runway.TaskRetrieveResponse;

describe('Runway: the request mapping', () => {
  const gen45 = model(RUNWAY_MODELS, 'gen4.5');
  const veo = model(RUNWAY_MODELS, 'veo3.1');

  it('a prompt alone: text_to_video, 1280:720 and 5 s unless asked', () => {
    expect(runwayPath({})).toBe('text_to_video');
    expect(runwayBody(gen45, ask(), {})).toEqual({ model: 'gen4.5', promptText: 'A red fox running through snow', ratio: '1280:720', duration: 5 });
  });

  it('ratio by shape and height; one it does not make refused', async () => {
    expect(runwayRatio(ask({ aspectRatio: '9:16', resolution: '1080p' }))).toBe('1080:1920');
    expect(runwayRatio(ask({ aspectRatio: '21:9' }))).toBe('1584:672');
    expect((await thrown(() => runwayRatio(ask({ aspectRatio: '1:1', resolution: '1080p' })))).message).toBe('Runway makes no 1:1 video at 1080p');
  });

  it('a first frame alone is promptImage as a URI; with a last frame both positioned; seed; audio on the models that make sound', () => {
    expect(runwayPath({ first: 'https://img/a.png' })).toBe('image_to_video');
    expect(runwayBody(gen45, ask({ seed: 7, durationS: 8 }), { first: 'https://img/a.png' })).toEqual({ model: 'gen4.5', promptText: 'A red fox running through snow', ratio: '1280:720', duration: 8, promptImage: 'https://img/a.png', seed: 7 });
    expect(runwayBody(veo, ask({ audio: true }), { first: 'https://img/a.png', last: 'https://img/b.png' })).toEqual({
      model: 'veo3.1',
      promptText: 'A red fox running through snow',
      ratio: '1280:720',
      // veo3.1 makes no 5 s: its first duration
      duration: 4,
      promptImage: [
        { uri: 'https://img/a.png', position: 'first' },
        { uri: 'https://img/b.png', position: 'last' },
      ],
      audio: true,
    });
    expect(runwayBody(veo, ask(), {}).audio).toBe(false);
  });

  it('an image inline is a data: URI under 5 MB; none read, or too large, refused', async () => {
    expect(runwayInline(FRAME, 'first')).toBe(`data:image/png;base64,${FRAME.toString('base64')}`);
    expect((await thrown(() => runwayInline(undefined, 'last'))).message).toBe('the last frame could not be read');
    const large = Buffer.concat([FRAME, Buffer.alloc(4 * 1024 * 1024)]);
    expect((await thrown(() => runwayInline(large, 'first'))).message).toMatch(/too large for Runway inline/);
  });
});

describe('Runway: the answer reading', () => {
  it('SUCCEEDED: its first output and the credits it cost', () => {
    expect(runwayStatus(succeeded)).toEqual({ state: 'succeeded', videoUrl: 'https://dnznrvs05pmza.cloudfront.net/video.mp4', billed: { amount: 50, unit: 'credits' } });
  });

  it('PENDING, THROTTLED, RUNNING are work in progress (an estimated cost is not billed)', () => {
    expect(runwayStatus(running)).toEqual({ state: 'working' });
    expect(runwayStatus({ ...running, status: 'THROTTLED' })).toEqual({ state: 'working' });
  });

  it('FAILED: its words with its code in brackets (its moderation); CANCELLED; SUCCEEDED without output', () => {
    expect(runwayStatus(failed)).toEqual({ state: 'failed', reason: 'Prompt was flagged (SAFETY.INPUT.TEXT)', billed: { amount: 0, unit: 'credits' } });
    expect(RUNWAY.contentRefusal.test('Prompt was flagged (SAFETY.INPUT.TEXT)')).toBe(true);
    expect(runwayStatus({ status: 'FAILED' })).toEqual({ state: 'failed', reason: 'no reason given' });
    expect(runwayStatus({ status: 'CANCELLED', cost: { credits: 0 } })).toEqual({ state: 'failed', reason: 'the upstream task was cancelled', billed: { amount: 0, unit: 'credits' } });
    expect(runwayStatus({ status: 'SUCCEEDED', output: [] })).toEqual({ state: 'failed', reason: 'the upstream succeeded without a video' });
  });

  it('a malformed task names the field', async () => {
    expect((await thrown(() => runwayStatus({ status: 'SUCCEEDED', output: 'https://x' }))).message).toMatch(/the poll without a usable output/);
    expect((await thrown(() => runwayStatus({ output: [] }))).message).toMatch(/without a usable status/);
  });

  it('"not enough credits" under 400 is the account’s', () => {
    expect(runwayCreditRefusal(new UpstreamRefused('You do not have enough credits to run this task.', 400))).toMatchObject({ kind: 'account' });
    const other = new UpstreamRefused('Invalid ratio', 400);
    expect(runwayCreditRefusal(other)).toBe(other);
  });
});

describe('Runway: the adapter over HTTP', () => {
  const vendor = new RunwayVendor(realClient());

  it('reads its protocol and poll floor from its descriptor', () => {
    expect([vendor.protocol, vendor.minPollS]).toEqual([RUNWAY.protocol, RUNWAY.pollFloorS]);
  });

  it('creates with its version header, the gateway’s own frame inline, asks and cancels; an answer without an id is named', async () => {
    let created: unknown = { id: 'run-1' };
    const up = await canned((method, path) =>
      method === 'POST' && path === '/v1/image_to_video' ? { body: created } : method === 'POST' ? { status: 400, body: { error: 'You do not have enough credits to run this task.' } } : method === 'GET' ? { body: succeeded } : { status: 204, body: {} },
    );
    try {
      const request = ask({ firstFrame: { type: 'image', url: 'http://gw/own.png', hosted: true } });
      expect(await vendor.create(up.account, createOf(model(RUNWAY_MODELS, 'gen4_turbo'), request))).toEqual({ upstreamId: 'run-1', status: { state: 'working' } });
      expect(up.sent[0]).toMatchObject({ headers: { 'x-runway-version': RUNWAY_VERSION }, body: { promptImage: expect.stringMatching(/^data:image\/png;base64,/) } });
      expect(await vendor.query(up.account, 'run-1', true)).toMatchObject({ state: 'succeeded' });
      await vendor.cancel(up.account, 'run-1');
      expect(up.sent.map((s) => `${s.method} ${s.path}`)).toEqual(['POST /v1/image_to_video', 'GET /v1/tasks/run-1', 'DELETE /v1/tasks/run-1']);
      expect(await thrown(vendor.create(up.account, createOf(model(RUNWAY_MODELS, 'gen4.5'), ask())))).toMatchObject({ kind: 'account' });
      created = {};
      expect((await thrown(vendor.create(up.account, createOf(model(RUNWAY_MODELS, 'gen4_turbo'), request)))).message).toMatch(/the create request without a usable id/);
      expect(await thrown(vendor.create(up.account, createOf(model(RUNWAY_MODELS, 'gen4_turbo'), request)))).toBeInstanceOf(UnusableAnswer);
    } finally {
      await up.close();
    }
  });

  it('an HTTPS frame goes as its URL; a frame that cannot be read is refused before anything is sent', async () => {
    const up = await canned(() => ({ body: { id: 'run-2' } }));
    try {
      await vendor.create(up.account, createOf(model(RUNWAY_MODELS, 'gen4_turbo'), ask({ firstFrame: { type: 'image', url: 'https://img/a.png' } })));
      expect(up.sent[0].body).toMatchObject({ promptImage: 'https://img/a.png' });
      const err = await thrown(vendor.create(up.account, createOf(model(RUNWAY_MODELS, 'gen4_turbo'), ask({ firstFrame: { type: 'image', url: 'http://img/a.png' } }), { frameImage: async () => undefined })));
      expect([err.message, up.sent.length]).toEqual(['the first frame could not be read', 1]);
    } finally {
      await up.close();
    }
  });
});
