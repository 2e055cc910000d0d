import { UpstreamBusy, UpstreamRefused } from '../../../../src/infra/relay/upstream-client.js';
import type { MusicRequest } from '../../../../src/vendors/contracts/music-vendor.js';
import { UnusableAnswer } from '../../../../src/vendors/contracts/vendor.js';
import { SunoAudioVendor, sunoUploadBody, sunoUploaded, sunoUploadStatus } from '../../../../src/vendors/suno-aggregator/suno-audio.vendor.js';
import { SUNO_AGGREGATOR } from '../../../../src/vendors/suno-aggregator/suno-aggregator.vendor.js';
import { SunoMusicVendor, sunoFetched, sunoFetchedMany, sunoMusicBody, sunoSubmitted } from '../../../../src/vendors/suno-aggregator/suno-music.vendor.js';

const song = (over: Partial<MusicRequest> = {}): MusicRequest => ({ lyrics: null, description: null, style: null, avoidStyle: null, title: null, model: 'chirp-v4', instrumental: false, durationS: null, continues: null, ...over });

/** A task as new-api's `GET /suno/fetch/{id}` answers it (relay/channel/task/suno: SunoDataResponse in `data`). */
function fetched(status: string, clips: unknown[] = [], more: object = {}) {
  return { code: 'success', message: '', data: { task_id: 'f3b1c1a0-task', action: 'MUSIC', status, fail_reason: '', submit_time: 1717000000, start_time: 1717000001, finish_time: 0, progress: '50%', data: clips, ...more } };
}
const clip = (n: number, over: object = {}) => ({ id: `clip-${n}`, status: 'complete', title: 'Dusk', audio_url: `https://cdn.example/${n}.mp3`, image_url: `https://cdn.example/${n}.png`, metadata: { duration: 120, error_message: null }, ...over });

/**
 * A Suno-style aggregator (new-api's Suno relay: `POST /suno/submit/music`, `GET /suno/fetch/{id}`, `POST
 * /suno/fetch {ids}`; its uploads by URL): the bodies sent and the answers read, refusals under HTTP 200 as
 * `{code: <number>, msg}`.
 */
describe('Suno aggregator: music mapping', () => {
  it('take their protocol and poll floor from the descriptor', () => {
    expect([SunoMusicVendor.protocol, SunoAudioVendor.protocol]).toEqual([SUNO_AGGREGATOR.protocol, SUNO_AGGREGATOR.protocol]);
  });

  it("a custom song in Suno's words: prompt (the lyrics), tags, negative_tags, title, mv, make_instrumental, notify_hook", () => {
    expect(sunoMusicBody(song({ lyrics: '[Verse]\nLight on the sea', style: 'folk', avoidStyle: 'metal', title: 'Dusk' }), 'https://gw.example/cb')).toEqual({
      mv: 'chirp-v4',
      make_instrumental: false,
      prompt: '[Verse]\nLight on the sea',
      tags: 'folk',
      negative_tags: 'metal',
      title: 'Dusk',
      notify_hook: 'https://gw.example/cb',
    });
  });

  it('a description song: gpt_description_prompt; nothing asked is left out', () => {
    expect(sunoMusicBody(song({ description: 'a calm song about the sea', instrumental: true }), undefined)).toEqual({ mv: 'chirp-v4', make_instrumental: true, gpt_description_prompt: 'a calm song about the sea' });
  });

  it("a continuation: continue_clip_id, continue_at and task (extend, or upload_extend of an upload)", () => {
    expect(sunoMusicBody(song({ continues: { upstreamClipId: 'up-clip-1', atS: 30.5, upload: false } }), undefined)).toEqual({ mv: 'chirp-v4', make_instrumental: false, continue_clip_id: 'up-clip-1', continue_at: 30.5, task: 'extend' });
    expect(sunoMusicBody(song({ continues: { upstreamClipId: 'up-upload-1', atS: null, upload: true } }), undefined)).toMatchObject({ continue_clip_id: 'up-upload-1', continue_at: null, task: 'upload_extend' });
  });
});

