import { UpstreamRefused } from '../../../../src/infra/relay/upstream-client.js';
import type { MusicRequest } from '../../../../src/vendors/contracts/music-vendor.js';
import { UnusableAnswer } from '../../../../src/vendors/contracts/vendor.js';
import { MUREKA_MODELS } from '../../../../src/vendors/mureka/mureka-models.js';
import {
  MurekaMusicVendor,
  murekaCreated,
  murekaExtendBody,
  murekaInstrumentalBody,
  murekaLyricsBody,
  murekaLyricsWritten,
  murekaSongBody,
  murekaStatus,
  murekaUploaded,
  murekaUploadForm,
} from '../../../../src/vendors/mureka/mureka-music.vendor.js';
import { MUREKA, murekaRefusal } from '../../../../src/vendors/mureka/mureka.vendor.js';
import { refusesContent } from '../../../../src/vendors/registry.js';

const song = (over: Partial<MusicRequest> = {}): MusicRequest => ({ lyrics: null, description: null, style: null, avoidStyle: null, title: null, model: 'mureka-8', instrumental: false, durationS: null, continues: null, ...over });
const continuing = (atS: number | null, upload = false) => song({ continues: { upstreamClipId: upload ? null : '1436211-0', atS, upload } });

/** A task as `GET /v1/song/query/{id}` answers it (platform.mureka.ai's reference: id, created_at, finished_at, model, status, failed_reason, choices). */
function task(status: string, more: object = {}) {
  return { id: '1436211', created_at: 1_712_544_000, finished_at: status === 'succeeded' ? 1_712_544_300 : null, model: 'mureka-8', status, failed_reason: null, choices: null, ...more };
}
const choice = (n: number, over: object = {}) => ({
  index: n,
  id: `1436211${n}`,
  url: `https://cdn.mureka.ai/${n}.mp3`,
  flac_url: `https://cdn.mureka.ai/${n}.flac`,
  duration: 180_000,
  lyrics_sections: [
    {
      section_type: 'verse',
      start: 0,
      end: 4000,
      lines: [{ start: 0, end: 4000, text: 'Youth blooms like flowers', words: [{ start: 0, end: 900, text: 'Youth' }, { start: 900, end: 2000, text: 'blooms' }] }],
    },
    { section_type: 'pre-chorus', start: 4000, end: 6000, lines: [{ start: 4000, end: 6000, text: 'Dreams fly' }] },
  ],
  ...over,
});

describe('Mureka: the descriptor and models', () => {
  it('speaks protocol mureka for music, Bearer api_key, its billing as the test call; the adapter takes them', () => {
    expect(MUREKA).toMatchObject({ protocol: 'mureka', operations: ['music', 'lyrics'], credentials: ['api_key'], baseUrl: { example: 'https://api.mureka.ai' }, pollFloorS: 0 });
    expect(MUREKA.probe(['music'])).toMatchObject({ path: '/v1/account/billing', notFoundPasses: false });
    expect(MUREKA.auth({ api_key: 'mk-1' }).headers()).toEqual({ authorization: 'Bearer mk-1' });
    expect([MurekaMusicVendor.protocol, MurekaMusicVendor.models]).toEqual([MUREKA.protocol, MUREKA_MODELS]);
  });

  it('each documented model: lyrics or a description, continuations of its own songs and of uploads, two takes of MP3, no duration; instrumentals but on o2', () => {
    expect(MUREKA_MODELS.map((m) => m.id)).toEqual(['auto', 'mureka-7.5', 'mureka-7.6', 'mureka-o2', 'mureka-8', 'mureka-9']);
    for (const m of MUREKA_MODELS) {
      expect(m).toMatchObject({ lyrics: true, description: true, continueUpload: true, continueOwn: true, durationS: null, takes: 2, lyricsMax: 3000, styleMax: 1024, format: 'mp3' });
      expect(m.instrumental).toBe(m.id !== 'mureka-o2');
    }
  });

  it("reads a 429 of quota as the account's credit, a 429 of rate as busy (left to the client), other statuses to the client", () => {
    const quota = murekaRefusal(429, { error: { message: 'You exceeded your current quota, please check your billing details' }, trace_id: 'x' });
    expect(quota).toEqual(expect.objectContaining({ kind: 'account', status: 429, message: 'the account is out of credits: You exceeded your current quota, please check your billing details' }));
    expect(murekaRefusal(429, { error: { message: 'Rate limit reached for requests' } })).toBeUndefined();
    expect(murekaRefusal(400, { error: { message: 'Invalid Request' } })).toBeUndefined();
    expect(murekaRefusal(401, { error: { message: 'Invalid Authentication' } })).toBeUndefined();
  });

  it("a failed task's words that say moderation are a content refusal; its other failures are not", () => {
    expect(refusesContent('mureka', 'The lyrics contain sensitive content')).toBe(true);
    expect(refusesContent('mureka', 'the task timed out')).toBe(false);
  });
});

