import sharp from 'sharp';
import { boundedMetadata, boundedSharp, decodedImageHeader, ImageRejected, readImageHeader } from '../../src/infra/images/image-bounds.js';
import { flatPng, png } from '../support/images.js';

const LIMITS = { maxSide: 500, maxPixels: 160_000 };
const image = (width: number, height: number, format: 'png' | 'jpeg' | 'webp' = 'png') =>
  sharp({ create: { width, height, channels: 3, background: '#336699' } }).toFormat(format).toBuffer();
const rejection = (work: () => unknown): string => {
  try {
    work();
  } catch (err) {
    if (err instanceof ImageRejected) return err.message;
    throw err;
  }
  return 'accepted';
};

describe('readImageHeader: the format from the bytes, the size from the header, nothing decoded', () => {
  it('takes PNG, JPEG and WebP at the bounds and refuses one pixel more, a side or the area', async () => {
    for (const format of ['png', 'jpeg', 'webp'] as const) {
      expect(readImageHeader(await image(500, 320, format), LIMITS)).toEqual({ format, width: 500, height: 320 });
      expect(readImageHeader(await image(400, 400, format), LIMITS)).toEqual({ format, width: 400, height: 400 });
      const over = await image(501, 300, format);
      expect(rejection(() => readImageHeader(over, LIMITS))).toBe('must be at most 500 px a side; it is 501x300');
    }
    expect(rejection(() => readImageHeader(flatPng(501, 300), LIMITS))).toBe('must be at most 500 px a side; it is 501x300');
    expect(rejection(() => readImageHeader(flatPng(300, 501), LIMITS))).toBe('must be at most 500 px a side; it is 300x501');
    expect(rejection(() => readImageHeader(flatPng(400, 401), LIMITS))).toBe('must be at most 160000 pixels (width x height); it is 400x401, 160400 pixels');
    expect(rejection(() => readImageHeader(flatPng(16000, 16000), LIMITS))).toBe('must be at most 500 px a side; it is 16000x16000');
  });

  it('refuses no bytes, another format, and a header cut short, in words that follow the field name', async () => {
    expect(rejection(() => readImageHeader(Buffer.alloc(0), LIMITS))).toBe('must be a PNG, JPEG or WebP image; it has no bytes');
    expect(rejection(() => readImageHeader(Buffer.from('GIF89a\x01\x00\x01\x00', 'latin1'), LIMITS))).toBe('must be a PNG, JPEG or WebP image; its bytes say: GIF');
    const cut = (await image(300, 300)).subarray(0, 20);
    expect(rejection(() => readImageHeader(cut, LIMITS))).toBe('must be a whole PNG file; its header is truncated or corrupt');
    expect(rejection(() => readImageHeader(flatPng(300, 300), LIMITS, ['jpeg']))).toBe('must be a JPEG image; its bytes say: PNG');
  });
});

describe('boundedSharp: libvips refuses to decode past the pixel limit, whatever got there', () => {
  it('decodes an image within it and refuses one over it before decoding', async () => {
    expect((await boundedSharp(flatPng(400, 400), LIMITS).raw().toBuffer()).length).toBe(400 * 400 * 3);
    await expect(boundedSharp(flatPng(400, 401), LIMITS).raw().toBuffer()).rejects.toThrow(/exceeds pixel limit/);
    await expect(boundedSharp(flatPng(16000, 16000), LIMITS).resize(64, 64).toBuffer()).rejects.toThrow(/exceeds pixel limit/);
    expect(() => boundedSharp(Buffer.alloc(0), LIMITS)).toThrow(ImageRejected);
  });

  it("reads an upstream's header under the pixel limit only (a wide result is kept), and says why it cannot", async () => {
    await expect(boundedMetadata(flatPng(1000, 100), LIMITS)).resolves.toEqual({ format: 'png', width: 1000, height: 100 });
    await expect(boundedMetadata(flatPng(400, 401), LIMITS)).rejects.toThrow('is larger than 160000 pixels');
    await expect(boundedMetadata(Buffer.from('not an image'), LIMITS)).rejects.toThrow(/is not an image/);
    await expect(boundedMetadata(Buffer.alloc(0), LIMITS)).rejects.toThrow('has no bytes');
  });
});

describe('decodedImageHeader: the header, then the pixels decoded', () => {
  const decoded = async (bytes: Buffer) => decodedImageHeader(bytes, LIMITS).then((h) => h, (err: unknown) => (err instanceof ImageRejected ? err.message : Promise.reject(err)));

  it('takes a whole PNG, JPEG and WebP, answering its header', async () => {
    for (const format of ['png', 'jpeg', 'webp'] as const) expect(await decoded(await image(300, 200, format))).toEqual({ format, width: 300, height: 200 });
  });

  it('refuses a file whose header is whole but whose image data is cut off or corrupt, in words; a header cut off as readImageHeader does', async () => {
    const whole = await png(300, 200);
    expect(await decoded(whole.subarray(0, 200))).toMatch(/^must be a whole PNG file; its image data could not be decoded \(/);
    const corrupt = Buffer.from(whole);
    corrupt.fill(0x5a, 100, 400); // inside the first IDAT
    expect(await decoded(corrupt)).toMatch(/^must be a whole PNG file; its image data could not be decoded/);
    const photo = await jpegPhoto(300, 200);
    expect(await decoded(photo.subarray(0, Math.floor(photo.length / 2)))).toMatch(/^must be a whole JPEG file; its image data could not be decoded/);
    expect(await decoded(whole.subarray(0, 20))).toBe('must be a whole PNG file; its header is truncated or corrupt');
  });
});

/** A JPEG with detail (a gradient), so that half of it holds only part of the scan. */
async function jpegPhoto(width: number, height: number): Promise<Buffer> {
  return sharp(await png(width, height)).jpeg({ quality: 90 }).toBuffer();
}
