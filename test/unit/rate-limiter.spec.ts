import { jest } from '@jest/globals';
import { READ_AHEAD_DELAY_MS } from '../../src/common/caches/read-ahead.js';
import { LEASE_MS, type RateGrant, RateLimiter } from '../../src/modules/limits/rate-limiter.js';

/** The database's side of mgw_rate_take, in memory: one owner's window, its count, and every call seen. */
function fakeWindow(rpm: number | null) {
  const window = { count: 0, start: new Date(), calls: [] as { want: number; giveBack: number }[] };
  const take = async (_owner: string, want: number, giveBack: number, giveBackWindow: Date | null): Promise<RateGrant> => {
    window.calls.push({ want, giveBack });
    await new Promise((r) => setImmediate(r)); // a round trip: requests arriving meanwhile wait for it
    if (rpm === null) return { rpm: null, granted: 0, counted: 0, windowStart: null, resetMs: null };
    if (giveBack > 0 && giveBackWindow?.getTime() === window.start.getTime()) window.count = Math.max(0, window.count - giveBack);
    let granted = 0;
    if (window.count >= rpm) window.count += 1;
    else {
      granted = Math.min(Math.max(want, 1), Math.max(1, Math.floor((rpm - window.count) / 16)));
      window.count += granted;
    }
    return { rpm, granted, counted: window.count, windowStart: window.start, resetMs: 60_000 };
  };
  return { window, take };
}

