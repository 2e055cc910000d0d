import sharp from 'sharp';
import { finishImage } from '../../src/modules/image/image-output.js';

const LIMITS = { maxSide: 4096, maxPixels: 16_777_216 };
const made = (width: number, height: number, format: 'png' | 'jpeg' | 'webp', alpha = false) =>
  sharp({ create: { width, height, channels: alpha ? 4 : 3, background: alpha ? { r: 50, g: 100, b: 150, alpha: 0.5 } : '#336699' } })
    .toFormat(format)
    .toBuffer();

describe("finishImage: a vendor's image into what was asked, decoded and encoded only when it must be", () => {
  it('keeps the very bytes of an image already as asked: its format and size, no compression asked, nothing to flatten', async () => {
    for (const [format, background] of [['png', undefined], ['png', 'transparent'], ['webp', undefined], ['jpeg', 'opaque']] as const) {
      const bytes = await made(64, 48, format);
      const out = await finishImage(bytes, { size: '64x48', outputFormat: format, background }, LIMITS);
      expect([format, out.body === bytes, out.width, out.height]).toEqual([format, true, 64, 48]);
    }
    // an opaque background asked of an image without alpha: nothing to flatten
    const opaque = await made(64, 48, 'png');
    expect((await finishImage(opaque, { outputFormat: 'png', background: 'opaque' }, LIMITS)).body).toBe(opaque);
  });

  it('encodes again what is not as asked: another format, another size, a compression asked, alpha on an opaque background', async () => {
    const png = await made(64, 48, 'png');
    const webp = await finishImage(png, { outputFormat: 'webp' }, LIMITS);
    expect([webp.body === png, (await sharp(webp.body).metadata()).format]).toEqual([false, 'webp']);
    const resized = await finishImage(png, { size: '32x32', outputFormat: 'png' }, LIMITS);
    expect([resized.body === png, (await sharp(resized.body).metadata()).width, resized.width, resized.height]).toEqual([false, 32, 32, 32]);
    const jpeg = await made(64, 48, 'jpeg');
    expect((await finishImage(jpeg, { outputFormat: 'jpeg', outputCompression: 40 }, LIMITS)).body).not.toBe(jpeg);
    const alpha = await made(64, 48, 'png', true);
    const flattened = await finishImage(alpha, { outputFormat: 'png', background: 'opaque' }, LIMITS);
    expect([flattened.body === alpha, (await sharp(flattened.body).metadata()).hasAlpha]).toEqual([false, false]);
    expect((await finishImage(alpha, { outputFormat: 'png', background: 'transparent' }, LIMITS)).body).toBe(alpha);
  });
});
