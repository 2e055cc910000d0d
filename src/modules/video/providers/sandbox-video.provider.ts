import { Injectable } from '@nestjs/common';
import type { StepOutcome } from '../../../common/tasks/task-kind.js';
import { AppConfig } from '../../../infra/config/app-config.js';
import { MediaFile } from '../../../infra/storage/storage.js';
import { DEFAULT_ASPECT_RATIO, durationOf, type VideoTask } from '../video-task.js';
import { renderClip, resolutionHeight } from './clip-renderer.js';
import type { VideoContext, VideoProvider, VideoResult } from './video-provider.js';
import { StepScope } from '../../../infra/process/step-scope.js';
import { boundedSharp } from '../../../infra/images/image-bounds.js';
import { VIDEO_VENDORS } from '../../../vendors/video-vendors.js';

/**
 * Works offline: renders a real H.264 MP4 from the keyframes or, for a text prompt, a titled gradient,
 * as long as `duration` (5 s without it) and as high as `resolution` (about 640x360 without it), of the asked
 * shape (a model that takes its first frame's shape makes the frame's, else 16:9), from
 * frame0 to frame1 (or there and back with `loop`); a seed fixes the gradient's colours, `audio` adds a sound
 * track. It declares every model of every vendor (`GET /models` with the sandbox), each capable of all.
 */
@Injectable()
export class SandboxVideoProvider implements VideoProvider {
  constructor(private readonly config: AppConfig) {}

  async step(generation: VideoTask, ctx: VideoContext): Promise<StepOutcome<VideoResult>> {
    const start = await ctx.keyframeImage('frame0');
    const end = await ctx.keyframeImage('frame1');
    if (this.config.sandboxDelayMs > 0) await StepScope.delay(this.config.sandboxDelayMs); // ends with the step's time limit
    const video = new MediaFile(ctx.file('clip', 'mp4'));
    const clip = await renderClip(
      {
        aspectRatio: await this.shapeOf(generation, start),
        loop: generation.params.loop,
        start,
        end,
        imageLimits: this.config.images,
        title: generation.params.prompt,
        seconds: durationOf(generation.params),
        height: resolutionHeight(generation.params.resolution),
        seed: generation.params.seed,
        audio: generation.params.audio,
      },
      video.path,
    );
    return { kind: 'done', result: { video, thumbnail: clip.thumbnail, thumbnailType: 'image/jpeg', width: clip.width, height: clip.height, model: generation.params.model ?? 'sandbox' } };
  }

  /**
   * The clip's shape: the asked one; else, from a first frame, the frame's own where the named model takes its
   * shape from it (Kling's image-to-video, Seedance's adaptive: shapeFromImage), as the vendor makes it; else 16:9.
   */
  private async shapeOf(generation: VideoTask, start: Buffer | undefined): Promise<string> {
    const asked = generation.params.aspectRatio;
    if (asked || !start || !takesFrameShape(generation.params.model)) return asked ?? DEFAULT_ASPECT_RATIO;
    try {
      // upright, as the render draws it (a phone's portrait JPEG is stored landscape with an EXIF orientation)
      const { autoOrient } = await boundedSharp(start, this.config.images).metadata();
      return `${autoOrient.width}:${autoOrient.height}`;
    } catch {
      return DEFAULT_ASPECT_RATIO; // the frame was checked at its intake; the render says what is wrong with it
    }
  }
}

/** Whether a catalog model of any vendor, by its id, makes its video in its first frame's shape. */
function takesFrameShape(model: string | undefined): boolean {
  return model !== undefined && VIDEO_VENDORS.some((vendor) => vendor.models.some((m) => m.id === model && m.shapeFromImage));
}
