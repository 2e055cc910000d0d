import { bearerKey, UpstreamBusy, UpstreamGenerationFailed, UpstreamRefused } from '../../../../src/infra/relay/upstream-client.js';
import type { MusicClipStatus, MusicRequest } from '../../../../src/vendors/contracts/music-vendor.js';
import { UnusableAnswer, type VendorAccount } from '../../../../src/vendors/contracts/vendor.js';
import { MINIMAX } from '../../../../src/vendors/minimax/minimax.vendor.js';
import {
  lyricsToWrite,
  MINIMAX_MUSIC_MODELS,
  minimaxLyricsBody,
  minimaxLyricsWritten,
  minimaxMusicBody,
  minimaxMusicMade,
  MinimaxMusicVendor,
} from '../../../../src/vendors/minimax/minimax-music.vendor.js';
import { MUSIC_VENDORS } from '../../../../src/vendors/music-vendors.js';
import { type FakeMinimax, startFakeMinimax } from '../../../support/vendors/minimax/minimax.fake.js';
import { decodedSeconds } from '../../../support/vendors/speech-audio.js';
import { realClient, thrown } from '../adapter-kit.js';

// MiniMax's Music Generation and Lyrics Generation references (platform.minimax.io): answers under HTTP 200 with base_resp
const OK = { status_code: 0, status_msg: 'success' };
const AUDIO_SETTING = { sample_rate: 44100, bitrate: 256000, format: 'mp3' };
const song = (over: Partial<MusicRequest> = {}): MusicRequest => ({ lyrics: null, description: null, style: null, avoidStyle: null, title: null, model: 'music-2.6', instrumental: false, durationS: null, continues: null, ...over });
const model = (id = 'music-2.6') => MINIMAX_MUSIC_MODELS.find((m) => m.id === id)!;
/** Its documented answer: the song as hex, status 2, extra_info, base_resp. */
const made = (audio: string, more: object = {}) => ({ data: { audio, status: 2 }, trace_id: '04ede0ab069fb1ba8be5156a24b1e081', extra_info: { music_duration: 25364, music_sample_rate: 44100, music_channel: 2, bitrate: 256000, music_size: 813651 }, analysis_info: null, base_resp: OK, ...more });
const code = (status_code: number, status_msg = 'words') => ({ base_resp: { status_code, status_msg } });

describe('MiniMax music: its models', () => {
  it('music-2.6 and music-2.6-free: lyrics, a description, instrumental; no continuation, no duration, one MP3 take; its documented limits', () => {
    expect(MINIMAX_MUSIC_MODELS.map((m) => m.id)).toEqual(['music-2.6', 'music-2.6-free']);
    for (const m of MINIMAX_MUSIC_MODELS) {
      expect(m).toEqual({ id: m.id, lyrics: true, description: true, instrumental: true, continueUpload: false, continueOwn: false, durationS: null, takes: 1, lyricsMax: 3500, descriptionMax: 2000, styleMax: 2000, format: 'mp3' });
    }
  });

  it('its protocol is its descriptor’s, which declares music; it is a music vendor of the registry', () => {
    expect(MinimaxMusicVendor.protocol).toBe(MINIMAX.protocol);
    expect(MINIMAX.operations).toEqual(['video', 'music', 'lyrics']);
    expect(MUSIC_VENDORS).toContain(MinimaxMusicVendor);
  });
});

