import sharp from 'sharp';
import { boundedSharp, type ImageLimits, readImageHeader } from './image-bounds.js';

/** The longest side a fitted frame is given (every vendor's frame limit is at or above 4096 px: Kling's 4096 per its image rules). */
const MAX_SIDE = 4096;

export interface FittedFrame {
  /** A JPEG at the ratio (quality 92: a frame is a photograph more often than a drawing). */
  bytes: Buffer;
  width: number;
  height: number;
}

/** Whether a `width` x `height` frame is at `ratio` already (within half a percent) and at least `minSide` a side: it is then sent as it is. */
export function fitsAlready(width: number, height: number, ratio: string, minSide = 0): boolean {
  const [rw, rh] = ratio.split(':').map(Number);
  return Math.abs((width * rh) / (height * rw) - 1) <= 0.005 && Math.min(width, height) >= minSide;
}

/**
 * A frame made to the aspect ratio `ratio` (`<w>:<h>`) for a vendor whose video takes its frame's shape:
 * `crop` keeps the largest centred region of the ratio; `pad` keeps the whole frame, centred on a fill of
 * itself scaled to cover the ratio and blurred (as video editors letterbox a shot of another shape). The
 * result is exactly at the ratio (`w`·k by `h`·k px), scaled down to at most 4096 px on its longer side, and up to `minSide` on its shorter one (a
 * vendor's least frame, Kling's 300 px). The source is read under the image bounds, as every caller's image is.
 */
export async function fitFrame(source: Buffer, ratio: string, fit: 'crop' | 'pad', limits: ImageLimits, minSide = 0): Promise<FittedFrame> {
  const [rw, rh] = ratio.split(':').map(Number);
  readImageHeader(source, limits);
  // its size as a person sees it (EXIF orientation applied), read from the header; each pipeline below
  // decodes the source once and turns it upright first (autoOrient)
  const { autoOrient } = await boundedSharp(source, limits).metadata();
  const [sw, sh] = [autoOrient.width, autoOrient.height];
  const upright = () => boundedSharp(source, limits).autoOrient();
  // the canvas at exactly the ratio (rw·k by rh·k): inside the frame (crop) or around it (pad)
  const unit = fit === 'crop' ? Math.floor(Math.min(sw / rw, sh / rh)) : Math.ceil(Math.max(sw / rw, sh / rh));
  // within 4096 px on the longer side, and at least minSide on the shorter
  const k = Math.max(1, Math.min(Math.floor(MAX_SIDE / Math.max(rw, rh)), Math.max(unit, Math.ceil(minSide / Math.min(rw, rh)))));
  const [cw, ch] = [rw * k, rh * k];
  let out: Buffer;
  if (fit === 'crop') {
    out = await upright().resize(cw, ch, { fit: 'cover', position: 'centre' }).jpeg({ quality: 92 }).toBuffer();
  } else {
    // the images drawn here are the service's own (at most 4096 px a side): plain sharp; the fill blurred small and scaled up: a wide blur at full size costs seconds, this a few milliseconds
    const small = await upright().resize(Math.ceil(cw / 16), Math.ceil(ch / 16), { fit: 'cover', position: 'centre' }).blur(2).modulate({ brightness: 0.8 }).png().toBuffer();
    const fill = await sharp(small).resize(cw, ch, { fit: 'fill' }).blur(4).png({ compressionLevel: 1 }).toBuffer();
    const inner = await upright().resize(cw, ch, { fit: 'inside' }).png({ compressionLevel: 1 }).toBuffer();
    out = await sharp(fill).composite([{ input: inner, gravity: 'centre' }]).jpeg({ quality: 92 }).toBuffer();
  }
  return { bytes: out, width: cw, height: ch };
}

