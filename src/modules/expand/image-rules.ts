import sharp from 'sharp';

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

/**
 * Checks an image file against every rule: size, JPEG/PNG by magic numbers, at least 300x300 px,
 * aspect ratio within 1:2.5..2.5:1. Dimensions come from the header (sharp reads it without decoding pixels).
 */
export async function inspectImage(bytes: Buffer): Promise<ImageFacts> {
  assertSize(bytes.length);
  const format = sniffFormat(bytes);
  if (format !== 'png' && format !== 'jpeg') {
    throw new ImageRuleError(`image must be a JPEG or PNG file; its bytes say: ${format}`);
  }
  let width: number | undefined;
  let height: number | undefined;
  try {
    ({ width, height } = await sharp(bytes).metadata());
  } catch {
    // reported below
  }
  if (!width || !height) {
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
