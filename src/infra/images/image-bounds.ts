import { imageSize } from 'image-size';
import sharp, { type Metadata, type Sharp, type SharpOptions } from 'sharp';
import type { ImageLimits } from '../config/app-config.js';

/**
 * The one rule for images whose bytes a caller or an upstream chose (an expand input, a keyframe, an
 * upstream's result): their format is read from the magic numbers and their size from the header, and
 * checked against the bounds (IMAGE_MAX_SIDE, IMAGE_MAX_PIXELS), before any decoder runs; and whatever
 * decodes them is built by `boundedSharp`, which gives libvips the same pixel limit (`limitInputPixels`), so
 * an image that slipped past a check is still refused rather than decoded. A 16000x16000 PNG of one colour
 * is under 1 MB and decodes to 768 MB; the header says so in a few bytes.
 *
 * Images the service draws itself (SVG text, gradients, raw frames it rendered) need none of this.
 */

export type { ImageLimits };

/** The raster formats a caller's keyframe or upload may be (decided from the bytes, never a name or a Content-Type). */
export type RasterFormat = 'png' | 'jpeg' | 'webp';

export interface ImageHeader {
  format: RasterFormat;
  width: number;
  height: number;
}

/**
 * Why an image is refused, worded to follow the name of the field that carried it: `${field} ${message}`
 * ("image_tail must be at most 8192 px a side; it is 16000x16000").
 */
export class ImageRejected extends Error {}

const PNG_SIGNATURE = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]);

/** The format from the magic numbers, or null for anything else (empty bytes too). */
export function sniffRaster(bytes: Buffer): RasterFormat | null {
  if (bytes.length >= 8 && bytes.subarray(0, 8).equals(PNG_SIGNATURE)) return 'png';
  if (bytes.length >= 3 && bytes[0] === 0xff && bytes[1] === 0xd8 && bytes[2] === 0xff) return 'jpeg';
  if (bytes.length >= 12 && bytes.toString('latin1', 0, 4) === 'RIFF' && bytes.toString('latin1', 8, 12) === 'WEBP') return 'webp';
  return null;
}

/**
 * What the magic numbers say the bytes are, for a refusal that tells the caller: a raster format's name
 * (PNG, JPEG, WebP), another image format's (GIF, BMP, HEIC/AVIF), or that it is none the service knows.
 */
export function describeImageBytes(bytes: Buffer): string {
  const raster = sniffRaster(bytes);
  if (raster) return FORMAT_NAMES[raster];
  if (bytes.length === 0) return 'no bytes';
  if (bytes.toString('latin1', 0, 4) === 'GIF8') return 'GIF';
  if (bytes.toString('latin1', 0, 2) === 'BM') return 'BMP';
  if (bytes.toString('latin1', 4, 8) === 'ftyp') return 'HEIC/AVIF';
  return 'not a known image format';
}

/** Enough of a file for the header of almost every image (a JPEG's frame header follows its EXIF). */
const HEADER_WINDOW = 256 * 1024;

/**
 * The dimensions in the header, read by image-size (no decoder, no thread pool) on memory that ends where
 * the file ends. image-size reads through DataViews over the whole ArrayBuffer under its input, so a file
 * cut short inside a larger buffer (pooled, or decoded into room to spare) would be read on into other
 * bytes. A copy of the first 256 kB is enough for almost every header; a file whose header lies beyond is
 * copied whole. Throws what image-size throws for bytes it cannot read.
 */
