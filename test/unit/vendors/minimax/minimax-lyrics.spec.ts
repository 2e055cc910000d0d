import { bearerKey, UpstreamBusy, UpstreamRefused } from '../../../../src/infra/relay/upstream-client.js';
import type { LyricsRequest } from '../../../../src/vendors/contracts/lyrics-vendor.js';
import { UnusableAnswer, type VendorAccount } from '../../../../src/vendors/contracts/vendor.js';
import { MINIMAX_LYRICS_MODELS, minimaxLyricsRequestBody, minimaxLyricsText, MinimaxLyricsVendor } from '../../../../src/vendors/minimax/minimax-lyrics.vendor.js';
import { MINIMAX } from '../../../../src/vendors/minimax/minimax.vendor.js';
import { refusesContent } from '../../../../src/vendors/registry.js';
import { type FakeMinimax, startFakeMinimax } from '../../../support/vendors/minimax/minimax.fake.js';
import { realClient, thrown } from '../adapter-kit.js';

// MiniMax's Lyrics Generation reference (platform.minimax.io): answers under HTTP 200 with base_resp
const OK = { status_code: 0, status_msg: 'success' };
const ask = (prompt: string): LyricsRequest => ({ prompt, model: null });
const code = (status_code: number, status_msg = 'words') => ({ base_resp: { status_code, status_msg } });

describe('MiniMax lyrics: its model and its words', () => {
  const client = realClient();
  it('one model, one version a call, the 2000 characters of its prompt; the protocol and poll floor of its descriptor', () => {
    expect(MINIMAX_LYRICS_MODELS).toEqual([{ id: 'minimax-lyrics', promptMax: 2000, takes: 1 }]);
    expect([MinimaxLyricsVendor.protocol, MinimaxLyricsVendor.models]).toEqual([MINIMAX.protocol, MINIMAX_LYRICS_MODELS]);
    expect(new MinimaxLyricsVendor(client).minPollS).toBe(MINIMAX.pollFloorS);
  });

  it('the body: write_full_song with the theme as its prompt (none when empty: a song of its choosing); 2000 characters counted as code points, one more refused naming prompt', async () => {
    expect(minimaxLyricsRequestBody(ask('a summer day at the beach'))).toEqual({ mode: 'write_full_song', prompt: 'a summer day at the beach' });
    expect(minimaxLyricsRequestBody(ask(' '))).toEqual({ mode: 'write_full_song' });
    expect(minimaxLyricsRequestBody(ask('🌊'.repeat(2000))).prompt).toHaveLength(4000);
    const long = await thrown(() => minimaxLyricsRequestBody(ask('x'.repeat(2001))));
    expect([long instanceof UpstreamRefused, long.message]).toEqual([true, 'prompt: MiniMax takes at most 2000 characters of a lyrics theme; the request has 2001']);
  });

  it('the answer: its lyrics, song_title and style_tags as one version; a title or styles of another type left out', () => {
    expect(minimaxLyricsText({ song_title: 'Summer Breeze Promise', style_tags: 'Pop, Summer Vibe', lyrics: '[Intro]\n(Ooh)\n[Verse 1]\nSea breeze', base_resp: OK })).toEqual({
      title: 'Summer Breeze Promise',
      text: '[Intro]\n(Ooh)\n[Verse 1]\nSea breeze',
      style: 'Pop, Summer Vibe',
    });
    expect(minimaxLyricsText({ song_title: 12, style_tags: ['Pop'], lyrics: '[Verse]\nx', base_resp: OK })).toEqual({ title: null, text: '[Verse]\nx', style: null });
  });

  it('an answer it cannot use names the field: no lyrics, empty lyrics, lyrics of another type', async () => {
    for (const json of [{ base_resp: OK }, { lyrics: '  ', base_resp: OK }, { lyrics: 42, base_resp: OK }]) {
      const err = await thrown(() => minimaxLyricsText(json));
      expect([err instanceof UnusableAnswer, err.message]).toEqual([true, expect.stringMatching(/^the upstream answered the lyrics generation without a usable lyrics/)]);
    }
    const wrong = await thrown(() => minimaxLyricsText({ lyrics: 42, base_resp: OK }));
    expect(wrong.message).toMatch(/expected string/);
  });

  it('base_resp: content refusals (1026, 1027) in its descriptor’s words; busy; the key; the balance; its own failures as busy; parameters refused, not content', async () => {
    for (const [c, words] of [[1026, 'input new_sensitive'], [1027, 'output new_sensitive']] as const) {
      const refused = await thrown(() => minimaxLyricsText(code(c, words)));
      expect([refused instanceof UpstreamRefused, refused.message, refusesContent(MINIMAX.protocol, refused.message)]).toEqual([true, `content refused: ${words} (code ${c})`, true]);
    }
    expect(await thrown(() => minimaxLyricsText(code(1002, 'rate limit exceeded(RPM)')))).toBeInstanceOf(UpstreamBusy);
    expect(await thrown(() => minimaxLyricsText(code(1004, 'login fail')))).toMatchObject({ kind: 'auth' });
    expect(await thrown(() => minimaxLyricsText(code(1008, 'insufficient balance')))).toMatchObject({ kind: 'account' });
    expect(await thrown(() => minimaxLyricsText(code(1024, 'internal error')))).toBeInstanceOf(UpstreamBusy);
    const bad = await thrown(() => minimaxLyricsText(code(2013, 'invalid params, mode must be write_full_song or edit')));
    expect([bad instanceof UpstreamRefused && !(bad instanceof UpstreamBusy), refusesContent(MINIMAX.protocol, bad.message)]).toEqual([true, false]);
  });
});

