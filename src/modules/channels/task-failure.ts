import { AppError } from '../../common/errors/app-error.js';
import { readsAsContentRefusal } from '../../vendors/registry.js';
import { upstreamRefusalOf } from './channel-routing.js';

/** What a door calls a task in its words ("image", "speech", "music"), and the operation's own noun for it (its definition's). */
export interface FailedTaskWords {
  what: string;
  noun: string;
  /** The field a vendor's refusal is about, read from its words, when the door can tell (`voice`); else none is named. */
  paramOf?: (vendorWords: string) => string | undefined;
}

/**
 * A failed task as the error of a door that answers when its task ends (OpenAI's images and speech, ElevenLabs'
 * music), each door rendering the code in its own shape:
 * - the vendor's moderation refusing the prompt or text: content refused (OpenAI's 400 `moderation_blocked`,
 *   ElevenLabs' 400 `bad_prompt`);
 * - the vendor refusing what it was asked (a size, a length or a voice id it does not take, a prompt over its
 *   length): a refused request in its words (OpenAI's 400 `invalid_request_error`, ElevenLabs' 422), naming the
 *   field where `paramOf` finds one — the caller's request to change, which no retry mends (the vendor was
 *   asked once: a refused request is not failed over);
 * - any other failure (a failed generation, the gateway's own): 502.
 */
export function failedTaskError(task: { id: string; message: string | null }, words: FailedTaskWords): AppError {
  const reason = task.message ?? 'the task failed';
  const failed = `the ${words.what} task ${task.id} failed: ${reason}`;
  if (readsAsContentRefusal(reason)) return new AppError('CONTENT_REFUSED', failed);
  const refused = upstreamRefusalOf(reason, words.noun);
  if (refused === undefined) return new AppError('UPSTREAM_FAILED', failed);
  const param = words.paramOf?.(refused);
  return param ? AppError.invalidParameter(`${param}: ${failed}`, { param, rule: 'value' }) : new AppError('INVALID_PARAMETER', failed);
}