describe('Suno aggregator: music answers', () => {
  it('a submit: its task id; a refusal under HTTP 200 as the client would throw it; else unusable in its words', () => {
    expect(sunoSubmitted({ code: 'success', message: '', data: 'f3b1c1a0-task' })).toBe('f3b1c1a0-task');
    expect(() => sunoSubmitted({ code: 429, msg: 'too many requests' })).toThrow(UpstreamBusy);
    expect(() => sunoSubmitted({ code: 402, msg: 'quota exhausted' })).toThrow(expect.objectContaining({ constructor: UpstreamRefused, kind: 'account' }));
    expect(() => sunoSubmitted({ code: 401, msg: 'bad token' })).toThrow(expect.objectContaining({ kind: 'auth' }));
    expect(() => sunoSubmitted({ code: 'fail', message: 'prompt too long' })).toThrow(new UnusableAnswer('the upstream refused the music task: prompt too long'));
    // a success without its id cannot be used (not a refusal of the request: a door that answers the end reads that as the caller's 4xx)
    expect(() => sunoSubmitted({ code: 'success', data: '' })).toThrow(new UnusableAnswer('the upstream answered success without a task id'));
  });

  it('SUCCESS: its clips with their ids, audio and covers', () => {
    expect(sunoFetched(fetched('SUCCESS', [clip(0), clip(1, { image_url: '' })]))).toEqual({
      state: 'succeeded',
      clips: [
        { upstreamId: 'clip-0', audioUrl: 'https://cdn.example/0.mp3', coverUrl: 'https://cdn.example/0.png', title: 'Dusk' },
        { upstreamId: 'clip-1', audioUrl: 'https://cdn.example/1.mp3', title: 'Dusk' },
      ],
    });
  });

  it("SUCCESS: each clip's lyrics (metadata.prompt: in description mode those Suno wrote) and title, as new-api's SunoSong carries them", () => {
    const lyrics = '[Verse]\nStreet lights blur\n[Chorus]\nHold on';
    const status = sunoFetched(fetched('SUCCESS', [clip(0, { title: 'Neon', metadata: { tags: 'synthwave', prompt: lyrics, gpt_description_prompt: 'a night drive', duration: 120 } }), clip(1, { title: 'Neon II', metadata: { prompt: 'Other words' } })]));
    expect(status).toMatchObject({ state: 'succeeded', clips: [{ upstreamId: 'clip-0', lyrics, title: 'Neon' }, { upstreamId: 'clip-1', lyrics: 'Other words', title: 'Neon II' }] });
  });

  it("SUCCESS: an instrumental's empty prompt, a blank title or one of another type is no lyrics and no title", () => {
    const status = sunoFetched(fetched('SUCCESS', [clip(0, { title: ' ', metadata: { prompt: '' } }), clip(1, { title: 7, metadata: { prompt: ['not', 'text'] } }), clip(2, { title: null, metadata: null })]));
    if (status.state !== 'succeeded') throw new Error('succeeded expected');
    for (const c of status.clips) {
      expect(c).not.toHaveProperty('lyrics');
      expect(c).not.toHaveProperty('title');
    }
    expect(status.clips.map((c) => c.upstreamId)).toEqual(['clip-0', 'clip-1', 'clip-2']);
  });

  it('SUBMITTED, QUEUED, IN_PROGRESS, NOT_START: working', () => {
    for (const status of ['SUBMITTED', 'QUEUED', 'IN_PROGRESS', 'NOT_START']) expect(sunoFetched(fetched(status, [clip(0, { status: 'streaming' })]))).toEqual({ state: 'working' });
  });

  it('FAILURE, or a clip in error: failed with its words, its ids kept as secrets', () => {
    expect(sunoFetched(fetched('FAILURE', [], { fail_reason: 'the lyrics are inappropriate' }))).toEqual({ state: 'failed', reason: 'the lyrics are inappropriate', secrets: ['f3b1c1a0-task'] });
    expect(sunoFetched(fetched('IN_PROGRESS', [clip(0), clip(1, { status: 'error', metadata: { error_message: 'Unable to generate audio' } })]))).toEqual({ state: 'failed', reason: 'Unable to generate audio', secrets: ['f3b1c1a0-task', 'clip-0', 'clip-1'] });
    expect(sunoFetched(fetched('FAILURE', ['not a clip', null], { fail_reason: ' ' }))).toEqual({ state: 'failed', reason: 'no reason given', secrets: ['f3b1c1a0-task'] });
  });

  it('a fetch without a task, or a task without a status, names the field; a busy code under 200 is busy', () => {
    expect(() => sunoFetched({ code: 'success', message: '' })).toThrow(new UnusableAnswer('the upstream answered the fetch without a usable data (expected object, received undefined)'));
    expect(() => sunoFetched({ code: 'success', data: { task_id: 'x' } })).toThrow(/without a usable data\.status \(expected string, received undefined\)/);
    expect(() => sunoFetched({ code: 429, msg: 'slow down' })).toThrow(UpstreamBusy);
  });

  it('several at once: each listed task by its id; one without its id or status left out (its step asks for it alone)', () => {
    const many = sunoFetchedMany({ code: 'success', data: [fetched('SUCCESS', [clip(0)]).data, { ...fetched('IN_PROGRESS').data, task_id: 'other' }, { status: 'SUCCESS' }, { task_id: 'no-status' }] });
    expect([...many.keys()]).toEqual(['f3b1c1a0-task', 'other']);
    expect(many.get('other')).toEqual({ state: 'working' });
    expect(sunoFetchedMany({ code: 'success', data: null }).size).toBe(0);
    expect(() => sunoFetchedMany({ code: 'success', data: 'x' })).toThrow(/without a usable data/);
  });
});

