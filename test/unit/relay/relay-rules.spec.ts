import { stalledOn } from '../../../src/modules/channels/channel-router.js';
import { byWeight, stallReason, topPool } from '../../../src/modules/channels/channel-routing.js';
import { carriable, givingUp, POLLED_FRESH_MS, POLLED_MAX_CHARS, pollNews, polledStatus } from '../../../src/modules/channels/relay-flow.js';

// The pure rules of the relay path (RelayFlow, ChannelRouter), with no app and no database: which channels a
// new task is drawn from, when a held upstream task is given up, and what a poll hands its step.

describe('candidate choice: the highest priority, then the cheapest where routed by cost, then by weight', () => {
  const c = (name: string, priority: number, weight = 1, cost: number | null = null) => ({ name, priority, weight, cost });
  const names = (cs: { name: string }[]) => cs.map((x) => x.name);

  it('keeps only the channels of the highest priority', () => {
    expect(names(topPool([c('a', 0), c('b', 5), c('c', 5), c('d', 1)]))).toEqual(['b', 'c']);
    expect(names(topPool([c('a', -2), c('b', -3)]))).toEqual(['a']);
  });

  it('by cost: the cheapest of that priority, an unpriced channel only when none is priced', () => {
    const cost = (x: { cost: number | null }) => x.cost;
    expect(names(topPool([c('a', 1, 1, 0.5), c('b', 1, 1, 0.2), c('c', 1, 1, null), c('d', 0, 1, 0.01)], cost))).toEqual(['b']);
    expect(names(topPool([c('a', 1, 1, 0.2), c('b', 1, 1, 0.2)], cost))).toEqual(['a', 'b']);
    expect(names(topPool([c('a', 1, 1, null), c('b', 1, 1, null)], cost))).toEqual(['a', 'b']);
    // a cheaper channel of a lower priority never wins over the priority
    expect(names(topPool([c('a', 2, 1, 9), c('b', 1, 1, 0)], cost))).toEqual(['a']);
  });

  it('draws by weight: each point of the draw lands on the channel its weight covers', () => {
    const pool = [c('a', 0, 1), c('b', 0, 0), c('c', 0, 3)];
    const at = (point: number) => byWeight(pool, (n) => (expect(n).toBe(4), point)).name;
    expect([0, 1, 2, 3].map(at)).toEqual(['a', 'c', 'c', 'c']);
  });

  it('draws evenly when no channel has weight (a weightless channel is never drawn beside a weighted one)', () => {
    const pool = [c('a', 0, 0), c('b', 0, 0)];
    expect(byWeight(pool, (n) => (expect(n).toBe(2), 1)).name).toBe('b');
    expect(byWeight([c('a', 0, 0), c('b', 0, 2)], () => 1).name).toBe('b');
  });
});

describe('failover after acceptance: when a held upstream task is given up', () => {
  const rules = { failsOver: true, failoverOnContent: false, stalled: false, refusesContent: (words: string) => /moderation/.test(words) };
  const failed = (reason: string) => ({ state: 'failed', reason });

  it("gives up a task its vendor failed for a reason of its own, not one its moderation refused", () => {
    expect(givingUp(failed('internal error'), rules)).toBe('failed');
    expect(givingUp(failed('blocked by moderation'), rules)).toBeNull();
  });

  it('gives up a moderation refusal too with RELAY_FAILOVER_ON_CONTENT', () => {
    expect(givingUp(failed('blocked by moderation'), { ...rules, failoverOnContent: true })).toBe('failed');
  });

  it('gives up a task still working past its stall limit, never one working within it or one that ended', () => {
    expect(givingUp({ state: 'working' }, { ...rules, stalled: true })).toBe('stalled');
    expect(givingUp({ state: 'working' }, rules)).toBeNull();
    expect(givingUp({ state: 'succeeded' }, { ...rules, stalled: true })).toBeNull();
  });

  it('never where the operation does not fail over, or the task is pinned (failsOver false)', () => {
    expect(givingUp(failed('internal error'), { ...rules, failsOver: false })).toBeNull();
    expect(givingUp({ state: 'working' }, { ...rules, failsOver: false, stalled: true })).toBeNull();
  });

  it("stalls by the channel's stall_after_s, counted from the upstream task's creation", () => {
    const since = new Date(Date.now() - 120_000);
    expect(stalledOn({ stallAfterS: 60 }, since)).toBe(true);
    expect(stalledOn({ stallAfterS: 600 }, since)).toBe(false);
    expect(stalledOn({ stallAfterS: null }, since)).toBe(false);
    expect(stalledOn({ stallAfterS: 60 }, null)).toBe(false);
    expect(stallReason({ stallAfterS: 60 })).toBe("the upstream task was still working after 60 s (the channel's stall_after_s)");
  });
});

