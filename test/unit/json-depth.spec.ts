import { MAX_JSON_DEPTH, nestingDepthExceeds } from '../../src/common/http/json-body.guard.js';

const deep = (levels: number) => Buffer.from(`${'['.repeat(levels)}${']'.repeat(levels)}`);

describe('nestingDepthExceeds', () => {
  it(`allows ${MAX_JSON_DEPTH} levels and refuses ${MAX_JSON_DEPTH + 1}`, () => {
    expect(nestingDepthExceeds(deep(MAX_JSON_DEPTH), MAX_JSON_DEPTH)).toBe(false);
    expect(nestingDepthExceeds(deep(MAX_JSON_DEPTH + 1), MAX_JSON_DEPTH)).toBe(true);
    expect(nestingDepthExceeds(Buffer.from(`{"a":${'{"a":'.repeat(MAX_JSON_DEPTH)}1${'}'.repeat(MAX_JSON_DEPTH + 1)}`), MAX_JSON_DEPTH)).toBe(true);
  });

  it('does not count brackets inside strings, escaped quotes included', () => {
    const text = JSON.stringify({ a: '['.repeat(1000), b: `"${'{'.repeat(1000)}\\"`, c: [[1]] });
    expect(nestingDepthExceeds(Buffer.from(text), 3)).toBe(false);
    expect(nestingDepthExceeds(Buffer.from(text), 2)).toBe(true);
  });

  it('reads a 13 MB string, and leaves unterminated or flat bodies to the parser', () => {
    const big = Buffer.from(JSON.stringify({ image: 'A'.repeat(13 * 1024 * 1024) }));
    expect(nestingDepthExceeds(big, MAX_JSON_DEPTH)).toBe(false);
    expect(nestingDepthExceeds(Buffer.from('{"a": "[[[['), 1)).toBe(false);
    expect(nestingDepthExceeds(Buffer.from('1'), 0)).toBe(false);
  });
});
