import { writeFile } from 'node:fs/promises';
import { Injectable } from '@nestjs/common';
import sharp, { type ExtendWith, type Sharp } from 'sharp';
import { type StepOutcome, TaskFailure } from '../../../common/tasks/task-kind.js';
import { AppConfig, type ImageLimits } from '../../../infra/config/app-config.js';
import { boundedSharp, decodeFault } from '../../../infra/images/image-bounds.js';
import { MediaFile } from '../../../infra/storage/storage.js';
import type { ExpandTask } from '../expand-task.js';
import { type Margins, marginsOf } from '../image-rules.js';
import type { ExpandContext, ExpandProvider, ExpandResultImage } from './expand-provider.js';
import { StepScope } from '../../../infra/process/step-scope.js';

// Inputs are read from work files that are removed when their step ends: libvips must not keep them open
// in its operation cache (the default keeps 20), or the disk space of removed inputs would stay in use.
sharp.cache({ files: 0 });

interface Fill {
  extendWith: ExtendWith;
  /** Blur the filled area (0: none). */
  blur: number;
}

/** A different fill for each of up to 9 result images. */
const FILLS: Fill[] = [
  { extendWith: 'mirror', blur: 0 },
  { extendWith: 'copy', blur: 0 },
  { extendWith: 'mirror', blur: 12 },
  { extendWith: 'repeat', blur: 0 },
  { extendWith: 'copy', blur: 8 },
  { extendWith: 'mirror', blur: 4 },
  { extendWith: 'repeat', blur: 16 },
  { extendWith: 'copy', blur: 24 },
  { extendWith: 'mirror', blur: 40 },
];

/**
 * Works offline and makes real images: grows the canvas by exactly the requested margins and fills the
 * new area from the image itself (mirror, edge copy, tiling, blurred variants), one fill per result, as PNG.
 */
@Injectable()
export class SandboxExpandProvider implements ExpandProvider {
  constructor(private readonly config: AppConfig) {}

  async step(task: ExpandTask, ctx: ExpandContext): Promise<StepOutcome<ExpandResultImage[]>> {
    const source = await ctx.source();
    if (this.config.sandboxDelayMs > 0) await StepScope.delay(this.config.sandboxDelayMs); // ends with the step's time limit
    const margins = marginsOf(task.params, source.facts.width, source.facts.height);
    const width = source.facts.width + margins.left + margins.right;
    const height = source.facts.height + margins.top + margins.bottom;
    const input = sharpInput(source.image);
    const images: ExpandResultImage[] = [];
    for (let i = 0; i < task.params.n; i++) {
      // rendered into work files, from which storage takes them: no result buffer outlives its write
      const body = new MediaFile(ctx.file(`result-${i}`, 'png'));
      try {
        await writeOut(await render(input, margins, FILLS[i % FILLS.length], this.config.images), body.path);
      } catch (err) {
        // an image whose header is whole but whose pixel data is not fails its task at once, saying so (not
        // each attempt, then 'internal error'); the render is the one decode, so nothing decodes it before
        const fault = decodeFault(err, source.facts.format);
        if (fault) throw new TaskFailure(`the image ${task.params.image_url ? 'at the URL ' : ''}breaks a rule: image ${fault.message}`);
        throw err;
      }
      let watermark: MediaFile | undefined;
      if (task.params.watermark) {
        watermark = new MediaFile(ctx.file(`watermark-${i}`, 'png'));
        await writeOut(stampWatermark(body.path, width, height), watermark.path);
      }
      images.push({ body, contentType: 'image/png', width, height, ...(watermark ? { watermark } : {}) });
    }
    return { kind: 'done', result: images };
  }
}

/**
 * Encodes into `file`. Through a buffer written at once rather than libvips' own file output, which writes
 * in 8 kB pieces (some 700 system calls for a 1500 × 1500 PNG; measured: 10-25 % more libvips CPU per
 * task); the buffer lives only for the write, too briefly to reach the old generation.
 */
async function writeOut(image: Sharp, file: string): Promise<void> {
  await writeFile(file, await image.toBuffer());
}

/** What sharp reads: a file by its path, or bytes. */
function sharpInput(image: Buffer | MediaFile): Buffer | string {
  return image instanceof MediaFile ? image.path : image;
}

/** A visible mark on a copy: a translucent band across the bottom with the service's name. */
export function stampWatermark(image: Buffer | string, width: number, height: number): Sharp {
  const band = Math.max(24, Math.round(height / 10));
  const size = Math.round(band * 0.55);
  const svg = `<svg xmlns="http://www.w3.org/2000/svg" width="${width}" height="${height}">
    <rect x="0" y="${height - band}" width="${width}" height="${band}" fill="black" fill-opacity="0.45"/>
    <text x="${width - size / 2}" y="${height - band / 2}" text-anchor="end" dominant-baseline="middle" font-family="DejaVu Sans, sans-serif" font-size="${size}" fill="white" fill-opacity="0.9">media-gateway · sandbox</text>
  </svg>`;
  return sharp(image).composite([{ input: Buffer.from(svg), left: 0, top: 0 }]).png({ compressionLevel: 6 });
}

/**
 * The pipeline of one result, ready to be written (as PNG). The input is the caller's: read under the image
 * bounds (its size was checked against them, and the output's against EXPAND_MAX_OUTPUT_PIXELS, before).
 */
async function render(input: Buffer | string, margins: Margins, fill: Fill, limits: ImageLimits): Promise<Sharp> {
  const extended = boundedSharp(input, limits).extend({ ...margins, extendWith: fill.extendWith });
  if (fill.blur === 0) return extended.png({ compressionLevel: 6 });
  const blurred = await extended.blur(fill.blur).png({ compressionLevel: 1 }).toBuffer();
  // the blurred canvas is the service's own; the input laid over it is the caller's again
  return sharp(blurred)
    .composite([{ input, left: margins.left, top: margins.top, limitInputPixels: limits.maxPixels }])
    .png({ compressionLevel: 6 });
}
