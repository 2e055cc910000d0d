import { ERROR_CODES } from '../../src/common/errors/app-error.js';
import { describeError } from '../../src/common/errors/error-catalog.js';

describe('error catalog', () => {
  it('gives every domain code a distinct numeric code', () => {
    const numbers = ERROR_CODES.map((c) => describeError(c).code);
    expect(new Set(numbers).size).toBe(numbers.length);
  });

  it("follows Kling's families for status and code", () => {
    const wire = Object.fromEntries(ERROR_CODES.map((c) => [c, describeError(c)]));
    expect([wire.AUTH_FAILED, wire.AUTH_MISSING, wire.AUTH_MALFORMED, wire.AUTH_REVOKED].map((w) => [w.status, w.code])).toEqual([
      [401, 1000],
      [401, 1001],
      [401, 1002],
      [401, 1004],
    ]);
    // too many refused credentials from one address: a rate refusal (429) in the authentication family
    expect([wire.AUTH_THROTTLED.status, wire.AUTH_THROTTLED.code]).toEqual([429, 1005]);
    expect([wire.FORBIDDEN.status, wire.FORBIDDEN.code]).toEqual([403, 1103]);
    expect([wire.INVALID_REQUEST.status, wire.INVALID_REQUEST.code, wire.INVALID_PARAMETER.code]).toEqual([400, 1200, 1201]);
    expect([wire.NOT_FOUND.status, wire.NOT_FOUND.code]).toEqual([404, 1203]);
    expect(wire.CONFLICT.status).toBe(409);
    expect(wire.PAYLOAD_TOO_LARGE.status).toBe(413);
    expect([wire.RATE_LIMITED.status, wire.RATE_LIMITED.code, wire.CONCURRENCY_LIMITED.code]).toEqual([429, 1302, 1303]);
    expect([wire.INTERNAL.status, wire.INTERNAL.code]).toEqual([500, 5000]);
    expect([wire.UNAVAILABLE.status, wire.UNAVAILABLE.code]).toEqual([503, 5001]);
  });

  it('has a snake_case string code for the audio route for every code', () => {
    for (const c of ERROR_CODES) expect(describeError(c).name).toMatch(/^[a-z]+(_[a-z]+)*$/);
    expect(describeError('INVALID_PARAMETER').name).toBe('invalid_parameter');
    expect(describeError('AUTH_MISSING').name).toBe('unauthorized');
  });
});