describe('Mureka: bodies', () => {
  it('a song: lyrics, model, n (the takes), the style as its prompt; nothing else (Mureka has no title or styles to avoid)', () => {
    expect(murekaSongBody(song({ lyrics: '[Verse]\nLight on the sea', style: 'r&b, slow, passionate, male vocal', title: 'Dusk', avoidStyle: 'metal' }), '[Verse]\nLight on the sea', 2)).toEqual({
      lyrics: '[Verse]\nLight on the sea',
      model: 'mureka-8',
      n: 2,
      prompt: 'r&b, slow, passionate, male vocal',
    });
    expect(murekaSongBody(song({ model: 'auto' }), 'written lyrics', 2)).toEqual({ lyrics: 'written lyrics', model: 'auto', n: 2 });
  });

  it('lyrics to write: the description as the prompt; what Mureka wrote read back', () => {
    expect(murekaLyricsBody('a calm song about the sea')).toEqual({ prompt: 'a calm song about the sea' });
    expect(murekaLyricsWritten({ title: 'Embrace of Night', lyrics: '[Verse]\nIn the shadows' })).toBe('[Verse]\nIn the shadows');
    expect(() => murekaLyricsWritten({ title: 'x', lyrics: '' })).toThrow(new UnusableAnswer('the upstream answered the lyrics without a usable lyrics (Too small: expected string to have >=1 characters)'));
  });

  it('an instrumental: model, n, the description then the style as its prompt; with neither, refused naming what it needs', () => {
    expect(murekaInstrumentalBody(song({ instrumental: true, description: 'a coffee shop morning', style: 'lofi, piano' }), 2)).toEqual({ model: 'mureka-8', n: 2, prompt: 'a coffee shop morning. lofi, piano' });
    expect(murekaInstrumentalBody(song({ instrumental: true, style: 'lofi' }), 2)).toEqual({ model: 'mureka-8', n: 2, prompt: 'lofi' });
    const refused = (() => {
      try {
        murekaInstrumentalBody(song({ instrumental: true, style: ' ' }), 2);
      } catch (err) {
        return err;
      }
    })();
    expect(refused).toEqual(expect.objectContaining({ constructor: UpstreamRefused, kind: 'request', message: "Mureka's instrumental is made from a prompt: give a description or a style" }));
  });

  it('a continuation: song_id of its own take or upload_audio_id of an upload, extend_at in milliseconds, the lyrics when any', () => {
    expect(murekaExtendBody(continuing(30.5), { songId: '1436211-0' }, '[Verse]\nOn and on')).toEqual({ song_id: '1436211-0', extend_at: 30_500, lyrics: '[Verse]\nOn and on' });
    expect(murekaExtendBody(continuing(12, true), { uploadAudioId: '43543541' }, null)).toEqual({ upload_audio_id: '43543541', extend_at: 12_000 });
  });

  it("extend_at within Mureka's 8,000–420,000 ms, both ends taken; none asked is the clip's end (420,000)", () => {
    expect(murekaExtendBody(continuing(8), { songId: 's' }, null)).toEqual({ song_id: 's', extend_at: 8000 });
    expect(murekaExtendBody(continuing(420), { songId: 's' }, null)).toEqual({ song_id: 's', extend_at: 420_000 });
    expect(murekaExtendBody(continuing(null), { songId: 's' }, null)).toEqual({ song_id: 's', extend_at: 420_000 });
    for (const atS of [7.999, 420.001]) {
      expect(() => murekaExtendBody(continuing(atS), { songId: 's' }, null)).toThrow(`Mureka continues a clip from 8 s to 420 s into it (extend_at): ${atS} s was asked`);
    }
  });

  it('an upload: multipart purpose audio and the file with its name and type', async () => {
    const form = murekaUploadForm({ bytes: Buffer.from('ID3abc'), filename: 'clip.mp3', type: 'audio/mpeg' });
    expect(form.get('purpose')).toBe('audio');
    const file = form.get('file') as File;
    expect([file.name, file.type, Buffer.from(await file.arrayBuffer()).toString()]).toEqual(['clip.mp3', 'audio/mpeg', 'ID3abc']);
  });
});