describe('MiniMax music: the bodies', () => {
  it('a song with lyrics: the model, the style as its prompt, the lyrics, MP3 at 44.1 kHz and 256 kb/s, hex', () => {
    const lyrics = '[Verse]\nStreetlights flicker\n[Chorus]\nPushing the wooden door';
    expect(minimaxMusicBody(model(), song({ lyrics, style: 'Indie folk, melancholic' }))).toEqual({ model: 'music-2.6', prompt: 'Indie folk, melancholic', lyrics, audio_setting: AUDIO_SETTING, output_format: 'hex' });
    // no style: no prompt (optional for a song with vocals)
    expect(minimaxMusicBody(model('music-2.6-free'), song({ lyrics }))).toEqual({ model: 'music-2.6-free', lyrics, audio_setting: AUDIO_SETTING, output_format: 'hex' });
  });

  it('nothing asked is dropped: a description beside the lyrics and the styles to avoid go into the prompt, in that order', () => {
    const body = minimaxMusicBody(model(), song({ lyrics: '[Verse]\nla la', style: 'Blues', description: 'a rainy night in a bar', avoidStyle: 'drums' }));
    expect(body.prompt).toBe('Blues\na rainy night in a bar\nAvoid: drums');
  });

  it('an instrumental song: is_instrumental, its style and description as the prompt, no lyrics; without either it is refused before any call', async () => {
    expect(minimaxMusicBody(model(), song({ instrumental: true, style: 'lo-fi hip hop', description: 'for studying' }))).toEqual({
      model: 'music-2.6',
      prompt: 'lo-fi hip hop\nfor studying',
      is_instrumental: true,
      audio_setting: AUDIO_SETTING,
      output_format: 'hex',
    });
    const refused = await thrown(() => minimaxMusicBody(model(), song({ instrumental: true })));
    expect(refused).toBeInstanceOf(UpstreamRefused);
    expect(refused).toMatchObject({ status: 400, kind: 'request', message: expect.stringMatching(/instrumental music from a prompt: the request needs a style or a description/) });
  });

  it('lyrics are written first for a song with vocals and none given: on its description, else its style, else a theme of its choosing; the title kept', () => {
    expect(lyricsToWrite(song({ description: 'a summer day at the beach', style: 'Pop', title: 'Beach' }))).toEqual({ prompt: 'a summer day at the beach', title: 'Beach' });
    expect(lyricsToWrite(song({ style: 'Pop' }))).toEqual({ prompt: 'Pop', title: null });
    expect(lyricsToWrite(song({ description: '  ' }))).toEqual({ prompt: '', title: null });
    expect(lyricsToWrite(song({ lyrics: '[Verse]\nhi', description: 'x' }))).toBeUndefined();
    expect(lyricsToWrite(song({ instrumental: true, description: 'x' }))).toBeUndefined();
    expect(minimaxLyricsBody('a summer day at the beach', 'Beach')).toEqual({ mode: 'write_full_song', prompt: 'a summer day at the beach', title: 'Beach' });
    expect(minimaxLyricsBody('', null)).toEqual({ mode: 'write_full_song' });
  });

  it('a description song sings the written lyrics, to the asked style, else to the style tags they came with; the description wrote them and is not sent again', () => {
    const written = { lyrics: '[Verse]\nSea breeze', title: 'Summer', style: 'Pop, Summer Vibe' };
    expect(minimaxMusicBody(model(), song({ description: 'a day at the beach', style: 'Reggae' }), written)).toEqual({ model: 'music-2.6', prompt: 'Reggae', lyrics: '[Verse]\nSea breeze', audio_setting: AUDIO_SETTING, output_format: 'hex' });
    expect(minimaxMusicBody(model(), song({ description: 'a day at the beach' }), written).prompt).toBe('Pop, Summer Vibe');
  });

  it('its limits, counted in characters as MiniMax counts them: 2000 of prompt, 3500 of lyrics, 2000 of a lyrics theme; one more is refused naming the field', async () => {
    // code points, not UTF-16 units: 2000 notes are 4000 units
    expect(minimaxMusicBody(model(), song({ lyrics: 'la', style: '🎵'.repeat(2000) })).prompt).toHaveLength(4000);
    expect((await thrown(() => minimaxMusicBody(model(), song({ lyrics: 'la', style: 'x'.repeat(1000), description: 'y'.repeat(1000) })))).message).toBe(
      'MiniMax takes at most 2000 characters of style and description together; the request has 2001',
    );
    expect(minimaxMusicBody(model(), song({ lyrics: 'l'.repeat(3500) })).lyrics).toHaveLength(3500);
    expect(await thrown(() => minimaxMusicBody(model(), song({ lyrics: 'l'.repeat(3501) })))).toMatchObject({ status: 400, kind: 'request', message: 'MiniMax takes at most 3500 characters of lyrics; the request has 3501' });
    expect(minimaxLyricsBody('d'.repeat(2000), null).prompt).toHaveLength(2000);
    expect((await thrown(() => minimaxLyricsBody('d'.repeat(2001), null))).message).toBe('MiniMax takes at most 2000 characters of description; the request has 2001');
  });
});

