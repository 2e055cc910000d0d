import { jest } from '@jest/globals';
import { loadConfig } from '../../src/infra/config/app-config.js';
import { clientKey, FailureWindows } from '../../src/modules/keys/auth-failures.js';

describe('clientKey: the address failed authentications are counted under', () => {
  it('is an IPv4 address as it is, and an IPv4-mapped IPv6 address as its IPv4', () => {
    expect(clientKey('203.0.113.7')).toBe('203.0.113.7');
    expect(clientKey('::ffff:203.0.113.7')).toBe('203.0.113.7');
    expect(clientKey('::ffff:127.0.0.1')).toBe(clientKey('127.0.0.1'));
  });

  it("is an IPv6 address's /64, which one host usually holds whole", () => {
    expect(clientKey('2001:db8:1:2:aaaa:bbbb:cccc:dddd')).toBe('2001:db8:1:2::/64');
    expect(clientKey('2001:db8:1:2::1')).toBe(clientKey('2001:db8:1:2:ffff::9'));
    expect(clientKey('2001:db8:1:3::1')).not.toBe(clientKey('2001:db8:1:2::1'));
    expect(clientKey('::1')).toBe('::/64');
  });

  it('keeps anything else as it is, and no address as one key', () => {
    expect(clientKey('not an address')).toBe('not an address');
    expect(clientKey(undefined)).toBe('unknown');
    expect(clientKey('')).toBe('unknown');
  });
});

describe('FailureWindows: the counting of AuthFailures', () => {
  const at = new Date('2026-11-26T10:00:00Z').getTime();
  beforeEach(() => jest.useFakeTimers({ now: at, doNotFake: ['nextTick', 'setImmediate'] }));
  afterEach(() => jest.useRealTimers());
  const limiter = (env: Record<string, string>) => {
    const { limit, windowS } = loadConfig(env).authFailures;
    const windows = new FailureWindows(limit, windowS);
    return { windows, record: (address: string) => windows.add(clientKey(address), 1), retryAfterS: (address: string) => windows.retryAfterS(address) };
  };

  it('leaves an address free up to the limit, refuses it at the limit until the window ends, then counts afresh', () => {
    const failures = limiter({ AUTH_FAILURE_LIMIT: '3', AUTH_FAILURE_WINDOW_S: '60' });
    expect(failures.retryAfterS('198.51.100.1')).toBe(0);
    failures.record('198.51.100.1');
    failures.record('198.51.100.1');
    expect(failures.retryAfterS('198.51.100.1')).toBe(0);
    jest.setSystemTime(at + 10_000);
    failures.record('198.51.100.1');
    // the window opened with the first failure: 50 s left
    expect(failures.retryAfterS('198.51.100.1')).toBe(50);
    expect(failures.retryAfterS('198.51.100.2')).toBe(0);
    jest.setSystemTime(at + 59_001);
    expect(failures.retryAfterS('198.51.100.1')).toBe(1);
    jest.setSystemTime(at + 60_000);
    expect(failures.retryAfterS('198.51.100.1')).toBe(0);
    failures.record('198.51.100.1');
    expect(failures.retryAfterS('198.51.100.1')).toBe(0);
  });

  it('forgets failures of an earlier window: two below the limit in each of two windows never refuse', () => {
    const failures = limiter({ AUTH_FAILURE_LIMIT: '3', AUTH_FAILURE_WINDOW_S: '10' });
    failures.record('198.51.100.1');
    failures.record('198.51.100.1');
    jest.setSystemTime(at + 10_000);
    failures.record('198.51.100.1');
    failures.record('198.51.100.1');
    expect(failures.retryAfterS('198.51.100.1')).toBe(0);
  });

  it('counts an IPv6 /64 as one client, and does nothing with AUTH_FAILURE_LIMIT=0', () => {
    const failures = limiter({ AUTH_FAILURE_LIMIT: '2' });
    failures.record('2001:db8::1');
    failures.record('2001:db8::2');
    expect(failures.retryAfterS('2001:db8::3')).toBe(60);
    const off = limiter({ AUTH_FAILURE_LIMIT: '0' });
    for (let i = 0; i < 100; i++) off.record('198.51.100.1');
    expect(off.retryAfterS('198.51.100.1')).toBe(0);
  });

  it('does not extend the window for failures past the limit: a client that keeps failing is told the same end', () => {
    const failures = limiter({ AUTH_FAILURE_LIMIT: '2', AUTH_FAILURE_WINDOW_S: '60' });
    failures.record('198.51.100.1');
    failures.record('198.51.100.1');
    jest.setSystemTime(at + 30_000);
    for (let i = 0; i < 50; i++) failures.record('198.51.100.1');
    expect(failures.retryAfterS('198.51.100.1')).toBe(30);
    jest.setSystemTime(at + 60_000);
    expect(failures.retryAfterS('198.51.100.1')).toBe(0);
  });

  it('says once per window that an address became limited (what is logged), and whether it was before', () => {
    const { windows } = limiter({ AUTH_FAILURE_LIMIT: '3', AUTH_FAILURE_WINDOW_S: '60' });
    expect(windows.add('198.51.100.1', 2)).toEqual({ wasLimited: false });
    // another instance's count may carry it past the limit at once
    expect(windows.add('198.51.100.1', 2)).toEqual({ wasLimited: false, limited: { failures: 4, endsAt: at + 60_000, limited: true } });
    expect(windows.add('198.51.100.1', 1)).toEqual({ wasLimited: true });
    jest.setSystemTime(at + 60_000);
    expect(windows.add('198.51.100.1', 3)).toEqual({ wasLimited: false, limited: { failures: 3, endsAt: at + 120_000, limited: true } });
  });
});
