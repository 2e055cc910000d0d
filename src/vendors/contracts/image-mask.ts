import sharp from 'sharp';
import type { ImageInput } from './image-vendor.js';

/**
 * An OpenAI-style mask (transparent where the image changes) as the mask FLUX Fill and Stability's inpaint
 * take (white where they paint, black where they keep): its alpha, inverted, at the image's size. The mask
 * was read and checked against the image bounds when it was accepted; it is decoded under its own pixel count
 * (sharp's limitInputPixels), so bytes that are not what their header said decode nothing larger.
 */
export function paintedWhite(mask: ImageInput, image: { width: number; height: number }): Promise<Buffer> {
  return sharp(mask.bytes, { limitInputPixels: mask.width * mask.height }).resize(image.width, image.height, { fit: 'fill' }).ensureAlpha().extractChannel(3).negate().png().toBuffer();
}
