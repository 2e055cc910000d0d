import { imageSize } from 'image-size';

/** The spec's limits on the expand input image. */
export const IMAGE_RULES = {
  maxBytes: 10 * 1024 * 1024,
  minSide: 300,
  /** width:height between 1:2.5 and 2.5:1, both ends included. */
  maxAspect: 2.5,
} as const;

export type ImageFormat = 'png' | 'jpeg';

export interface ImageFacts {
  format: ImageFormat;
  width: number;
  height: number;
  bytes: number;
}

/** A rule the image breaks; the message names `image` and the rule, for the caller. */
export class ImageRuleError extends Error {}

const PNG_SIGNATURE = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]);
const MB = 1024 * 1024;

/** Reads the format from the magic numbers: a name or a Content-Type is never trusted. */
export function sniffFormat(bytes: Buffer): ImageFormat | string {
  if (bytes.length >= 8 && bytes.subarray(0, 8).equals(PNG_SIGNATURE)) return 'png';
  if (bytes.length >= 3 && bytes[0] === 0xff && bytes[1] === 0xd8 && bytes[2] === 0xff) return 'jpeg';
  if (bytes.subarray(0, 4).toString('latin1') === 'GIF8') return 'GIF';
  if (bytes.subarray(0, 4).toString('latin1') === 'RIFF' && bytes.subarray(8, 12).toString('latin1') === 'WEBP') return 'WebP';
  if (bytes.subarray(0, 2).toString('latin1') === 'BM') return 'BMP';
  if (bytes.subarray(4, 12).toString('latin1').startsWith('ftyp')) return 'HEIC/AVIF';
  return 'not a known image format';
}

export function assertSize(bytes: number): void {
  if (bytes > IMAGE_RULES.maxBytes) {
    throw new ImageRuleError(`image must be at most 10 MB (${IMAGE_RULES.maxBytes} bytes); it is ${(bytes / MB).toFixed(2)} MB (${bytes} bytes)`);
  }
}

/** The signature and the whole IHDR chunk (length, type, 13 bytes of data, CRC). */
const PNG_HEADER_BYTES = 8 + 4 + 4 + 13 + 4;
/** PNG's own limit on a side (2^31 - 1); JPEG's is 65535. Beyond it the header is corrupt. */
const MAX_SIDE = 2 ** 31 - 1;

/** Enough of a file for the header of almost every PNG or JPEG (a JPEG's frame header follows its EXIF). */
const HEADER_WINDOW = 256 * 1024;

/**
 * The dimensions in the header, read by image-size on memory that ends where the file ends. image-size
 * reads through DataViews over the whole ArrayBuffer under its input, so a file cut short inside a
 * larger buffer (pooled, or decoded into room to spare) would be read on into other bytes. A copy of
 * the first 256 kB is enough for almost every header; a file whose header lies beyond is copied whole.
 */
function headerSize(bytes: Buffer): { width?: number; height?: number } {
  if (bytes.byteOffset === 0 && bytes.buffer.byteLength === bytes.length) return imageSize(bytes);
  if (bytes.length > HEADER_WINDOW) {
    try {
      const size = imageSize(Uint8Array.prototype.slice.call(bytes, 0, HEADER_WINDOW));
      if (size.width && size.height) return size;
    } catch {
      // the header lies beyond the window
    }
  }
  return imageSize(Uint8Array.prototype.slice.call(bytes));
}

/**
 * Checks an image file against every rule: size, JPEG/PNG by magic numbers, at least 300x300 px,
 * aspect ratio within 1:2.5..2.5:1. Dimensions come from the header, read by image-size in a few
 * microseconds on the request's own thread (sharp's metadata() costs about 0.3 ms of CPU and a trip
 * through the thread pool, on every submission).
 */
export function inspectImage(bytes: Buffer): ImageFacts {
  assertSize(bytes.length);
  const format = sniffFormat(bytes);
  if (format !== 'png' && format !== 'jpeg') {
    throw new ImageRuleError(`image must be a JPEG or PNG file; its bytes say: ${format}`);
  }
  let width: number | undefined;
  let height: number | undefined;
  try {
    if (format === 'jpeg' || (bytes.length >= PNG_HEADER_BYTES && bytes.toString('latin1', 12, 16) === 'IHDR')) ({ width, height } = headerSize(bytes));
  } catch {
    // reported below
  }
  if (!width || !height || width > MAX_SIDE || height > MAX_SIDE) {
    throw new ImageRuleError(`image could not be read as a ${format.toUpperCase()}: the file is truncated or corrupt`);
  }
  if (width < IMAGE_RULES.minSide || height < IMAGE_RULES.minSide) {
    throw new ImageRuleError(`image must be at least ${IMAGE_RULES.minSide}x${IMAGE_RULES.minSide} px; it is ${width}x${height}`);
  }
  // 2w <= 5h and 2h <= 5w: exact in integers, no float rounding at the 2.5 boundary.
  if (2 * width > 5 * height || 2 * height > 5 * width) {
    const ratio = width >= height ? `${(width / height).toFixed(3)}:1` : `1:${(height / width).toFixed(3)}`;
    throw new ImageRuleError(`image aspect ratio must be between 1:2.5 and 2.5:1; it is ${width}x${height} (${ratio})`);
  }
  return { format, width, height, bytes: bytes.length };
}
