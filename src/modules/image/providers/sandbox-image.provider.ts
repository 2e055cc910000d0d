import { createHash, randomInt } from 'node:crypto';
import { Injectable } from '@nestjs/common';
import sharp from 'sharp';
import type { StepOutcome } from '../../../common/tasks/task-kind.js';
import { AppConfig, type ImageLimits } from '../../../infra/config/app-config.js';
import { boundedSharp } from '../../../infra/images/image-bounds.js';
import { StepScope } from '../../../infra/process/step-scope.js';
import { sidesOf } from '../../../vendors/contracts/image-request.js';
import type { ImageTask } from '../image-task.js';
import { plannedSize } from '../image-output.js';
import type { ImageContext, ImageOutput, ImageProvider } from './image-provider.js';

/**
 * Works offline and makes real images: a picture drawn from the prompt and seed (the same seed, the same
 * image) at the asked size, on a transparent background where asked; an edit is the first input image with
 * the masked area (or all of it) repainted. A streaming caller is shown blurred partial images first.
 */
@Injectable()
export class SandboxImageProvider implements ImageProvider {
  constructor(private readonly config: AppConfig) {}

  async step(task: ImageTask, ctx: ImageContext): Promise<StepOutcome<ImageOutput>> {
    const p = task.params;
    const inputs = await ctx.inputs();
    const { width, height } = sidesOf(plannedSize(p, inputs[0]));
    if (this.config.sandboxDelayMs > 0) await StepScope.delay(this.config.sandboxDelayMs);
    const seed = p.seed ?? randomInt(2 ** 31);
    const images: ImageOutput['images'] = [];
    for (let i = 0; i < p.n; i++) {
      const picture = p.mode === 'edit' && inputs[0] ? await repaint(inputs[0].bytes, await ctx.mask(), width, height, `${seed}:${p.prompt}:${i}`, this.config.images) : await draw(width, height, `${seed}:${p.prompt}:${i}`, p.background === 'transparent');
      for (let k = 0; k < (p.partial_images ?? 0); k++) {
        await ctx.partial(i * 3 + k, await sharp(picture).blur(Math.max(0.3, 24 / (k + 1))).png().toBuffer());
      }
      images.push(picture);
    }
    return { kind: 'done', result: { images } };
  }
}

/** Colours from a seed: the same words, the same picture. */
function palette(words: string): string[] {
  const hash = createHash('sha256').update(words).digest();
  return [0, 3, 6, 9].map((o) => `#${hash.subarray(o, o + 3).toString('hex')}`);
}

/** A gradient with shapes, as a PNG; on a transparent background only the shapes are opaque. */
async function draw(width: number, height: number, words: string, transparent: boolean): Promise<Buffer> {
  const [a, b, c, d] = palette(words);
  const r = Math.round(Math.min(width, height) / 4);
  const svg = `<svg xmlns="http://www.w3.org/2000/svg" width="${width}" height="${height}">
    <defs><linearGradient id="g" x1="0" y1="0" x2="1" y2="1"><stop offset="0" stop-color="${a}"/><stop offset="1" stop-color="${b}"/></linearGradient></defs>
    ${transparent ? '' : `<rect width="${width}" height="${height}" fill="url(#g)"/>`}
    <circle cx="${Math.round(width / 2)}" cy="${Math.round(height / 2)}" r="${r}" fill="${c}"/>
    <rect x="${Math.round(width / 8)}" y="${Math.round(height / 8)}" width="${Math.round(width / 5)}" height="${Math.round(height / 5)}" fill="${d}"/>
  </svg>`;
  return sharp(Buffer.from(svg)).ensureAlpha().png().toBuffer();
}

/** The input at the output's size, with the masked area (transparent in the mask) or the whole of it tinted. */
async function repaint(input: Buffer, mask: { bytes: Buffer } | undefined, width: number, height: number, words: string, limits: ImageLimits): Promise<Buffer> {
  const [tint] = palette(words);
  // a caller's bytes: decoded only under the image bounds
  const base = boundedSharp(input, limits).resize(width, height, { fit: 'fill' }).ensureAlpha();
  const overlay = await sharp({ create: { width, height, channels: 4, background: `${tint}99` } }).png().toBuffer();
  if (!mask) return base.composite([{ input: overlay }]).png().toBuffer();
  // where the mask is transparent the tint goes: its alpha, inverted, cuts the overlay
  const cut = await boundedSharp(mask.bytes, limits).resize(width, height, { fit: 'fill' }).ensureAlpha().extractChannel(3).negate().toBuffer();
  const masked = await sharp(overlay).removeAlpha().joinChannel(cut).png().toBuffer();
  return base.composite([{ input: masked }]).png().toBuffer();
}
