import { bearerKey, UpstreamBusy, UpstreamRefused } from '../../../../src/infra/relay/upstream-client.js';
import type { LyricsRequest } from '../../../../src/vendors/contracts/lyrics-vendor.js';
import { UnusableAnswer, type VendorAccount } from '../../../../src/vendors/contracts/vendor.js';
import { MUREKA_LYRICS_MODELS, murekaLyricsRequestBody, murekaLyricsText, MurekaLyricsVendor } from '../../../../src/vendors/mureka/mureka-lyrics.vendor.js';
import { MUREKA } from '../../../../src/vendors/mureka/mureka.vendor.js';
import { refusesContent } from '../../../../src/vendors/registry.js';
import { type FakeMureka, startFakeMureka } from '../../../support/vendors/mureka/mureka.fake.js';
import { realClient, thrown } from '../adapter-kit.js';

const ask = (prompt: string): LyricsRequest => ({ prompt, model: null });

describe('Mureka lyrics: its model and its words', () => {
  const client = realClient();
  it('one model, one version a call, 1024 characters of prompt; the protocol and poll floor of its descriptor', () => {
    expect(MUREKA_LYRICS_MODELS).toEqual([{ id: 'mureka-lyrics', promptMax: 1024, takes: 1 }]);
    expect([MurekaLyricsVendor.protocol, MurekaLyricsVendor.models]).toEqual([MUREKA.protocol, MUREKA_LYRICS_MODELS]);
    expect(new MurekaLyricsVendor(client).minPollS).toBe(MUREKA.pollFloorS);
  });

  it('the body: the theme as its prompt (required); an empty prompt, or one over 1024 characters, refused naming prompt', async () => {
    expect(murekaLyricsRequestBody(ask('Embrace of night'))).toEqual({ prompt: 'Embrace of night' });
    expect(murekaLyricsRequestBody(ask('x'.repeat(1024)))).toEqual({ prompt: 'x'.repeat(1024) });
    const long = await thrown(() => murekaLyricsRequestBody(ask('x'.repeat(1025))));
    expect([long instanceof UpstreamRefused, long.message]).toEqual([true, 'prompt: Mureka is given at most 1024 characters of a lyrics theme here; the request has 1025']);
    expect((await thrown(() => murekaLyricsRequestBody(ask(' ')))).message).toMatch(/^prompt: /);
  });

  it('the answer ({title, lyrics}): one version; a title of another type or empty left out', () => {
    expect(murekaLyricsText({ title: 'Embrace of Night', lyrics: '[Verse]\nIn the shadows' })).toEqual({ title: 'Embrace of Night', text: '[Verse]\nIn the shadows' });
    expect(murekaLyricsText({ title: 7, lyrics: '[Verse]\nx' })).toEqual({ title: null, text: '[Verse]\nx' });
    expect(murekaLyricsText({ title: ' ', lyrics: '[Verse]\nx' })).toEqual({ title: null, text: '[Verse]\nx' });
  });

  it('an answer it cannot use names the field: no lyrics, empty lyrics, lyrics of another type', async () => {
    for (const json of [{ title: 'x' }, { title: 'x', lyrics: ' ' }, { title: 'x', lyrics: ['la'] }]) {
      const err = await thrown(() => murekaLyricsText(json));
      expect([err instanceof UnusableAnswer, err.message]).toEqual([true, expect.stringMatching(/^the upstream answered the lyrics generation without a usable lyrics/)]);
    }
    expect((await thrown(() => murekaLyricsText({ lyrics: ['la'] }))).message).toMatch(/expected string/);
  });
});

describe('Mureka lyrics: the adapter against its fake', () => {
  const KEY = 'mureka-lyrics-key';
  let fake: FakeMureka;
  let account: VendorAccount;
  const vendor = new MurekaLyricsVendor(realClient());
  const create = (prompt: string) => vendor.create(account, { request: ask(prompt), model: MUREKA_LYRICS_MODELS[0], taskId: 'task-1' });

  beforeAll(async () => {
    fake = await startFakeMureka(KEY);
    account = { baseUrl: fake.url, auth: bearerKey(KEY) };
  });
  afterAll(() => fake.close());
  beforeEach(() => {
    fake.lyricsAsked.length = 0;
    fake.lyricsRefusal = undefined;
  });

  it('one call in its words, the lyrics made at once with their title', async () => {
    expect(await create('a calm night by the harbour')).toEqual({ made: [{ title: 'Embrace of Night', text: expect.stringMatching(/^\[Verse\]\nIn the shadows of a calm night by the harbour/) }] });
    expect(fake.lyricsAsked).toEqual([{ prompt: 'a calm night by the harbour' }]);
  });

  it('a refusal for content in its words reads as a content refusal (its descriptor’s), a parameter refusal not; the quota is the account’s; a 5xx busy; the key refused', async () => {
    fake.lyricsRefusal = { status: 400, message: 'The prompt contains sensitive content' };
    const refused = await thrown(create('something forbidden'));
    expect([refused instanceof UpstreamRefused, refused.message, refusesContent(MUREKA.protocol, refused.message)]).toEqual([true, expect.stringContaining('The prompt contains sensitive content'), true]);
    fake.lyricsRefusal = { status: 400, message: 'prompt is too long' };
    expect(refusesContent(MUREKA.protocol, (await thrown(create('x'))).message)).toBe(false);
    fake.lyricsRefusal = { status: 429, message: 'You exceeded your current quota, please check your billing details' };
    expect(await thrown(create('x'))).toMatchObject({ kind: 'account' });
    fake.lyricsRefusal = { status: 503, message: 'The engine is currently overloaded' };
    expect(await thrown(create('x'))).toBeInstanceOf(UpstreamBusy);
    expect(await thrown(vendor.create({ baseUrl: fake.url, auth: bearerKey('not-the-key') }, { request: ask('x'), model: MUREKA_LYRICS_MODELS[0], taskId: 't' }))).toMatchObject({ kind: 'auth' });
    expect(fake.lyricsAsked).toHaveLength(4);
  });
});
