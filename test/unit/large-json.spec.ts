import { randomBytes } from 'node:crypto';
import { parseLargeJson } from '../../src/infra/relay/large-json.js';

const base64 = (bytes: number) => randomBytes(bytes).toString('base64');

describe("parseLargeJson: an upstream's answer with large Base64 strings, parsed as JSON.parse would", () => {
  it('gives the same value as JSON.parse for large strings at any depth, beside escaped and small ones', () => {
    const value = {
      created: 1,
      note: 'a "quoted" \\ path \u00fc \n',
      data: [{ b64_json: base64(300_000), revised: 'x' }, { b64_json: base64(100_000) }],
      nested: { audio: { data: base64(70_000) }, list: Array.from({ length: 2000 }, (_, i) => `item ${i} "${i}"`) },
      escapedLarge: `${'a'.repeat(70_000)}\\${'b'.repeat(10)}"`,
      unicodeLarge: 'é'.repeat(40_000),
    };
    const body = Buffer.from(JSON.stringify(value));
    expect(body.length).toBeGreaterThan(256 * 1024);
    expect(parseLargeJson(body)).toEqual(JSON.parse(body.toString('utf8')));
  });

  it('parses a small body, and one whose strings are all small, as it is; refuses what JSON.parse refuses', () => {
    expect(parseLargeJson(Buffer.from('{"a":[1,"two"]}'))).toEqual({ a: [1, 'two'] });
    const many = { list: Array.from({ length: 30_000 }, (_, i) => `s${i}`) };
    expect(parseLargeJson(Buffer.from(JSON.stringify(many)))).toEqual(many);
    expect(() => parseLargeJson(Buffer.from(`{"a":"${base64(300_000)}"`))).toThrow(SyntaxError);
    expect(() => parseLargeJson(Buffer.from(`{"a":"${base64(300_000)}`))).toThrow(SyntaxError);
  });

  it('keeps a value that only looks like its placeholder', () => {
    const value = { a: '\u0000abc:0', b: base64(300_000) };
    expect(parseLargeJson(Buffer.from(JSON.stringify(value)))).toEqual(value);
  });
});
