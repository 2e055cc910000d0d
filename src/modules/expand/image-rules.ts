import { boundsProblem, describeImageBytes, headerDimensions, type ImageLimits, sniffRaster } from '../../infra/images/image-bounds.js';
import type { ExpandParams } from './expand-task.js';

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

const MB = 1024 * 1024;

/** The format from the magic numbers (a name or a Content-Type is never trusted): png, jpeg, or what the bytes are instead. */
export function sniffFormat(bytes: Buffer): ImageFormat | string {
  const raster = sniffRaster(bytes);
  return raster === 'png' || raster === 'jpeg' ? raster : describeImageBytes(bytes);
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
    if (format === 'jpeg' || (bytes.length >= PNG_HEADER_BYTES && bytes.toString('latin1', 12, 16) === 'IHDR')) ({ width, height } = headerDimensions(bytes));
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

export interface Margins {
  top: number;
  bottom: number;
  left: number;
  right: number;
}

type Ratios = Pick<ExpandParams, 'up_ratio' | 'bottom_ratio' | 'left_ratio' | 'right_ratio'>;

/** round(ratio × original dimension) on each side: height for up and bottom, width for left and right. */
export function marginsOf(ratios: Ratios, width: number, height: number): Margins {
  return {
    top: Math.round(ratios.up_ratio * height),
    bottom: Math.round(ratios.bottom_ratio * height),
    left: Math.round(ratios.left_ratio * width),
    right: Math.round(ratios.right_ratio * width),
  };
}

/** The expanded image's size, as the renderer makes it: the original and its margins. */
export function expandedSize(ratios: Ratios, width: number, height: number): { width: number; height: number } {
  const m = marginsOf(ratios, width, height);
  return { width: width + m.left + m.right, height: height + m.top + m.bottom };
}

/**
 * The service's own bounds on an expand, beyond the spec's rules: the input within the image bounds
 * (IMAGE_MAX_SIDE, IMAGE_MAX_PIXELS), and the expanded image at most `maxOutputPixels`
 * (EXPAND_MAX_OUTPUT_PIXELS). The rule broken, naming the fields; null within.
 */
export function expandBoundsProblem(ratios: Ratios, width: number, height: number, limits: ImageLimits, maxOutputPixels: number): string | null {
  const own = boundsProblem(width, height, limits);
  if (own) return `image ${own}`;
  const out = expandedSize(ratios, width, height);
  if (out.width * out.height > maxOutputPixels) {
    return (
      `the expanded image must be at most ${maxOutputPixels} pixels (width x height): the image is ${width}x${height}, and up_expansion_ratio, ` +
      `bottom_expansion_ratio, left_expansion_ratio and right_expansion_ratio make it ${out.width}x${out.height}, ${out.width * out.height} pixels; send a smaller image or smaller ratios`
    );
  }
  return null;
}