describe('MiniMax lyrics: the adapter against its fake', () => {
  const KEY = 'minimax-lyrics-key';
  let fake: FakeMinimax;
  let account: VendorAccount;
  const vendor = new MinimaxLyricsVendor(realClient());
  const create = (prompt: string) => vendor.create(account, { request: ask(prompt), model: MINIMAX_LYRICS_MODELS[0], taskId: 'task-1' });

  beforeAll(async () => {
    fake = await startFakeMinimax(KEY);
    account = { baseUrl: fake.url, auth: bearerKey(KEY) };
  });
  afterAll(() => fake.close());
  beforeEach(() => {
    fake.musicCalls.length = 0;
    Object.assign(fake.minimaxKnobs, { busy: 0, noCredit: false, lyricsFail: undefined, lyricsHttp: undefined });
  });

  it('one call in its words, the lyrics made at once: its text with section tags, title and style tags', async () => {
    const answer = await create('a walk by the harbour');
    expect(fake.musicCalls).toEqual([{ path: '/v1/lyrics_generation', status: 200, code: 0, body: { mode: 'write_full_song', prompt: 'a walk by the harbour' } }]);
    expect(answer).toEqual({ made: [{ title: 'A Walk By The', text: expect.stringContaining('[Chorus]\nOh, a walk by the harbour'), style: 'Pop, Upbeat, Female Vocals' }] });
  });

  it('its refusals as the client throws them: content (1026) in its words, the balance, the key; its own failures and a 5xx as busy', async () => {
    fake.minimaxKnobs.lyricsFail = { code: 1026, message: 'input new_sensitive' };
    const refused = await thrown(create('something forbidden'));
    expect([refused instanceof UpstreamRefused, refused.message, refusesContent(MINIMAX.protocol, refused.message)]).toEqual([true, 'content refused: input new_sensitive (code 1026)', true]);
    fake.minimaxKnobs.lyricsFail = { code: 1024, message: 'internal error' };
    expect(await thrown(create('x'))).toBeInstanceOf(UpstreamBusy);
    fake.minimaxKnobs.lyricsHttp = 502;
    expect(await thrown(create('x'))).toBeInstanceOf(UpstreamBusy);
    fake.minimaxKnobs.lyricsHttp = undefined;
    fake.minimaxKnobs.noCredit = true;
    expect(await thrown(create('x'))).toMatchObject({ kind: 'account' });
    fake.minimaxKnobs.noCredit = false;
    expect(await thrown(vendor.create({ baseUrl: fake.url, auth: bearerKey('not-the-key') }, { request: ask('x'), model: MINIMAX_LYRICS_MODELS[0], taskId: 't' }))).toMatchObject({ kind: 'auth', status: 401 });
  });
});
