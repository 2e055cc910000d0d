import { runLumaSdk } from '../clients/luma-sdk.client.js';
import { type HeldFiles, startHeldFiles } from '../support/held-files.js';
import { probeVideo } from '../support/media.js';
import { startTestApp, type TestApp } from '../support/test-app.js';

/** The official lumaai SDK, with baseURL <gateway>/video-b/v1, as a team switching from Luma would use it. */
describe('the official lumaai SDK', () => {
  let t: TestApp;
  let keyframe: HeldFiles;
  beforeAll(async () => {
    t = await startTestApp({ ALLOW_PRIVATE_URLS: 'true', DEFAULT_MONTHLY_CREDITS: '100' });
    // the sample keyframe, served when the test lets it: the generation that fetches it dreams until the SDK's poll
    // loop has seen it (or another) dreaming, however slow the machine (a sandbox delay only made that likely)
    keyframe = await startHeldFiles('image/jpeg', Buffer.from(await (await fetch(`${t.url}/samples/keyframe.jpg`)).arrayBuffer()));
  });
  afterAll(async () => {
    await keyframe.close(); // a held step would keep the app's close waiting
    await t.close();
  });

  it('creates (prompt only, and with a keyframe), polls through dreaming to completed, lists, deletes, pings, reads credits', async () => {
    const key = await t.createKey('luma-team');
    const run = await runLumaSdk(`${t.url}/video-b/v1`, key, `${keyframe.url}/keyframe.jpg`, () => keyframe.release());

    for (const generation of run.created) {
      expect(generation).toEqual(expect.objectContaining({ id: expect.any(String), generation_type: 'video', state: 'pending', created_at: expect.any(String) }));
      expect(generation).not.toHaveProperty('failure_reason');
      expect(generation).not.toHaveProperty('assets');
    }
    expect(run.created.map((g) => g.model)).toEqual(['ray-2', 'ray-flash-2']);
    expect(run.sawDreaming).toBe(true);
    for (const generation of run.completed) {
      expect(generation.state).toBe('completed');
      expect(generation.assets?.video).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/media\//);
    }
    // Luma's duration and resolution are honoured: 5 s, 540 px high
    const video = Buffer.from(await (await fetch(run.completed[0].assets!.video!)).arrayBuffer());
    const info = await probeVideo(video);
    expect([info.codec, Math.round(info.durationS), info.height]).toEqual(['h264', 5, 540]);

    expect(run.listed.generations.map((g) => g.id)).toEqual(expect.arrayContaining(run.created.map((g) => g.id)));
    expect(run.listed).toEqual(expect.objectContaining({ count: 2, has_more: false, limit: 10, offset: 0 }));
    expect(run.deletedThenMissing).toBe(true);
    expect(run.pong).toBe('pong');
    // credits.get(): 1 credit per second of video, 5 s each (the second generation's default duration)
    expect(run.credits).toEqual([100, 90]);
    expect(run.unsupported).toMatch(/image generation .* is not supported by this gateway/);
  }, 120_000);
});