describe('Mureka: answers', () => {
  it("a create's and an upload's id (a number read as its digits); one without an id names the field", () => {
    expect(murekaCreated({ id: '1436211', created_at: 1_677_610_602, model: 'mureka-6', status: 'preparing', trace_id: '1e94' })).toBe('1436211');
    expect(murekaCreated({ id: 1436211, status: 'preparing' })).toBe('1436211');
    expect(() => murekaCreated({ status: 'preparing', trace_id: '1e94' })).toThrow(new UnusableAnswer('the upstream answered the music task without a usable id (expected string, received undefined)'));
    expect(murekaUploaded({ id: 'file_abc123', bytes: 5_242_880, created_at: 1_712_544_000, filename: 'clip.mp3', purpose: 'audio' })).toBe('file_abc123');
    expect(() => murekaUploaded({ id: '' })).toThrow(/the upload without a usable id/);
  });

  it('preparing, queued, running, streaming: working', () => {
    for (const status of ['preparing', 'queued', 'running', 'streaming']) expect(murekaStatus(task(status))).toEqual({ state: 'working' });
  });

  it('succeeded: each take with its id, MP3 url, lyrics by section and its words timed in seconds', () => {
    expect(murekaStatus(task('succeeded', { choices: [choice(0), choice(1, { lyrics_sections: [] })] }))).toEqual({
      state: 'succeeded',
      clips: [
        {
          upstreamId: '14362110',
          audioUrl: 'https://cdn.mureka.ai/0.mp3',
          lyrics: '[Verse]\nYouth blooms like flowers\n\n[Pre-Chorus]\nDreams fly',
          timedLyrics: [
            { word: 'Youth', startS: 0, endS: 0.9 },
            { word: 'blooms', startS: 0.9, endS: 2 },
          ],
        },
        { upstreamId: '14362111', audioUrl: 'https://cdn.mureka.ai/1.mp3' },
      ],
    });
  });

  it("a continuation's takes hold the clip from its start (Mureka's extensions are whole songs)", () => {
    expect(murekaStatus(task('succeeded', { choices: [choice(0, { lyrics_sections: [] })] }), true)).toEqual({
      state: 'succeeded',
      clips: [{ upstreamId: '14362110', audioUrl: 'https://cdn.mureka.ai/0.mp3', fromStart: true }],
    });
  });

  it("an instrumental's takes: no lyrics; lyrics it cannot read are left out, the song kept", () => {
    const instrumental = { index: 0, id: 'i0', url: 'https://cdn.mureka.ai/i0.mp3', flac_url: 'https://cdn.mureka.ai/i0.flac', duration: 60_000 };
    expect(murekaStatus(task('succeeded', { choices: [instrumental, { ...instrumental, id: 'i1', url: 'https://cdn.mureka.ai/i1.mp3', lyrics_sections: 'garbled' }] }))).toEqual({
      state: 'succeeded',
      clips: [
        { upstreamId: 'i0', audioUrl: 'https://cdn.mureka.ai/i0.mp3' },
        { upstreamId: 'i1', audioUrl: 'https://cdn.mureka.ai/i1.mp3' },
      ],
    });
  });

  it('failed, timeouted, cancelled: failed with its failed_reason, or its state in words; its ids kept as secrets', () => {
    expect(murekaStatus(task('failed', { failed_reason: 'The lyrics contain sensitive content' }))).toEqual({ state: 'failed', reason: 'The lyrics contain sensitive content', secrets: ['1436211'] });
    expect(murekaStatus(task('timeouted', { failed_reason: '' }))).toEqual({ state: 'failed', reason: 'the task timed out', secrets: ['1436211'] });
    expect(murekaStatus(task('cancelled', { choices: [choice(0)] }))).toEqual({ state: 'failed', reason: 'the task was cancelled', secrets: ['1436211', '14362110'] });
    expect(murekaStatus({ status: 'failed', failed_reason: 42 })).toEqual({ state: 'failed', reason: 'the task failed', secrets: [] });
  });

  it('an answer it cannot use names the field: no status, a success without takes, a take without its url', () => {
    expect(() => murekaStatus({ id: '1436211' })).toThrow(new UnusableAnswer('the upstream answered the song query without a usable status (expected string, received undefined)'));
    expect(() => murekaStatus(task('succeeded', { choices: null }))).toThrow(new UnusableAnswer('the upstream answered the song query without a usable choices (expected array, received null)'));
    expect(() => murekaStatus(task('succeeded', { choices: [] }))).toThrow(/without a usable choices \(Too small: expected array to have >=1 items\)/);
    expect(() => murekaStatus(task('succeeded', { choices: [choice(0), choice(1, { url: undefined })] }))).toThrow(new UnusableAnswer('the upstream answered the song query without a usable choices[1].url (expected string, received undefined)'));
  });
});
