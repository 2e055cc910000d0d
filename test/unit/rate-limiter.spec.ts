import { jest } from '@jest/globals';
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

  it('looks at an owner without a rate limit again in the background as its lease ends: no request waits for it, and a limit set since is seen', async () => {
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
      // before the last quarter of the lease: answered from it, nothing asked
      jest.setSystemTime(Date.now() + (3 * LEASE_MS) / 4 - 10);
      expect(await limiter.count('o')).toEqual({ limited: false });
      expect(calls).toHaveLength(1);
      // in it: answered at once, while the database is asked (its answer held back)
      jest.setSystemTime(Date.now() + 20);
      expect(await limiter.count('o')).toEqual({ limited: false });
      expect(await limiter.count('o')).toEqual({ limited: false }); // one renewal at a time
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

  it('names what is left and when the window ends', async () => {
    const { take } = fakeWindow(10);
    const limiter = new RateLimiter(take);
    const first = await limiter.count('o');
    expect(first).toEqual({ limited: true, allowed: true, rpm: 10, remaining: 9, resetS: 60 });
  });
});
