import sharp from 'sharp';
import { ImageRuleError, inspectImage } from '../../src/modules/expand/image-rules.js';

// The header is read by image-size, which trusts lengths: a file cut anywhere must be refused as
// truncated or corrupt, never read past its end (a pooled Buffer has someone else's bytes there).
describe('inspectImage on cut files', () => {
  const cases: Array<[string, () => Promise<Buffer>]> = [
    ['PNG', () => sharp({ create: { width: 400, height: 300, channels: 3, background: '#336699' } }).png().toBuffer()],
    ['JPEG', () => sharp({ create: { width: 400, height: 300, channels: 3, background: '#336699' } }).jpeg().toBuffer()],
  ];

  it.each(cases)('%s: whole, it passes; cut in its header, it is refused as truncated or corrupt', async (_name, make) => {
    const whole = await make();
    expect(inspectImage(whole)).toEqual(expect.objectContaining({ width: 400, height: 300 }));
    // copies inside a larger buffer filled with a plausible header, as a pooled Buffer could be
    const junk = Buffer.alloc(4096, 0x7f);
    for (let cut = 4; cut < Math.min(whole.length, 700); cut++) {
      const host = Buffer.concat([whole.subarray(0, cut), junk]);
      const piece = host.subarray(0, cut);
      let facts: unknown;
      try {
        facts = inspectImage(piece);
      } catch (err) {
        expect(err).toBeInstanceOf(ImageRuleError);
        continue;
      }
      // a JPEG cut after its frame header still states its size truly (the worker then fails it)
      expect(facts).toEqual(expect.objectContaining({ width: 400, height: 300 }));
    }
  });

  it('refuses a PNG cut at 20 bytes with a message saying so', async () => {
    const png = await cases[0][1]();
    expect(() => inspectImage(png.subarray(0, 20))).toThrow(/truncated or corrupt/);
  });
});

describe('inspectImage on a JPEG whose frame header lies past the first 256 kB', () => {
  it('reads its true size from inside a larger buffer', async () => {
    // an APP15 segment of ~65 kB repeated pushes the frame header (SOF) far into the file
    const jpeg = await sharp({ create: { width: 400, height: 300, channels: 3, background: '#336699' } }).jpeg().toBuffer();
    const filler = Buffer.concat(Array.from({ length: 5 }, () => Buffer.concat([Buffer.from([0xff, 0xef, 0xff, 0xf0]), Buffer.alloc(0xfff0 - 2, 0x7f)])));
    const deep = Buffer.concat([jpeg.subarray(0, 2), filler, jpeg.subarray(2)]);
    expect(deep.length).toBeGreaterThan(256 * 1024);
    const host = Buffer.concat([deep, Buffer.alloc(4096, 0x7f)]);
    expect(inspectImage(host.subarray(0, deep.length))).toEqual(expect.objectContaining({ width: 400, height: 300 }));
    // cut before its frame header: refused, though the buffer goes on
    expect(() => inspectImage(host.subarray(0, 300 * 1024))).toThrow(/truncated or corrupt/);
  });
});
