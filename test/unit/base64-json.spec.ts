import { Base64Bytes, Base64Json } from '../../src/common/http/base64-json.js';

/** The answer's bytes as the stream gives them, and its declared length and type. */
async function written(json: Base64Json): Promise<{ text: string; length: number | undefined; type: string | undefined; chunks: number }> {
  const chunks: Buffer[] = [];
  for await (const chunk of json.getStream()) chunks.push(chunk as Buffer);
  const headers = json.getHeaders();
  return { text: Buffer.concat(chunks).toString('utf8'), length: headers.length, type: headers.type, chunks: chunks.length };
}

describe('Base64Json: bytes as Base64 strings streamed beside the JSON, never through JSON.stringify', () => {
  // 256 kB of answer at most is made whole and written as one chunk; more is streamed in 64 kB pieces of Base64
  it.each([
    ['made whole', 100_001, 1],
    ['streamed in pieces', 300_001, 12], // 4 pieces of JSON, a's Base64, 7 of b's
  ])('answers what JSON.stringify would, with its exact length, for fields at any depth (%s)', async (_, size, chunks) => {
    const a = Buffer.from([0, 1, 2, 250, 251, 252, 253]);
    const b = Buffer.alloc(size, 7); // not a multiple of 3; streamed, more than one piece
    const value = { created: 1, data: [{ b64_json: new Base64Bytes(a), revised_prompt: 'a "quoted" \u0000 prompt ü' }, { b64_json: new Base64Bytes(b) }], size: '1024x1024', empty: new Base64Bytes(Buffer.alloc(0)) };
    const expected = JSON.stringify({ ...value, data: [{ b64_json: a.toString('base64'), revised_prompt: value.data[0].revised_prompt }, { b64_json: b.toString('base64') }], empty: '' });
    expect(await written(new Base64Json(value))).toEqual({ text: expected, length: Buffer.byteLength(expected), type: 'application/json; charset=utf-8', chunks });
  });

  it('writes a value without bytes as JSON.stringify does, text that looks like its marker included', async () => {
    const value = { text: 'mgw64:0 and \\u0000mgw64:0\\u0000 are only text here', list: [1, 2] };
    expect((await written(new Base64Json(value))).text).toBe(JSON.stringify(value));
  });
});
