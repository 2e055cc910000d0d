import { AppError } from '../../src/common/errors/app-error.js';
import { failedTaskError } from '../../src/modules/channels/task-failure.js';
import { failureOf as speechFailure } from '../../src/doors/openai/openai-speech.service.js';

/**
 * How OpenAI's door words a failed task (images, speech): the vendor's moderation a 400 content refusal, the
 * vendor refusing the request itself a 400 in its words (speech naming `voice` when they are about it), any
 * other failure a 502. Both sides of each rule, from the words the relay writes. No app.
 */
const read = (err: AppError) => [err.code, err.fault?.param, err.message];
const image = (message: string | null) => failedTaskError({ id: 'task-1', message }, { what: 'image', noun: 'task' });
const speech = (message: string) => speechFailure({ id: 'task-2', message });

describe("OpenAI's door: a failed task as its error", () => {
  it("a request the vendor refused: a 400 in its words, naming no field the door cannot tell", () => {
    expect(read(image("the upstream refused the task: Invalid 'prompt': string too long."))).toEqual([
      'INVALID_PARAMETER',
      undefined,
      "the image task task-1 failed: the upstream refused the task: Invalid 'prompt': string too long.",
    ]);
    expect(read(speech('the upstream refused the speech: text: must not be empty'))).toEqual(['INVALID_PARAMETER', undefined, 'the speech task task-2 failed: the upstream refused the speech: text: must not be empty']);
  });

  it('a voice the speech vendor does not know: a 400 naming voice, whichever vendor said it, in its words', () => {
    expect(read(speech('the upstream refused the speech: A voice with the voice_id xyz was not found. (voice_not_found)'))).toEqual([
      'INVALID_PARAMETER',
      'voice',
      'voice: the speech task task-2 failed: the upstream refused the speech: A voice with the voice_id xyz was not found. (voice_not_found)',
    ]);
    expect(read(speech("the upstream refused the speech: Voice 'xyz' not found."))[1]).toBe('voice');
    expect(read(speech('the upstream refused the speech: * GenerateContentRequest.generation_config.speech_config.voice_config.prebuilt_voice_config.voice_name: Voice xyz is not supported.'))[1]).toBe('voice');
  });

  it("the vendor's moderation: content refused, not a refused request", () => {
    expect(read(speech("the upstream refused the speech: the upstream's moderation refused the text: Your prompt appears to have violated our Terms of Service (bad_prompt)"))[0]).toBe('CONTENT_REFUSED');
    expect(read(image('the upstream refused the task: Your request was rejected by the safety system. (moderation_blocked)'))[0]).toBe('CONTENT_REFUSED');
  });

  it("a failed generation, the gateway's own failure, another operation's words or no reason: a 502", () => {
    expect(read(image('the upstream failed (HTTP 500): busy'))[0]).toBe('UPSTREAM_FAILED');
    expect(read(speech('the upstream refused the video: voice'))[0]).toBe('UPSTREAM_FAILED');
    expect(read(image('the upstream refused the tasks: x'))[0]).toBe('UPSTREAM_FAILED');
    expect(image(null).code).toBe('UPSTREAM_FAILED');
  });
});