export function headerDimensions(bytes: Buffer): { width?: number; height?: number } {
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

/** The rule `width` x `height` breaks, worded to follow a field's name; null within the bounds. */
export function boundsProblem(width: number, height: number, limits: ImageLimits): string | null {
  if (width > limits.maxSide || height > limits.maxSide) return `must be at most ${limits.maxSide} px a side; it is ${width}x${height}`;
  if (width * height > limits.maxPixels) return `must be at most ${limits.maxPixels} pixels (width x height); it is ${width}x${height}, ${width * height} pixels`;
  return null;
}

/** Throws ImageRejected when `width` x `height` is out of bounds. */
export function assertWithinBounds(width: number, height: number, limits: ImageLimits): void {
  const problem = boundsProblem(width, height, limits);
  if (problem) throw new ImageRejected(problem);
}

const FORMAT_NAMES: Record<RasterFormat, string> = { png: 'PNG', jpeg: 'JPEG', webp: 'WebP' };

/** "a PNG, JPEG or WebP image". */
export function formatList(formats: readonly RasterFormat[]): string {
  const names = formats.map((f) => FORMAT_NAMES[f]);
  return `a ${names.length > 1 ? `${names.slice(0, -1).join(', ')} or ${names.at(-1)}` : names[0]} image`;
}

/**
 * The format (from the magic numbers) and the size (from the header) of an image, checked against the
 * bounds; nothing is decoded. Throws ImageRejected: no bytes, not one of `formats`, a header that cannot be
 * read, or a size out of bounds.
 */
export function readImageHeader(bytes: Buffer, limits: ImageLimits, formats: readonly RasterFormat[] = ['png', 'jpeg', 'webp']): ImageHeader {
  if (bytes.length === 0) throw new ImageRejected(`must be ${formatList(formats)}; it has no bytes`);
  const format = sniffRaster(bytes);
  if (!format || !formats.includes(format)) throw new ImageRejected(`must be ${formatList(formats)}; its bytes say: ${describeImageBytes(bytes)}`);
  let size: { width?: number; height?: number } = {};
  try {
    size = headerDimensions(bytes);
  } catch {
    // reported below
  }
  const { width, height } = size;
  if (!width || !height) throw new ImageRejected(`must be a whole ${FORMAT_NAMES[format]} file; its header is truncated or corrupt`);
  assertWithinBounds(width, height, limits);
  return { format, width, height };
}

/**
 * readImageHeader, and then the image decoded (down to a few pixels, in libuv's pool: not on the event loop),
 * as every later step that reads it would: a file whose header is whole but whose pixel data is cut off or
 * corrupt (libpng's "read error", a JPEG that ends early) is refused here, in words, rather than failing each
 * step that opens it. Throws ImageRejected.
 */
export async function decodedImageHeader(bytes: Buffer, limits: ImageLimits): Promise<ImageHeader> {
  const header = readImageHeader(bytes, limits);
  await assertDecodes(bytes, header.format, limits);
  return header;
}

/**
 * An image whose header was read (readImageHeader) decoded down to a few pixels, in libuv's pool, as the steps
 * that read it would: its pixel data cut off or corrupt is an ImageRejected in words (decodeFault).
 */
async function assertDecodes(input: Buffer, format: RasterFormat, limits: ImageLimits): Promise<void> {
  try {
    await boundedSharp(input, limits).resize(4, 4, { fit: 'fill' }).raw().toBuffer();
  } catch (err) {
    throw decodeFault(err, format) ?? err;
  }
}

/**
 * What sharp's failure to read a `format` image says of the image: an ImageRejected in words where its pixel
 * data is cut off or corrupt (libpng's "read error", a JPEG that ends early), null where the error is not the
 * image's (the pixel limit, a file not read, memory), which its caller throws as it is.
 */
export function decodeFault(err: unknown, format: RasterFormat): ImageRejected | null {
  if (!(err instanceof Error) || (err as NodeJS.ErrnoException).code !== undefined || /exceeds pixel limit|Input file is missing|memory/i.test(err.message)) return null;
  return new ImageRejected(`must be a whole ${FORMAT_NAMES[format]} file; its image data could not be decoded (${err.message.split('\n')[0].slice(0, 100)})`);
}

/** Whether an image (checked by readImageHeader first) has an alpha channel, as its header says (an RGBA PNG, or a palette with transparency). */
export async function hasAlphaChannel(bytes: Buffer, limits: ImageLimits): Promise<boolean> {
  return (await boundedSharp(bytes, limits).metadata()).hasAlpha === true;
}

/**
 * sharp over bytes (or a file) a caller or an upstream chose: libvips refuses, before decoding, an image of
 * more than `limits.maxPixels` pixels ("Input image exceeds pixel limit"). Read the header (readImageHeader)
 * first, for a refusal that says why; this is the backstop.
 */
export function boundedSharp(input: Buffer | string, limits: ImageLimits, options: SharpOptions = {}): Sharp {
  if (Buffer.isBuffer(input) && input.length === 0) throw new ImageRejected('has no bytes'); // sharp would throw "Input Buffer is empty"
  return sharp(input, { ...options, limitInputPixels: limits.maxPixels });
}

/**
 * The format and size sharp reads from the header of an upstream's image (libvips opens the header only),
 * for images the service keeps or passes on without decoding them (an upstream's results and stills): only
 * the pixel limit applies, so an upstream's wide panorama is kept. Throws ImageRejected: no bytes, not an
 * image sharp reads, or over the pixel limit.
 */
export async function boundedMetadata(input: Buffer, limits: ImageLimits): Promise<{ format: string; width: number; height: number }> {
  if (input.length === 0) throw new ImageRejected('has no bytes');
  let meta: Metadata;
  try {
    meta = await boundedSharp(input, limits).metadata();
  } catch (err) {
    if (/exceeds pixel limit/.test((err as Error).message)) throw new ImageRejected(`is larger than ${limits.maxPixels} pixels`);
    throw new ImageRejected('is not an image (its bytes are not a format we read)');
  }
  if (!meta.format || !meta.width || !meta.height) throw new ImageRejected('is not an image (its header gives no size)');
  return { format: meta.format, width: meta.width, height: meta.height };
}
