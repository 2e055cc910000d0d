import { crc32, deflateSync } from 'node:zlib';
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

/** A PNG chunk: length, type, data, CRC. */
function pngChunk(type: string, data: Buffer): Buffer {
  const out = Buffer.alloc(12 + data.length);
  out.writeUInt32BE(data.length, 0);
  out.write(type, 4, 'latin1');
  data.copy(out, 8);
  out.writeUInt32BE(crc32(Buffer.concat([Buffer.from(type, 'latin1'), data])), 8 + data.length);
  return out;
}

/**
 * A valid PNG of one colour, of any size, in a few kB: a 1-bit palette image (every pixel index 0, so the
 * image data is zeros and deflates about 1000:1). A decoder expands it to 8-bit RGB: 16000 x 16000 is a 31 kB
 * file that decodes to 768 MB. Built here in milliseconds (sharp takes seconds to encode 256 M pixels).
 */
export function flatPng(width: number, height: number, rgb: [number, number, number] = [40, 90, 160]): Buffer {
  const header = Buffer.alloc(13);
  header.writeUInt32BE(width, 0);
  header.writeUInt32BE(height, 4);
  header[8] = 1; // bit depth
  header[9] = 3; // palette
  const rowBytes = 1 + Math.ceil(width / 8); // filter type 0, then the indexes
  const data = deflateSync(Buffer.alloc(rowBytes * height), { level: 9 });
  const signature = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]);
  return Buffer.concat([signature, pngChunk('IHDR', header), pngChunk('PLTE', Buffer.from(rgb)), pngChunk('IDAT', data), pngChunk('IEND', Buffer.alloc(0))]);
}
