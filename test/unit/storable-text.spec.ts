import { isStorableText, storableJson, storableText } from '../../src/infra/database/storable-text.js';

describe('storableText: what PostgreSQL cannot store becomes U+FFFD', () => {
  it.each([
    ['a lone high surrogate', 'a\ud800b', 'a\ufffdb'],
    ['a lone low surrogate at the start', '\udfffz', '\ufffdz'],
    ['a high surrogate at the end', 'z\ud83d', 'z\ufffd'],
    ['a reversed pair', '\ude42\ud83d', '\ufffd\ufffd'],
    ['NUL', 'a\u0000b\u0000', 'a\ufffdb\ufffd'],
    ['both', '\u0000\ud800', '\ufffd\ufffd'],
  ])('%s', (_, text, expected) => {
    expect(isStorableText(text)).toBe(false);
    expect(storableText(text)).toBe(expected);
    expect(isStorableText(storableText(text))).toBe(true);
  });

  it('leaves storable text as it is (the same string): a surrogate pair, U+FFFE/U+FFFF, U+FFFD itself', () => {
    for (const text of ['', 'plain', 'clouds 🙂', '\ud83d\ude42', '\ufffe\uffff', '\ufffd', 'e\u0301']) {
      expect(isStorableText(text)).toBe(true);
      expect(storableText(text)).toBe(text);
    }
    expect(storableText(null)).toBeNull();
  });

  it('repairs a pair that a cut split', () => {
    expect(storableText('ab🙂'.slice(0, 3))).toBe('ab\ufffd');
  });
});

describe('storableJson: a document for JSONB, every string and key storable', () => {
  it('repairs strings and keys at any depth, and keeps everything else', () => {
    const doc = { ok: 'fine 🙂', bad: 'x\ud800', list: ['\u0000', 1, null, true, { 'k\udc00': 'v' }], at: new Date('2026-01-02T03:04:05Z'), nested: { deeper: { 'n\u0000': ['\udfff'] } } };
    expect(JSON.parse(storableJson(doc))).toEqual({
      ok: 'fine 🙂',
      bad: 'x\ufffd',
      list: ['\ufffd', 1, null, true, { 'k\ufffd': 'v' }],
      at: '2026-01-02T03:04:05.000Z',
      nested: { deeper: { 'n\ufffd': ['\ufffd'] } },
    });
  });

  it('writes no escape PostgreSQL refuses (\\u0000, a lone \\udXXX)', () => {
    const text = storableJson({ a: '\u0000', b: '\ud800', c: ['\udfff'], '\ud801': 1 });
    expect(text).not.toMatch(/\\u0000|\\ud[89a-f][0-9a-f]{2}/i);
  });

  it('is JSON.stringify for a storable document', () => {
    const doc = { images: [{ url: 'https://example.com/a.png', index: 0 }], title: 'tide 🙂', n: 2 };
    expect(storableJson(doc)).toBe(JSON.stringify(doc));
  });
});
