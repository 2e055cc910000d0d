import { UpstreamBusy, UpstreamRefused } from '../../../../src/infra/relay/upstream-client.js';
import { LYRICS_MAX_PROMPT } from '../../../../src/vendors/contracts/lyrics-vendor.js';
import { UnusableAnswer } from '../../../../src/vendors/contracts/vendor.js';
import { SUNO_AGGREGATOR } from '../../../../src/vendors/suno-aggregator/suno-aggregator.vendor.js';
import { SunoLyricsVendor, sunoLyricsBody, sunoLyricsFetched, sunoLyricsFetchedMany, sunoLyricsSubmitted } from '../../../../src/vendors/suno-aggregator/suno-lyrics.vendor.js';

/** A lyrics task as new-api's `GET /suno/fetch/{id}` answers it (SunoDataResponse, action LYRICS, its SunoLyrics in `data`). */
function fetched(status: string, data: unknown, more: object = {}) {
  return { code: 'success', message: '', data: { task_id: 'lyr-task-1', action: 'LYRICS', status, fail_reason: '', submit_time: 1717000000, start_time: 1717000001, finish_time: 0, progress: '50%', data, ...more } };
}
const words = { id: 'lyr-1', status: 'complete', title: 'Coastline', text: '[Verse]\nDriving down the coast\n\n[Chorus]\nOh the sea' };

/** new-api's lyrics: `POST /suno/submit/lyrics {prompt, notify_hook?}`, `GET /suno/fetch/{id}`, `POST /suno/fetch {ids}`. */
describe('Suno aggregator: lyrics mapping', () => {
  it("takes its protocol and poll floor from the descriptor, which lists lyrics; one model, new-api's suno_lyrics, 3,000 characters, one version", () => {
    expect([SunoLyricsVendor.protocol, SUNO_AGGREGATOR.operations.includes('lyrics')]).toEqual([SUNO_AGGREGATOR.protocol, true]);
    expect(SunoLyricsVendor.models).toEqual([{ id: 'suno_lyrics', promptMax: LYRICS_MAX_PROMPT, takes: 1 }]);
  });

  it("sends the prompt, and notify_hook only when it is to call back", () => {
    expect(sunoLyricsBody('a road trip', 'https://gw.example/cb')).toEqual({ prompt: 'a road trip', notify_hook: 'https://gw.example/cb' });
    expect(sunoLyricsBody('a road trip', undefined)).toEqual({ prompt: 'a road trip' });
  });

  it('reads the task id of a submit; a refusal in its words is unusable, a numeric code thrown as the client would', () => {
    expect(sunoLyricsSubmitted({ code: 'success', message: '', data: 'lyr-task-1' })).toBe('lyr-task-1');
    expect(() => sunoLyricsSubmitted({ code: 'fail', message: 'prompt is required', data: null })).toThrow(new UnusableAnswer('the upstream refused the lyrics task: prompt is required'));
    expect(() => sunoLyricsSubmitted({ code: 'success', message: '', data: '' })).toThrow(UnusableAnswer);
    expect(() => sunoLyricsSubmitted({ code: 429, msg: 'slow down' })).toThrow(UpstreamBusy);
    expect(() => sunoLyricsSubmitted({ code: 402, msg: 'no credit' })).toThrow(UpstreamRefused);
  });

  it('SUBMITTED, QUEUED and IN_PROGRESS are working; SUCCESS gives the title and text', () => {
    for (const status of ['SUBMITTED', 'QUEUED', 'IN_PROGRESS', 'NOT_START']) expect(sunoLyricsFetched(fetched(status, { ...words, status: 'running', text: '' }))).toEqual({ state: 'working' });
    expect(sunoLyricsFetched(fetched('SUCCESS', words))).toEqual({ state: 'succeeded', lyrics: [{ title: 'Coastline', text: words.text }] });
    // an aggregator that lists its lyrics: each version with words
    expect(sunoLyricsFetched(fetched('SUCCESS', [words, { ...words, id: 'lyr-2', title: '', text: 'Second' }, { id: 'x', text: '' }]))).toEqual({
      state: 'succeeded',
      lyrics: [
        { title: 'Coastline', text: words.text },
        { title: null, text: 'Second' },
      ],
    });
  });

  it('SUCCESS without words is unusable; FAILURE (or lyrics in error) fails with its reason and the ids to scrub', () => {
    expect(() => sunoLyricsFetched(fetched('SUCCESS', { ...words, text: '' }))).toThrow(new UnusableAnswer('the upstream ended the lyrics task without any lyrics (data.text)'));
    expect(() => sunoLyricsFetched(fetched('SUCCESS', null))).toThrow(UnusableAnswer);
    expect(sunoLyricsFetched(fetched('FAILURE', { ...words, status: 'error', text: '' }, { fail_reason: 'prompt flagged' }))).toEqual({ state: 'failed', reason: 'prompt flagged', secrets: ['lyr-task-1', 'lyr-1'] });
    expect(sunoLyricsFetched(fetched('IN_PROGRESS', { ...words, status: 'error' }))).toEqual({ state: 'failed', reason: 'no reason given', secrets: ['lyr-task-1', 'lyr-1'] });
    // a task without its status is not an answer to act on
    expect(() => sunoLyricsFetched({ code: 'success', data: { task_id: 'x' } })).toThrow(UnusableAnswer);
  });

  it('reads a batch fetch by task id, leaving out what it cannot read (their steps ask alone)', () => {
    const many = sunoLyricsFetchedMany({
      code: 'success',
      data: [fetched('SUCCESS', words).data, fetched('IN_PROGRESS', {}, { task_id: 'lyr-task-2' }).data, fetched('SUCCESS', { text: '' }, { task_id: 'lyr-task-3' }).data, { status: 'SUCCESS' }, 'junk'],
    });
    expect([...many.entries()]).toEqual([
      ['lyr-task-1', { state: 'succeeded', lyrics: [{ title: 'Coastline', text: words.text }] }],
      ['lyr-task-2', { state: 'working' }],
    ]);
  });
});