describe('MiniMax music: the answers', () => {
  it('the song’s hex decoded to its bytes, as MP3; a link (output_format url) kept to be fetched', () => {
    const bytes = Buffer.from([0x49, 0x44, 0x33, 0x04, 0x00, 0xff, 0xfb, 0x90]);
    expect(minimaxMusicMade(made(bytes.toString('hex')))).toEqual({ audio: { bytes, format: 'mp3' } });
    expect(minimaxMusicMade(made(bytes.toString('hex').toUpperCase()))).toEqual({ audio: { bytes, format: 'mp3' } });
    expect(minimaxMusicMade(made('https://cdn.minimax.io/music/a.mp3?Expires=1'))).toEqual({ audioUrl: 'https://cdn.minimax.io/music/a.mp3?Expires=1' });
    // extra_info is optional: the song is what counts
    expect(minimaxMusicMade({ data: { audio: 'fffb', status: 2 }, base_resp: OK })).toEqual({ audio: { bytes: Buffer.from([0xff, 0xfb]), format: 'mp3' } });
  });

  it('an answer it cannot use names the field: no audio, audio neither hex nor a link, a song still being made', async () => {
    const unusable = async (json: Record<string, unknown>) => {
      const err = await thrown(() => minimaxMusicMade(json));
      expect(err).toBeInstanceOf(UnusableAnswer);
      return err.message;
    };
    expect(await unusable({ base_resp: OK })).toMatch(/^the upstream answered the music generation without a usable data /);
    expect(await unusable({ data: { status: 2 }, base_resp: OK })).toMatch(/without a usable data\.audio/);
    expect(await unusable(made(''))).toMatch(/without a usable data\.audio \(neither hex-encoded audio nor a URL\)/);
    expect(await unusable(made('abc'))).toMatch(/data\.audio \(neither hex-encoded audio nor a URL\)/);
    expect(await unusable(made('zz00'))).toMatch(/data\.audio/);
    expect(await unusable({ data: { audio: 'fffb', status: 1 }, base_resp: OK })).toMatch(/without a usable data\.status/);
  });

  it('base_resp: busy, credentials, balance, content refusals (its descriptor’s), its own failures as busy (nothing left running), parameters refused', async () => {
    expect(await thrown(() => minimaxMusicMade(code(1002, 'rate limit exceeded(RPM)')))).toBeInstanceOf(UpstreamBusy);
    expect(await thrown(() => minimaxMusicMade(code(1004, 'login fail')))).toMatchObject({ kind: 'auth', status: 401 });
    expect(await thrown(() => minimaxMusicMade(code(2049, 'invalid api key')))).toMatchObject({ kind: 'auth' });
    expect(await thrown(() => minimaxMusicMade(code(1008, 'insufficient balance')))).toMatchObject({ kind: 'account', status: 402 });
    for (const [c, words] of [[1026, 'input new_sensitive'], [1027, 'output new_sensitive']] as const) {
      const refused = await thrown(() => minimaxMusicMade(code(c, words)));
      expect(refused).toMatchObject({ kind: 'request', status: 400, message: `content refused: ${words} (code ${c})` });
      expect(MINIMAX.contentRefusal.test(refused.message)).toBe(true);
    }
    for (const c of [1000, 1001, 1024, 1033]) {
      const failed = await thrown(() => minimaxMusicMade(code(c, 'internal error')));
      expect([c, failed instanceof UpstreamGenerationFailed, (failed as UpstreamBusy).ambiguous]).toEqual([c, true, false]);
    }
    const bad = await thrown(() => minimaxMusicMade(code(2013, 'invalid params, lyrics is required')));
    expect(bad).toMatchObject({ kind: 'request', message: 'invalid params, lyrics is required (code 2013)' });
    expect(MINIMAX.contentRefusal.test(bad.message)).toBe(false);
  });

  it('a lyrics generation: its lyrics, title and style tags; without lyrics the field is named; its refusals read as the song’s', async () => {
    expect(minimaxLyricsWritten({ song_title: 'Summer Breeze Promise', style_tags: 'Pop, Summer Vibe', lyrics: '[Intro]\n(Ooh)\n[Verse 1]\nSea breeze', base_resp: OK })).toEqual({
      lyrics: '[Intro]\n(Ooh)\n[Verse 1]\nSea breeze',
      title: 'Summer Breeze Promise',
      style: 'Pop, Summer Vibe',
    });
    expect(minimaxLyricsWritten({ song_title: '', style_tags: null, lyrics: '[Verse]\nx', base_resp: OK })).toEqual({ lyrics: '[Verse]\nx' });
    for (const json of [{ base_resp: OK }, { lyrics: '  ', base_resp: OK }]) {
      const err = await thrown(() => minimaxLyricsWritten(json));
      expect([err instanceof UnusableAnswer, err.message]).toEqual([true, expect.stringMatching(/^the upstream answered the lyrics generation without a usable lyrics/)]);
    }
    expect(await thrown(() => minimaxLyricsWritten(code(1026, 'input new_sensitive')))).toMatchObject({ message: 'content refused: input new_sensitive (code 1026)' });
    expect(await thrown(() => minimaxLyricsWritten(code(1002)))).toBeInstanceOf(UpstreamBusy);
  });
});

