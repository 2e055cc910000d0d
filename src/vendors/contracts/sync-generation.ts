import { UpstreamBusy, UpstreamGenerationFailed, UpstreamUnavailable } from '../../infra/relay/upstream-client.js';
import { UnusableAnswer } from './vendor.js';

/**
 * A synchronous vendor's call and the reading of its answer (a vendor that answers with what it made: OpenAI's,
 * Gemini's and Stability's images, the speech vendors' audio), as one generation: its 5xx is a generation that
 * failed upstream, not charged (UpstreamGenerationFailed), where the UpstreamClient would read it as an answer
 * that may have acted; and so is a 200 whose body cannot be used (UnusableAnswer: JSON or a page where audio
 * was asked, an answer without its image): nothing usable was made there. Either way the channel had the task
 * and failed it, and the task may go on to another channel that makes it (ChannelRouter), ending with these
 * words when none may.
 */
export async function failedGenerations<T>(work: () => Promise<T>): Promise<T> {
  try {
    return await work();
  } catch (err) {
    if (err instanceof UpstreamUnavailable && !(err instanceof UpstreamBusy) && err.answer.status !== undefined && err.answer.status >= 500) throw new UpstreamGenerationFailed(err.message, undefined, err.answer);
    if (err instanceof UnusableAnswer) throw new UpstreamGenerationFailed(err.message, undefined, { status: 200 });
    throw err;
  }
}
