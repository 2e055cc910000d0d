import RunwayML from '@runwayml/sdk';
import type { FakeVideoVendor } from '../support/vendors/video-fake.js';
import { startFakeRunway } from '../support/vendors/runway/runway.fake.js';
import { probeVideo } from '../support/media.js';

const KEY = `key_${'cd'.repeat(64)}`;

/** The fake Runway the vendor tests use is driven here by Runway's own SDK: what it sends, the fake takes; what the fake answers, the SDK reads. */
describe('the fake Runway, driven by @runwayml/sdk', () => {
  let runway: FakeVideoVendor;
  let client: RunwayML;
  beforeAll(async () => {
    runway = await startFakeRunway(KEY);
    runway.knobs.pollsUntilDone = 1;
    client = new RunwayML({ apiKey: KEY, baseURL: runway.url, maxRetries: 0 });
  });
  afterAll(() => runway.close());

  it('creates an image-to-video task, waits for its output, downloads it, deletes the task', async () => {
    const task = await client.imageToVideo
      .create({ model: 'gen4.5', promptImage: 'https://images.example.com/first.png', promptText: 'a boat', ratio: '1280:720', duration: 5 })
      .waitForTaskOutput({ timeout: 60_000 });
    expect(task.status).toBe('SUCCEEDED');
    const video = await probeVideo(Buffer.from(await (await fetch(task.output![0])).arrayBuffer()));
    expect([video.width, video.height, Math.round(video.durationS)]).toEqual([1280, 720, 5]);
    // the SDK sent the version header and the body as its types say
    const sent = runway.server.requests.find((r) => r.method === 'POST')!;
    expect(sent.headers['x-runway-version']).toBe('2024-11-06');
    expect(JSON.parse(sent.body.toString())).toEqual({ model: 'gen4.5', promptImage: 'https://images.example.com/first.png', promptText: 'a boat', ratio: '1280:720', duration: 5 });
    await client.tasks.delete(task.id);
    await expect(client.tasks.retrieve(task.id)).rejects.toBeInstanceOf(RunwayML.NotFoundError);
  }, 60_000);

  it('a text-to-video of Veo with first and last frames as data: URIs; failures and refusals as the SDK reads them', async () => {
    const frame = `data:image/png;base64,${Buffer.from('not really a png').toString('base64')}`;
    const created = await client.imageToVideo.create({ model: 'veo3.1', promptImage: [{ uri: frame, position: 'first' }, { uri: frame, position: 'last' }], ratio: '1920:1080', duration: 8 });
    expect(created.id).toMatch(/^[0-9a-f-]{36}$/);
    runway.knobs.failWith = 'The input image was flagged';
    runway.knobs.failCode = 'SAFETY.INPUT.IMAGE';
    const failed = await client.tasks.retrieve(created.id);
    expect(failed).toEqual(expect.objectContaining({ status: 'FAILED', failure: 'The input image was flagged', failureCode: 'SAFETY.INPUT.IMAGE' }));
    runway.knobs.failWith = undefined;
    await expect(client.imageToVideo.create({ model: 'gen4.5', promptImage: 'http://images.example.com/a.png', promptText: 'x', ratio: '1280:720', duration: 5 })).rejects.toBeInstanceOf(RunwayML.BadRequestError);
    await expect(client.textToVideo.create({ model: 'veo3.1', promptText: 'x', ratio: '1280:720', duration: 5 } as never)).rejects.toThrow(/duration/);
    const bad = new RunwayML({ apiKey: 'key_wrong', baseURL: runway.url, maxRetries: 0 });
    await expect(bad.organization.retrieve()).rejects.toBeInstanceOf(RunwayML.AuthenticationError);
    expect((await client.organization.retrieve()).creditBalance).toBe(1000);
  });
});
