import { writeFile } from 'node:fs/promises';
import { Injectable, Logger } from '@nestjs/common';
import type { StepOutcome } from '../../../common/tasks/task-kind.js';
import { AppConfig } from '../../../infra/config/app-config.js';
import { OutboundError, SafeFetchService } from '../../../infra/outbound/safe-fetch.service.js';
import { MediaFile } from '../../../infra/storage/storage.js';
import { SamplesService } from '../../samples/samples.service.js';
import { checkedFacts } from '../audio-check.js';
import type { AudioTask } from '../audio-task.js';
import type { AudioContext, AudioFacts, AudioProvider } from './audio-provider.js';
import { StepScope } from '../../../infra/process/step-scope.js';

/**
 * Works offline (for URLs it may reach): fetches the file within AUDIO_MAX_BYTES into a work file (never
 * whole in memory), checks it (checkAudio: its format from its bytes, decoded with that format pinned,
 * within AUDIO_MAX_DURATION_S, its header agreeing with what decodes), and records format, the duration
 * that decodes, size and SHA-256; the file is the clip that is kept.
 */
@Injectable()
export class SandboxAudioProvider implements AudioProvider {
  private readonly logger = new Logger(SandboxAudioProvider.name);

  constructor(
    private readonly fetcher: SafeFetchService,
    private readonly config: AppConfig,
    private readonly samples: SamplesService,
  ) {}

  async step(upload: AudioTask, ctx: AudioContext): Promise<StepOutcome<AudioFacts>> {
    const sample = this.samples.resolve(upload.params.url, upload.baseUrl);
    const clip = new MediaFile(ctx.file('clip', 'audio'));
    let size: number;
    try {
      if (sample) await writeFile(clip.path, sample);
      size = sample?.length ?? (await this.fetcher.fetchToFile('caller', upload.params.url, this.config.audioMaxBytes, clip.path));
    } catch (err) {
      if (err instanceof OutboundError) {
        return { kind: 'failed', reason: err.kind === 'too_large' ? `the file is larger than AUDIO_MAX_BYTES (${this.config.audioMaxBytes} bytes)` : `could not fetch url: ${err.message}` };
      }
      throw err;
    }
    if (this.config.sandboxDelayMs > 0) await StepScope.delay(this.config.sandboxDelayMs); // ends with the step's time limit
    const facts = await checkedFacts(clip, size, this.config.kinds.audio.options.maxDurationS);
    if (!facts.ok) {
      this.logger.warn({ msg: 'an uploaded file was refused', upload_id: upload.id, reason: facts.reason, ...(facts.detail ? { ffmpeg: facts.detail } : {}) });
      return { kind: 'failed', reason: `the file at url ${facts.reason}` };
    }
    return { kind: 'done', result: facts.facts };
  }
}
