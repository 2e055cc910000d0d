import type { ImageLimits } from '../../infra/config/app-config.js';
import { boundedSharp, ImageRejected, readImageHeader } from '../../infra/images/image-bounds.js';
import { IMAGE_RESOLUTIONS, sidesOf } from '../../vendors/contracts/image-request.js';
import type { ImageParams } from './image-task.js';

/** A stored image: in the asked format, of the asked size. */
export interface FinishedImage {
  body: Buffer;
  contentType: 'image/png' | 'image/jpeg' | 'image/webp';
  width: number;
  height: number;
}

const CONTENT_TYPES = { png: 'image/png', jpeg: 'image/jpeg', webp: 'image/webp' } as const;

/** The side a resolution class draws its longer side at, where a vendor does not say (the sandbox). */
const DRAWN_SIDES: Record<string, number> = { '1k': 1024, '2k': 2048, '4k': 4096 };

/**
 * The size the sandbox draws (and an edit keeps): the asked size; else the asked shape at the class's side
 * (1024 px for 1k, the default); an edit without either keeps its first image's size.
 */
export function plannedSize(params: Pick<ImageParams, 'size' | 'aspectRatio' | 'resolution' | 'mode'>, first?: { width: number; height: number }): string {
  if (params.size) return params.size;
  if (params.mode === 'edit' && first && !params.aspectRatio && !params.resolution) return `${first.width}x${first.height}`;
  const [w, h] = (params.aspectRatio ?? '1:1').split(':').map(Number);
  const side = DRAWN_SIDES[params.resolution ?? '1k'] ?? IMAGE_RESOLUTIONS['1k'];
  const even = (v: number) => Math.max(2, Math.round(v / 2) * 2);
  return w >= h ? `${side}x${even((side * h) / w)}` : `${even((side * w) / h)}x${side}`;
}

/**
 * Whether an image of the asked size is already what was asked, so it is kept as it came, neither decoded
 * nor encoded again (the header checks are all it needs): the asked format, no compression asked of it,
 * and nothing to flatten (an opaque background asked of an image that has no alpha, read from its header).
 */
async function alreadyAsAsked(bytes: Buffer, format: string, params: Pick<ImageParams, 'outputFormat' | 'outputCompression' | 'background'>, limits: ImageLimits): Promise<boolean> {
  if (format !== params.outputFormat || params.outputCompression !== undefined) return false;
  if (format === 'jpeg' || params.background !== 'opaque') return true;
  try {
    return !(await boundedSharp(bytes, limits).metadata()).hasAlpha;
  } catch {
    return false; // sharp cannot read it: the encode below says why
  }
}

/**
 * An image as a vendor (or the sandbox) made it, into what the caller asked: kept as it is when it already
 * is (alreadyAsAsked), else decoded under the pixel limit,
 * resized (cover: the shape kept, the excess cropped from the centre) to an asked exact size it does not
 * have, encoded in the asked format and compression; a transparent background kept (PNG, WebP), an opaque
 * one flattened on white. Throws ImageRejected when the bytes are not an image within the limits.
 */
export async function finishImage(bytes: Buffer, params: Pick<ImageParams, 'size' | 'target_size' | 'outputFormat' | 'outputCompression' | 'background'>, limits: ImageLimits): Promise<FinishedImage> {
  const header = readImageHeader(bytes, limits);
  const format = params.outputFormat;
  const size = params.size ?? params.target_size;
  const asked = size ? sidesOf(size) : undefined;
  const resized = asked !== undefined && (asked.width !== header.width || asked.height !== header.height);
  if (!resized && (await alreadyAsAsked(bytes, header.format, params, limits))) {
    return { body: bytes, contentType: CONTENT_TYPES[format], width: header.width, height: header.height };
  }
  let image = boundedSharp(bytes, limits);
  let { width, height } = header;
  if (asked && resized) {
    image = image.resize(asked.width, asked.height, { fit: 'cover', position: 'centre' });
    ({ width, height } = asked);
  }
  const quality = params.outputCompression ?? 90;
  if (format === 'jpeg' || params.background === 'opaque') image = image.flatten({ background: '#ffffff' });
  if (format === 'png') image = image.png();
  else if (format === 'jpeg') image = image.jpeg({ quality: Math.max(1, quality) });
  else image = image.webp({ quality: Math.max(1, quality), alphaQuality: 100 });
  try {
    return { body: await image.toBuffer(), contentType: CONTENT_TYPES[format], width, height };
  } catch (err) {
    throw new ImageRejected(`could not be decoded (${(err as Error).message.slice(0, 80)})`);
  }
}
