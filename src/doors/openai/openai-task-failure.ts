import { AppError } from '../../common/errors/app-error.js';
import { readsAsContentRefusal } from '../../vendors/registry.js';
import { upstreamRefusalOf } from '../../modules/channels/channel-routing.js';

/** What OpenAI's door calls a task in its words ("image", "speech"), and the operation's own noun for it (its definition's). */
export interface FailedTaskWords {
  what: string;
  noun: string;
  /** The field a vendor's refusal is about, read from its words, when the door can tell (`voice`); else none is named. */
  paramOf?: (vendorWords: string) => string | undefined;
}

/**
 * A failed task as OpenAI's error, for every operation OpenAI's door answers when its task ends (images, speech):
 * - the vendor's moderation refusing the prompt or text: 400 (`moderation_blocked`);
 * - the vendor refusing what it was asked (a size or a voice id it does not take, a prompt over its length): a
 *   400 `invalid_request_error` in its words, naming the field where `paramOf` finds one — the caller's request
 *   to change, which no retry mends (the vendor was asked once: a refused request is not failed over);
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
