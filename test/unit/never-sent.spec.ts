import { neverSent, OutboundError } from '../../src/infra/outbound/safe-fetch.service.js';

/** Which failed requests provably never left (a create is then sent again, not taken for one whose answer was lost). */
describe('neverSent', () => {
  it('no connection made: refused, unresolvable, unreachable, or not made in time', () => {
    expect(neverSent(new OutboundError('network', 'the connection failed: ECONNREFUSED'))).toBe(true);
    expect(neverSent(new OutboundError('network', 'the host relay.internal could not be resolved'))).toBe(true);
    expect(neverSent(new OutboundError('network', 'the connection failed: EHOSTUNREACH'))).toBe(true);
    expect(neverSent(new OutboundError('timeout', 'could not connect within 5000 ms'))).toBe(true);
  });

  it('a connection made: a reset, or no answer in time, may have been acted on', () => {
    expect(neverSent(new OutboundError('network', 'the connection failed: ECONNRESET'))).toBe(false);
    expect(neverSent(new OutboundError('timeout', "no complete answer within 3.2 s (what was left of the request's time limit)"))).toBe(false);
    expect(neverSent(new OutboundError('refused', 'the host is not allowed'))).toBe(false);
  });
});