describe('RateLimiter', () => {
  it('lets exactly the limit through, however the requests interleave, and counts no request twice', async () => {
    const { window, take } = fakeWindow(60);
    const limiter = new RateLimiter(take);
    const decisions = await Promise.all(Array.from({ length: 100 }, () => limiter.count('o')));
    expect(decisions.filter((d) => d.limited && d.allowed)).toHaveLength(60);
    expect(decisions.filter((d) => d.limited && !d.allowed)).toHaveLength(40);
    expect(window.count).toBeGreaterThanOrEqual(60);
  });

  it('asks the database once per grant, not once per request, far from the limit', async () => {
    const { window, take } = fakeWindow(1_000_000);
    const limiter = new RateLimiter(take);
    for (let i = 0; i < 200; i++) await limiter.count('o');
    expect(window.calls.length).toBeLessThan(20); // grants double with the traffic
    const burst = await Promise.all(Array.from({ length: 300 }, () => limiter.count('o')));
    expect(burst.every((d) => d.limited && d.allowed)).toBe(true);
    expect(window.calls.length).toBeLessThan(30);
  });

  it('gives back what it did not use of a grant when its lease ends, and forgets the lease when the limits change', async () => {
    jest.useFakeTimers({ doNotFake: ['setImmediate', 'nextTick', 'queueMicrotask'] });
    try {
      const { window, take } = fakeWindow(1_000_000);
      const limiter = new RateLimiter(take);
      await Promise.all(Array.from({ length: 50 }, () => limiter.count('o')));
      await limiter.count('o'); // a grant of about 2 × the last one, mostly unused
      const granted = window.count;
      jest.setSystemTime(Date.now() + LEASE_MS + 1);
      await limiter.count('o');
      const last = window.calls.at(-1)!;
      expect(last.giveBack).toBeGreaterThan(0);
      expect(window.count).toBeLessThan(granted + last.want); // what was given back is off the count
      const calls = window.calls.length;
      limiter.forget('o');
      await limiter.count('o');
      expect(window.calls.length).toBeGreaterThan(calls); // asked again at once
      expect(window.calls[calls].giveBack).toBe(0); // a forgotten lease gives nothing back
    } finally {
      jest.useRealTimers();
    }
  });

  it('does not count at all for an owner without a rate limit', async () => {
    const { window, take } = fakeWindow(null);
    const limiter = new RateLimiter(take);
    const decisions = await Promise.all(Array.from({ length: 50 }, () => limiter.count('o')));
    expect(decisions.every((d) => !d.limited)).toBe(true);
    expect(window.calls).toHaveLength(1); // one look, then the lease answers
  });

  it('looks at an owner without a rate limit again in the background in the second half of its lease: no request waits for it, and a limit set since is seen', async () => {
    jest.useFakeTimers({ doNotFake: ['setImmediate', 'nextTick', 'queueMicrotask'] });
    try {
      let rpm: number | null = null;
      const calls: number[] = [];
      let answer: (() => void) | undefined;
      const take = async (): Promise<RateGrant> => {
        calls.push(Date.now());
        if (calls.length > 1) await new Promise<void>((r) => (answer = r)); // the renewal's round trip, held here
        return rpm === null ? { rpm: null, granted: 0, counted: 0, windowStart: null, resetMs: null } : { rpm, granted: 1, counted: 1, windowStart: new Date(), resetMs: 60_000 };
      };
      const limiter = new RateLimiter(take);
      expect(await limiter.count('o')).toEqual({ limited: false });
      // in the first half of the lease: answered from it, nothing asked
      jest.setSystemTime(Date.now() + LEASE_MS / 2 - 10);
      expect(await limiter.count('o')).toEqual({ limited: false });
      expect(calls).toHaveLength(1);
      // in the second half: answered at once; the database is asked a moment later, off that request (its
      // answer held back), one renewal at a time
      jest.setSystemTime(Date.now() + 20);
      expect(await limiter.count('o')).toEqual({ limited: false });
      expect(await limiter.count('o')).toEqual({ limited: false });
      expect(calls).toHaveLength(1);
      jest.advanceTimersByTime(READ_AHEAD_DELAY_MS);
      expect(await limiter.count('o')).toEqual({ limited: false });
      expect(calls).toHaveLength(2);
      // a limit set meanwhile: the renewal's answer carries it, and the lease lives on with it
      rpm = 10;
      answer!();
      await new Promise((r) => setImmediate(r));
      jest.setSystemTime(Date.now() + LEASE_MS / 2);
      expect(await limiter.count('o')).toEqual(expect.objectContaining({ limited: true, allowed: true, rpm: 10 }));
    } finally {
      jest.useRealTimers();
    }
  });

  describe('the lease of an owner without a rate limit, past half its time', () => {
    /** An owner without a rate limit; `calls`: when the database was asked. */
    function noLimit() {
      const calls: number[] = [];
      const take = async (): Promise<RateGrant> => {
        calls.push(Date.now());
        await new Promise((r) => setImmediate(r));
        return { rpm: null, granted: 0, counted: 0, windowStart: null, resetMs: null };
      };
      return { calls, limiter: new RateLimiter(take) };
    }
    /** Whether `answer` settles while the timers stand still (a few turns of the event loop). */
    const settlesAtOnce = async (answer: Promise<unknown>) => {
      let settled = false;
      void answer.then(() => (settled = true));
      for (let i = 0; i < 10 && !settled; i++) await new Promise((r) => setImmediate(r));
      return settled;
    };

    beforeEach(() => jest.useFakeTimers({ doNotFake: ['setImmediate', 'nextTick', 'queueMicrotask'] }));
    afterEach(() => jest.useRealTimers());

    it('is looked at again a moment later, off the request that found it aging, and lives on', async () => {
      const { calls, limiter } = noLimit();
      await limiter.count('o');
      jest.setSystemTime(Date.now() + LEASE_MS / 2 - 10);
      await limiter.count('o');
      expect(calls).toHaveLength(1);
      jest.setSystemTime(Date.now() + 20);
      expect(await limiter.count('o')).toEqual({ limited: false });
      await limiter.count('o');
      expect(calls).toHaveLength(1); // put off, one at a time
      jest.advanceTimersByTime(READ_AHEAD_DELAY_MS);
      expect(calls).toHaveLength(2);
      await new Promise((r) => setImmediate(r));
      jest.setSystemTime(Date.now() + LEASE_MS / 2 + 10); // past the first lease's end: the look extended it
      expect(await settlesAtOnce(limiter.count('o'))).toBe(true);
      expect(calls).toHaveLength(2);
    });

    it('is asked for at once by a request that needs it before its moment (its lease ended meanwhile)', async () => {
      const { calls, limiter } = noLimit();
      await limiter.count('o');
      jest.setSystemTime(Date.now() + LEASE_MS / 2 + 10);
      await limiter.count('o');
      expect(calls).toHaveLength(1);
      jest.setSystemTime(Date.now() + LEASE_MS);
      expect(await settlesAtOnce(limiter.count('o'))).toBe(true);
      expect(calls).toHaveLength(2);
      jest.advanceTimersByTime(READ_AHEAD_DELAY_MS);
      expect(calls).toHaveLength(2); // not sent twice
    });

    it('is not taken when the lease was forgotten before its moment (the limits changed)', async () => {
      const { calls, limiter } = noLimit();
      await limiter.count('o');
      jest.setSystemTime(Date.now() + LEASE_MS / 2 + 10);
      await limiter.count('o');
      limiter.forget('o');
      expect(await settlesAtOnce(limiter.count('o'))).toBe(true); // asked afresh, on its path
      expect(calls).toHaveLength(2);
      jest.advanceTimersByTime(READ_AHEAD_DELAY_MS);
      expect(calls).toHaveLength(2);
    });
  });

  it('names what is left and when the window ends', async () => {
    const { take } = fakeWindow(10);
    const limiter = new RateLimiter(take);
    const first = await limiter.count('o');
    expect(first).toEqual({ limited: true, allowed: true, rpm: 10, remaining: 9, resetS: 60 });
  });
});
