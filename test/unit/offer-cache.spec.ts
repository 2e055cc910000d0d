import { jest } from '@jest/globals';
import { READ_AHEAD_DELAY_MS } from '../../src/common/caches/read-ahead.js';
import { type Offered, OfferCache } from '../../src/modules/channels/model-offer.js';

/** The channels' side: each read answers the models of its moment, and may be held or fail. */
function channels() {
  const state = { version: 1, reads: 0, fail: false, held: undefined as undefined | (() => void) };
  const read = async (): Promise<Offered<string>[]> => {
    state.reads++;
    const version = state.version;
    if (state.reads > 1) await new Promise<void>((r) => (state.held = r)); // every read after the first: its round trip, held here
    if (state.fail) throw new Error('the database is away');
    return [{ name: `model-${version}`, vendor: 'v', spec: 's' }];
  };
  return { state, read };
}

const names = async (cache: OfferCache<string>) => (await cache.offered()).map((m) => m.name);
const settle = () => new Promise((r) => setImmediate(r));

describe('OfferCache', () => {
  beforeEach(() => jest.useFakeTimers({ doNotFake: ['setImmediate', 'nextTick', 'queueMicrotask'] }));
  afterEach(() => jest.useRealTimers());

  it('answers from what it read for the first second without reading again, then from it while it reads again in the background', async () => {
    const { state, read } = channels();
    const cache = new OfferCache(read);
    expect(await names(cache)).toEqual(['model-1']);
    state.version = 2;
    jest.setSystemTime(Date.now() + 999);
    expect(await names(cache)).toEqual(['model-1']);
    expect(state.reads).toBe(1);
    // past half its time: answered at once; read again a moment later, off that request (the read held
    // back), one read at a time
    jest.setSystemTime(Date.now() + 2);
    expect(await names(cache)).toEqual(['model-1']);
    expect(await names(cache)).toEqual(['model-1']);
    expect(state.reads).toBe(1);
    jest.advanceTimersByTime(READ_AHEAD_DELAY_MS);
    await settle();
    expect(await names(cache)).toEqual(['model-1']);
    expect(state.reads).toBe(2);
    state.held!();
    await settle();
    expect(await names(cache)).toEqual(['model-2']); // the read's answer, for the next requests
    expect(state.reads).toBe(2);
  });

  it('reads on the request\'s path once its time is over with no request in its second half, and at once after a write here', async () => {
    const { state, read } = channels();
    let writes = 0;
    const cache = new OfferCache(read, () => writes);
    await names(cache);
    state.version = 2;
    jest.setSystemTime(Date.now() + 2000);
    const answer = names(cache);
    await settle();
    expect(state.reads).toBe(2);
    state.held!();
    expect(await answer).toEqual(['model-2']);
    state.version = 3;
    writes++;
    const afterWrite = names(cache);
    await settle();
    state.held!();
    expect(await afterWrite).toEqual(['model-3']);
  });

  it('keeps what it had to its own time when a read in the background fails, and reports a failed read on a path', async () => {
    const { state, read } = channels();
    const cache = new OfferCache(read);
    await names(cache);
    state.fail = true;
    jest.setSystemTime(Date.now() + 1500);
    expect(await names(cache)).toEqual(['model-1']);
    jest.advanceTimersByTime(READ_AHEAD_DELAY_MS);
    await settle();
    state.held!();
    await settle();
    expect(await names(cache)).toEqual(['model-1']);
    jest.setSystemTime(Date.now() + 500); // past its time: the read is on the path, and its failure is the caller's
    const answer = names(cache);
    await settle();
    state.held!();
    await expect(answer).rejects.toThrow('the database is away');
  });
});
