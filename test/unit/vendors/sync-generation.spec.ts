import { UpstreamBusy, UpstreamGenerationFailed, UpstreamRefused, UpstreamUnavailable } from '../../../src/infra/relay/upstream-client.js';
import { failedGenerations } from '../../../src/vendors/contracts/sync-generation.js';
import { UnusableAnswer } from '../../../src/vendors/contracts/vendor.js';

/**
 * A synchronous vendor's call and reading as one generation: its 5xx and a 200 that cannot be used are a failed
 * generation (another channel may make the task); everything else is left as thrown. Both sides of each. No app.
 */
const thrown = (err: Error) => failedGenerations(() => Promise.reject(err)).then(() => null, (e: unknown) => e);

describe('failedGenerations', () => {
  it('a 5xx is a failed generation with its answer; a 4xx or an answer without a status is left as it is', async () => {
    expect(await thrown(new UpstreamUnavailable('the upstream failed (HTTP 500)', true, { status: 500 }))).toMatchObject({ constructor: UpstreamGenerationFailed, answer: { status: 500 }, message: 'the upstream failed (HTTP 500)' });
    const below = new UpstreamUnavailable('odd (HTTP 499)', true, { status: 499 });
    expect(await thrown(below)).toBe(below);
    const reset = new UpstreamUnavailable('the upstream did not answer', true);
    expect(await thrown(reset)).toBe(reset);
    const busy = new UpstreamBusy('busy (HTTP 503)', 5, { status: 503 });
    expect(await thrown(busy)).toBe(busy);
  });

  it('a 200 that cannot be used is a failed generation in its words; a refusal is left as it is', async () => {
    expect(await thrown(new UnusableAnswer('the upstream answered 12 bytes (text/html), not mp3 audio'))).toMatchObject({ constructor: UpstreamGenerationFailed, answer: { status: 200 }, message: 'the upstream answered 12 bytes (text/html), not mp3 audio' });
    const refused = new UpstreamRefused('Invalid voice', 400, 'request');
    expect(await thrown(refused)).toBe(refused);
    const other = new Error('disk full');
    expect(await thrown(other)).toBe(other);
  });

  it('what the work made is answered as it is', async () => {
    expect(await failedGenerations(async () => ({ made: 1 }))).toEqual({ made: 1 });
  });
});
