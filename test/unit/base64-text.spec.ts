import { isBase64Text } from '../../src/common/validation/validators.js';

describe('isBase64Text', () => {
  it('takes the alphabet, then at most two "=" at the end', () => {
    for (const ok of ['QQ==', 'QUI=', 'QUJD', 'a+/9', 'AAAA', 'A']) expect([ok, isBase64Text(ok)]).toEqual([ok, true]);
    for (const bad of ['QQ===', 'Q=Q=', '=QQ', 'QU JD', 'QUJD\n', 'data:image/png;base64,QQ==', 'a-_9', 'é', '']) expect([bad, isBase64Text(bad)]).toEqual([bad, false]);
  });

  it('takes the URL-safe alphabet, and the empty string, only when asked', () => {
    expect([isBase64Text('a-_9'), isBase64Text('a-_9', { urlSafe: true })]).toEqual([false, true]);
    expect([isBase64Text(''), isBase64Text('', { allowEmpty: true }), isBase64Text('==', { allowEmpty: true }), isBase64Text('==')]).toEqual([false, true, true, false]);
  });

  it('reads megabytes without a deep stack: 32 MB of "A", from deep in a call stack, and one stray character at its end', () => {
    const big = 'A'.repeat(32 * 1024 * 1024);
    const deep = (n: number, value: string): boolean => (n === 0 ? isBase64Text(value) : deep(n - 1, value));
    expect(deep(5000, big)).toBe(true);
    expect(deep(5000, `${big}==`)).toBe(true);
    expect(deep(5000, `${big}!`)).toBe(false);
  });
});
