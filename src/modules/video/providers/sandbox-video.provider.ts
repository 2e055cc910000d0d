import { Injectable } from '@nestjs/common';
import type { StepOutcome } from '../../../common/tasks/task-kind.js';
import { AppConfig } from '../../../infra/config/app-config.js';
import { MediaFile } from '../../../infra/storage/storage.js';
import { DEFAULT_ASPECT_RATIO, durationOf, type VideoTask } from '../video-task.js';
import { renderClip, resolutionHeight } from './clip-renderer.js';
import type { VideoContext, VideoProvider, VideoResult } from './video-provider.js';
import { StepScope } from '../../../infra/process/step-scope.js';

/**
 * Works offline: renders a real H.264 MP4 from the keyframes or, for a text prompt, a titled gradient,
 * as long as `duration` (5 s without it) and as high as `resolution` (about 640x360 without it), from
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
        aspectRatio: generation.params.aspectRatio ?? DEFAULT_ASPECT_RATIO,
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
    return { kind: 'done', result: { video, thumbnail: clip.thumbnail, thumbnailType: 'image/jpeg', width: clip.width, height: clip.height } };
  }
}
