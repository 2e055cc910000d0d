import { UpstreamBusy, UpstreamGenerationFailed, UpstreamUnavailable } from '../../infra/relay/upstream-client.js';

/**
 * A synchronous vendor's call (one that answers with what it made: OpenAI's, Gemini's and Stability's images),
 * its 5xx read as a generation that failed upstream, not charged (UpstreamGenerationFailed): the task may go
 * on to another channel, where the UpstreamClient would read it as an answer that may have acted.
 */
export async function failedGenerations<T>(work: () => Promise<T>): Promise<T> {
  try {
    return await work();
  } catch (err) {
    if (err instanceof UpstreamUnavailable && !(err instanceof UpstreamBusy) && err.answer.status !== undefined && err.answer.status >= 500) throw new UpstreamGenerationFailed(err.message, undefined, err.answer);
    throw err;
  }
}