describe('Suno aggregator: uploads by URL', () => {
  it('the body is the URL; the answer its id', () => {
    expect(sunoUploadBody('https://files.example/a.mp3')).toEqual({ url: 'https://files.example/a.mp3' });
    expect(sunoUploaded({ code: 'success', message: '', data: 'clip-1' })).toBe('clip-1');
    expect(() => sunoUploaded({ code: 'error', message: 'cannot read the file' })).toThrow(new UnusableAnswer('the upstream refused the upload: cannot read the file'));
    expect(() => sunoUploaded({ code: 'success', data: 3 })).toThrow('the upstream refused the upload: success');
    expect(() => sunoUploaded({ code: 403, msg: 'forbidden' })).toThrow(expect.objectContaining({ kind: 'auth' }));
  });

  it('ready with its facts, failed with its words, pending working', () => {
    const ready = { code: 'success', message: '', data: { id: 'clip-1', status: 'ready', format: 'mp3', duration: 12.5, size_bytes: 204800, sha256: 'ab'.repeat(32), error: null } };
    expect(sunoUploadStatus(ready)).toEqual({ state: 'ready', facts: { format: 'mp3', durationS: 12.5, sizeBytes: 204800, sha256: 'ab'.repeat(32) } });
    expect(sunoUploadStatus({ code: 'success', data: { id: 'clip-1', status: 'failed', error: 'not an audio file' } })).toEqual({ state: 'failed', reason: 'not an audio file' });
    expect(sunoUploadStatus({ code: 'success', data: { id: 'clip-1', status: 'failed', error: null } })).toEqual({ state: 'failed', reason: 'no reason given' });
    expect(sunoUploadStatus({ code: 'success', data: { id: 'clip-1', status: 'pending' } })).toEqual({ state: 'working' });
  });

  it('an answer it cannot use names the field', () => {
    expect(() => sunoUploadStatus({ code: 'success', data: { id: 'clip-1', status: 'ready', format: 'mp3' } })).toThrow(/without a usable data\.duration \(expected number, received undefined\)/);
    expect(() => sunoUploadStatus({ code: 'success' })).toThrow(/the upload query without a usable data/);
  });
});
