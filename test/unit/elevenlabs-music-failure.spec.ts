import { AppError } from '../../src/common/errors/app-error.js';
import { failureOf } from '../../src/doors/elevenlabs/elevenlabs-music.service.js';

/**
 * How ElevenLabs' music door words a failed music task: the vendor's moderation a content refusal (400
 * bad_prompt), the vendor refusing the request itself a refused request (the door's 422) naming the field when
 * the vendor's words begin with one of the door's, any other failure a 502. Both sides of each rule. No app.
 */
const read = (message: string | null) => {
  const err: AppError = failureOf({ id: 'task-1', message });
  return [err.code, err.fault?.param];
};

describe("ElevenLabs' music door: a failed task as its error", () => {
  it("a request the vendor refused: a refused request, naming the door's field its words begin with", () => {
    expect(read('the upstream refused the music task: music_length_ms: Input should be less than or equal to 20000 (validation_error)')).toEqual(['INVALID_PARAMETER', 'music_length_ms']);
    expect(read('the upstream refused the music task: composition_plan.sections.0: too long (validation_error)')).toEqual(['INVALID_PARAMETER', 'composition_plan.sections.0']);
    // a field the door does not have, or none: refused, naming none
    expect(read('the upstream refused the music task: seed: Input should be a valid integer (validation_error)')).toEqual(['INVALID_PARAMETER', undefined]);
    expect(read('the upstream refused the music task: the style is too long')).toEqual(['INVALID_PARAMETER', undefined]);
  });

  it("the vendor's moderation: content refused", () => {
    expect(read("the upstream refused the music task: the upstream's moderation refused the text: Your prompt appears to have violated our Terms of Service. (bad_prompt)")[0]).toBe('CONTENT_REFUSED');
  });

  it("a failed generation, another operation's words or no reason: a 502", () => {
    expect(read('the upstream failed (HTTP 500): An internal server error occurred.')[0]).toBe('UPSTREAM_FAILED');
    expect(read('the upstream refused the speech: music_length_ms: no')[0]).toBe('UPSTREAM_FAILED');
    expect(read(null)[0]).toBe('UPSTREAM_FAILED');
  });
});