describe('MiniMax music: the adapter against its fake', () => {
  const KEY = 'minimax-music-key';
  let fake: FakeMinimax;
  let account: VendorAccount;
  // the client as the relay has it (its connections closed when the file is done)
  const client = realClient();
  const vendor = new MinimaxMusicVendor(client);
  const create = (request: MusicRequest, id = 'music-2.6') => vendor.create(account, { request, model: model(id), taskId: 'task-1' });
  const only = async (request: MusicRequest, id?: string): Promise<MusicClipStatus> => {
    const answer = await create(request, id);
    if (!('made' in answer)) throw new Error('expected the song itself');
    expect(answer.made).toHaveLength(1);
    return answer.made[0];
  };

  beforeAll(async () => {
    fake = await startFakeMinimax(KEY);
    account = { baseUrl: fake.url, auth: bearerKey(KEY) };
  });
  afterAll(() => fake.close());
  beforeEach(() => {
    fake.musicCalls.length = 0;
    Object.assign(fake.minimaxKnobs, { busy: 0, noCredit: false, musicFail: undefined, musicHttp: undefined, musicSeconds: undefined });
  });

  it('polls nothing: its poll floor is its descriptor’s', () => {
    expect(vendor.minPollS).toBe(MINIMAX.pollFloorS);
  });

  it('a song with lyrics: one call in MiniMax’s words, the song decoded from hex to an MP3 as long as it made it', async () => {
    const lyrics = '[Verse]\nStreetlights flicker\nShadows stretch\n[Chorus]\nPushing the wooden door\nA stranger gazes';
    const clip = await only(song({ lyrics, style: 'Indie folk' }));
    expect(fake.musicCalls).toEqual([{ path: '/v1/music_generation', status: 200, code: 0, body: { model: 'music-2.6', prompt: 'Indie folk', lyrics, audio_setting: AUDIO_SETTING, output_format: 'hex' } }]);
    expect([clip.audio?.format, clip.audioUrl, clip.lyrics, clip.title]).toEqual(['mp3', undefined, undefined, undefined]);
    // four sung lines, two seconds each, as the fake makes them
    expect(await decodedSeconds(clip.audio!.bytes, 'mp3')).toBeCloseTo(8, 0);
  });

  it('a description song: its lyrics written first, then sung to the style tags they came with; the clip carries them and the kept title', async () => {
    const clip = await only(song({ description: 'a summer day at the beach', title: 'Tide' }), 'music-2.6-free');
    expect(fake.musicCalls.map((c) => [c.path, c.code])).toEqual([
      ['/v1/lyrics_generation', 0],
      ['/v1/music_generation', 0],
    ]);
    expect(fake.musicCalls[0].body).toEqual({ mode: 'write_full_song', prompt: 'a summer day at the beach', title: 'Tide' });
    const sung = fake.musicCalls[1].body;
    expect(sung).toEqual({ model: 'music-2.6-free', prompt: 'Pop, Upbeat, Female Vocals', lyrics: expect.stringContaining('[Chorus]\nOh, a summer day at the beach'), audio_setting: AUDIO_SETTING, output_format: 'hex' });
    expect([clip.lyrics, clip.title]).toEqual([sung.lyrics, 'Tide']);
    expect(await decodedSeconds(clip.audio!.bytes, 'mp3')).toBeGreaterThan(5);
  });

  it('an instrumental song: is_instrumental with its prompt, no lyrics written', async () => {
    fake.minimaxKnobs.musicSeconds = 7;
    const clip = await only(song({ instrumental: true, style: 'lo-fi hip hop, mellow piano' }));
    expect(fake.musicCalls).toEqual([{ path: '/v1/music_generation', status: 200, code: 0, body: { model: 'music-2.6', prompt: 'lo-fi hip hop, mellow piano', is_instrumental: true, audio_setting: AUDIO_SETTING, output_format: 'hex' } }]);
    expect(await decodedSeconds(clip.audio!.bytes, 'mp3')).toBeCloseTo(7, 0);
  });

  it('its refusals as the client throws them: content (1026, 1027), the balance, the key; its own failures and 5xx as busy', async () => {
    fake.minimaxKnobs.musicFail = { code: 1026, message: 'input new_sensitive' };
    const input = await thrown(create(song({ lyrics: 'la la' })));
    expect([input instanceof UpstreamRefused, input.message, MINIMAX.contentRefusal.test(input.message)]).toEqual([true, 'content refused: input new_sensitive (code 1026)', true]);
    fake.minimaxKnobs.musicFail = { code: 1027, message: 'output new_sensitive' };
    expect(MINIMAX.contentRefusal.test((await thrown(create(song({ lyrics: 'la la' })))).message)).toBe(true);
    fake.minimaxKnobs.musicFail = { code: 1024, message: 'internal error' };
    expect(await thrown(create(song({ lyrics: 'la la' })))).toBeInstanceOf(UpstreamGenerationFailed);
    fake.minimaxKnobs.musicHttp = 500;
    expect(await thrown(create(song({ lyrics: 'la la' })))).toBeInstanceOf(UpstreamGenerationFailed);
    fake.minimaxKnobs.musicHttp = undefined;
    fake.minimaxKnobs.busy = 1;
    expect(await thrown(create(song({ lyrics: 'la la' })))).toBeInstanceOf(UpstreamBusy);
    fake.minimaxKnobs.noCredit = true;
    expect(await thrown(create(song({ lyrics: 'la la' })))).toMatchObject({ kind: 'account' });
    // a description song out of credit is refused at its lyrics, before any song is asked for
    expect(await thrown(create(song({ description: 'the sea' })))).toMatchObject({ kind: 'account' });
    expect(fake.musicCalls.at(-1)).toMatchObject({ path: '/v1/lyrics_generation', code: 1008 });
    fake.minimaxKnobs.noCredit = false;
    const wrongKey = await thrown(vendor.create({ baseUrl: fake.url, auth: bearerKey('not-the-key') }, { request: song({ lyrics: 'la' }), model: model(), taskId: 't' }));
    expect(wrongKey).toMatchObject({ kind: 'auth', status: 401 });
  });

  it('the fake keeps MiniMax’s rules: lyrics required with vocals, a prompt for instrumental music, its audio settings; a link when asked for one', async () => {
    const call = async (body: Record<string, unknown>) => (await client.call('POST', `${fake.url}/v1/music_generation`, { body, auth: bearerKey(KEY) })).json as { data?: { audio: string; status: number }; base_resp: { status_code: number; status_msg: string } };
    expect((await call({ model: 'music-2.6', prompt: 'Pop' })).base_resp).toEqual({ status_code: 2013, status_msg: 'invalid params, lyrics is required' });
    expect((await call({ model: 'music-2.6', is_instrumental: true })).base_resp.status_msg).toMatch(/prompt is required/);
    expect((await call({ model: 'music-2.6', lyrics: 'la', audio_setting: { sample_rate: 48000, bitrate: 256000, format: 'mp3' } })).base_resp.status_msg).toMatch(/sample_rate 48000/);
    expect((await call({ model: 'music-1.0', lyrics: 'la' })).base_resp.status_code).toBe(2013);
    expect((await call({ model: 'music-cover', prompt: 'a jazz cover', lyrics: 'la la la la la' })).base_resp.status_msg).toMatch(/audio_url/);
    const linked = await call({ model: 'music-2.6', lyrics: '[Verse]\nla\nla\nla', output_format: 'url' });
    expect([linked.data?.status, linked.data?.audio]).toEqual([2, expect.stringMatching(/^http:\/\/127\.0\.0\.1:\d+\/music\/\d+\.mp3$/)]);
    expect(await decodedSeconds(await client.download(linked.data!.audio, 1 << 24), 'mp3')).toBeCloseTo(6, 0);
  });
});
