import fc from 'fast-check';
import { Base64FieldReader, DECODED, DECODED_MARKER, type BodyWithDecoded } from '../../src/common/http/base64-field-reader.js';

const MAX = 64 * 1024;

/** Feeds `text` in the given chunk sizes and returns the parsed body. */
function read(text: string, sizes: number[], max = MAX): BodyWithDecoded {
  const bytes = Buffer.from(text, 'utf8');
  const reader = new Base64FieldReader('image', max, bytes.length);
  let at = 0;
  for (const size of sizes) {
    if (at >= bytes.length) break;
    reader.write(bytes.subarray(at, at + size));
    at += size;
  }
  if (at < bytes.length) reader.write(bytes.subarray(at));
  return reader.finish() as BodyWithDecoded;
}

/** How a client might write Base64 inside a JSON string: plain, with \/ (PHP), \u002B (.NET), line breaks, URL-safe. */
const spelling = fc.constantFrom('plain', 'escaped-slash', 'unicode-plus', 'line-breaks', 'url-safe');

function spell(base64: string, how: string): string {
  switch (how) {
    case 'escaped-slash':
      return base64.replace(/\//g, '\\/');
    case 'unicode-plus':
      return base64.replace(/\+/g, '\\u002B');
    case 'line-breaks':
      return base64.replace(/(.{76})/g, '$1\\n');
    case 'url-safe':
      return base64.replace(/\+/g, '-').replace(/\//g, '_').replace(/=+$/, '');
    default:
      return base64;
  }
}

const others = fc.dictionary(
  fc.string({ minLength: 1, maxLength: 8 }).filter((k) => k !== 'image'),
  fc.oneof(fc.string(), fc.integer(), fc.constant(null), fc.array(fc.string(), { maxLength: 3 }), fc.dictionary(fc.string({ maxLength: 4 }), fc.string(), { maxKeys: 3 })),
  { maxKeys: 5 },
);

describe('Base64FieldReader', () => {
  it('decodes the field as JSON.parse and Buffer.from would, whatever the chunks and the spelling', () => {
    fc.assert(
      fc.property(fc.uint8Array({ minLength: 60, maxLength: 3000 }), spelling, others, fc.array(fc.integer({ min: 1, max: 700 }), { maxLength: 60 }), fc.boolean(), (data, how, rest, sizes, imageFirst) => {
        const bytes = Buffer.from(data);
        const image = spell(bytes.toString('base64'), how);
        const restJson = JSON.stringify(rest).slice(1, -1);
        const text = imageFirst ? `{ "image" : "${image}"${restJson ? `,${restJson}` : ''}}` : `{${restJson ? `${restJson},` : ''}"image":"${image}"}`;
        const body = read(text, sizes);
        expect(body.image).toBe(DECODED_MARKER);
        expect(body[DECODED]?.problem).toBeUndefined();
        expect(Buffer.compare(body[DECODED]!.bytes, bytes)).toBe(0);
        const { image: _, ...others } = JSON.parse(text) as Record<string, unknown>;
        expect(Object.fromEntries(Object.entries(body).filter(([k]) => k !== 'image'))).toEqual(others);
      }),
      { numRuns: 300 },
    );
  });

  it('leaves any other JSON exactly as JSON.parse reads it: URLs, short or odd strings, nested "image" keys', () => {
    const values = fc.oneof(
      fc.webUrl(),
      fc.string(),
      fc.constant('data:image/png;base64,iVBORw0KGgo='.repeat(3)),
      fc.integer(),
      fc.constant(null),
      fc.string({ minLength: 70, maxLength: 200 }).map((s) => `${'A'.repeat(64)}${s}`),
    );
    fc.assert(
      fc.property(values, others, fc.array(fc.integer({ min: 1, max: 50 }), { maxLength: 40 }), (value, rest, sizes) => {
        const text = JSON.stringify({ nested: { image: 'x'.repeat(80) }, ...rest, image: value });
        const body = read(text, sizes);
        const expected = JSON.parse(text) as Record<string, unknown>;
        if (body[DECODED]) {
          // long Base64-looking text with a stray character: decoded with a problem, never silently accepted
          expect(body[DECODED]!.problem).toBeDefined();
          expect(body.image).toBe(DECODED_MARKER);
        } else {
          expect(body).toEqual(expected);
          expect(Object.getOwnPropertySymbols(body)).toEqual([]);
        }
      }),
      { numRuns: 300 },
    );
  });

  it('names the rule a bad value breaks, and counts a too-large one without keeping it', () => {
    const big = Buffer.alloc(MAX + 3000, 7).toString('base64');
    const tooLarge = read(`{"image":"${big}"}`, [1000]);
    expect(tooLarge[DECODED]!.bytes.length).toBe(0);
    expect(tooLarge[DECODED]!.decodedLength).toBe(MAX + 3000);
    expect(read(`{"image":"${'A'.repeat(80)}=A"}`, [7])[DECODED]!.problem).toMatch(/"=" may only end it/);
    expect(read(`{"image":"${'A'.repeat(81)}="}`, [7])[DECODED]!.problem).toMatch(/multiple of 4/);
    expect(read(`{"image":"${'A'.repeat(80)}\\u00e9"}`, [7])[DECODED]!.problem).toMatch(/URL or Base64/);
    expect(() => read(`{"image":"${'A'.repeat(80)}"`, [5])).toThrow(SyntaxError);
  });

  it('refuses a body that is not one JSON object or array at its first byte outside it, not at its end', () => {
    const first = (text: string | Buffer) => {
      const reader = new Base64FieldReader('image', MAX);
      const bytes = Buffer.from(text);
      for (let at = 0; at < bytes.length; at += 16) {
        try {
          reader.write(bytes.subarray(at, at + 16));
        } catch (err) {
          return { at, message: (err as Error).message, syntax: err instanceof SyntaxError };
        }
      }
      return undefined;
    };
    expect(first(Buffer.alloc(1024 * 1024))).toEqual({ at: 0, message: 'Unexpected token "\\u0000" at position 0: the body must be a JSON object', syntax: true });
    expect(first(`"${'x'.repeat(1000)}"`)).toMatchObject({ at: 0, syntax: true });
    expect(first('a=1&b=2')).toMatchObject({ at: 0, syntax: true });
    expect(first(`{"a":1} ${'x'.repeat(1000)}`)).toEqual({ at: 0, message: 'Unexpected non-whitespace character after JSON at position 8', syntax: true });
    expect(first(`{"a":1}${'\0'.repeat(1000)}`)).toMatchObject({ at: 0, syntax: true });
    // what JSON.parse reads, and a UTF-8 byte order mark before it, goes through
    expect(read(' \r\n\t{"a":[1,{"b":"}"}]} \n', [3])).toEqual({ a: [1, { b: '}' }] });
    expect(read('\uFEFF{"a":1}', [1])).toEqual({ a: 1 });
    expect(read('[1,2]', [1])).toEqual([1, 2]);
  });
});