describe('a status a poll read: handed to the step it queues, used there once, not asked for again', () => {
  const ended = { state: 'succeeded', videoUrl: 'https://cdn.example/v.mp4', billed: { unit: 'seconds' as const, amount: 5 } };

  it('a poll answers working, news with the status it read, or news alone for a task the answer left out', () => {
    expect(pollNews({ state: 'working' })).toBe('working');
    expect(pollNews(ended)).toEqual({ read: ended });
    expect(pollNews({ state: 'failed', reason: 'internal error' })).toEqual({ read: { state: 'failed', reason: 'internal error' } });
    expect(pollNews(undefined)).toBe('changed');
  });

  it('carries only a status that survives JSON as it is, and is small enough for a job', () => {
    expect(carriable(ended)).toBe(true);
    expect(carriable({ state: 'succeeded', clips: [{ audioUrl: 'https://x/a.mp3', upstreamId: 'c1' }], note: null })).toBe(true);
    // an image answered as bytes, a date, a class instance: asked again by the step rather than mangled
    expect(carriable({ state: 'succeeded', images: [{ bytes: Buffer.from('png') }] })).toBe(false);
    expect(carriable({ state: 'succeeded', at: new Date() })).toBe(false);
    expect(carriable({ state: 'succeeded', amount: Number.NaN })).toBe(false);
    expect(pollNews({ state: 'succeeded', images: [{ bytes: Buffer.from('png') }] } as never)).toBe('changed');
    expect(carriable({ state: 'succeeded', text: 'x'.repeat(POLLED_MAX_CHARS) })).toBe(false);
    // what JSONB refuses (an upstream's lone surrogate, a NUL, in a value or a key): the step asks, and stores it repaired as ever
    expect(carriable({ state: 'failed', reason: 'risk \udfff control' })).toBe(false);
    expect(carriable({ state: 'failed', reason: 'risk\u0000' })).toBe(false);
    expect(carriable({ state: 'failed', reason: 'ok', extra: { 'k\ud800': 1 } })).toBe(false);
    expect(carriable({ state: 'failed', reason: 'risk 🙂 control' })).toBe(true);
  });

  it('the step uses the status its poll read of the upstream task it holds, while fresh', () => {
    const now = 1_000_000_000;
    expect(polledStatus({ upstreamId: 'up-1', status: ended, at: now - 1000 }, 'up-1', now)).toEqual(ended);
    expect(polledStatus({ upstreamId: 'up-1', status: ended, at: now - POLLED_FRESH_MS }, 'up-1', now)).toEqual(ended);
  });

  it('and asks once instead when there is none, it is of another upstream task (given up since), stale, or not an end', () => {
    const now = 1_000_000_000;
    expect(polledStatus(undefined, 'up-1', now)).toBeUndefined();
    expect(polledStatus({ upstreamId: 'up-0', status: ended, at: now }, 'up-1', now)).toBeUndefined();
    expect(polledStatus({ upstreamId: 'up-1', status: ended, at: now - POLLED_FRESH_MS - 1 }, 'up-1', now)).toBeUndefined();
    // a clock far ahead of this one's: not trusted either
    expect(polledStatus({ upstreamId: 'up-1', status: ended, at: now + POLLED_FRESH_MS + 1 }, 'up-1', now)).toBeUndefined();
    expect(polledStatus({ upstreamId: 'up-1', status: { state: 'working' }, at: now }, 'up-1', now)).toBeUndefined();
    expect(polledStatus({ upstreamId: 'up-1', status: 'succeeded', at: now }, 'up-1', now)).toBeUndefined();
    expect(polledStatus({ upstreamId: 'up-1', status: null, at: now }, 'up-1', now)).toBeUndefined();
  });
});
