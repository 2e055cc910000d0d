import { crc32 } from 'node:zlib';
import sharp from 'sharp';

/** A real PNG of the given size (a gradient, so it is not trivially compressible). */
export async function png(width: number, height: number): Promise<Buffer> {
  const raw = Buffer.alloc(width * height * 3);
  for (let y = 0; y < height; y++) {
    for (let x = 0; x < width; x++) {
      const i = (y * width + x) * 3;
      raw[i] = (x * 255) / width;
      raw[i + 1] = (y * 255) / height;
      raw[i + 2] = 128;
    }
  }
  return sharp(raw, { raw: { width, height, channels: 3 } }).png({ compressionLevel: 1 }).toBuffer();
}

export async function jpeg(width: number, height: number): Promise<Buffer> {
  return sharp({ create: { width, height, channels: 3, background: { r: 10, g: 120, b: 200 } } }).jpeg().toBuffer();
}

/** A valid PNG grown to exactly `size` bytes by a private ancillary chunk before IEND (decoders skip it). */
export function padPng(image: Buffer, size: number): Buffer {
  const overhead = 12; // length + type + crc
  const dataLength = size - image.length - overhead;
  if (dataLength < 0) throw new Error(`cannot pad a ${image.length}-byte PNG to ${size} bytes`);
  const type = Buffer.from('prVt');
  const data = Buffer.alloc(dataLength, 0x61);
  const chunk = Buffer.alloc(overhead + dataLength);
  chunk.writeUInt32BE(dataLength, 0);
  type.copy(chunk, 4);
  data.copy(chunk, 8);
  chunk.writeUInt32BE(crc32(Buffer.concat([type, data])), 8 + dataLength);
  const iend = image.length - 12;
  return Buffer.concat([image.subarray(0, iend), chunk, image.subarray(iend)]);
}

export const GIF_1X1 = Buffer.from('R0lGODlhAQABAIAAAAAAAP///yH5BAEAAAAALAAAAAABAAEAAAIBRAA7', 'base64');
