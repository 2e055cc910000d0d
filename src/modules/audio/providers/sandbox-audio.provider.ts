import { createHash } from 'node:crypto';
import { createReadStream } from 'node:fs';
import { pipeline } from 'node:stream/promises';
import { setTimeout as sleep } from 'node:timers/promises';
import { Injectable } from '@nestjs/common';
import { type IFormat, parseBuffer, parseFile } from 'music-metadata';
import type { StepOutcome } from '../../../common/tasks/task-kind.js';
import { AppConfig } from '../../../infra/config/app-config.js';
import { OutboundError, SafeFetchService } from '../../../infra/outbound/safe-fetch.service.js';
import { MediaFile } from '../../../infra/storage/storage.js';
import { SamplesService } from '../../samples/samples.service.js';
import type { AudioTask } from '../audio-task.js';
import { type AudioContext, type AudioFacts, type AudioProvider, clipContentType } from './audio-provider.js';

/** A short name for the file's format: mp3, wav, flac, ogg, opus, m4a, aiff, webm… */
export function formatName(format: IFormat): string {
  const container = (format.container ?? '').toLowerCase();
  const codec = (format.codec ?? '').toLowerCase();
  if (codec.includes('layer 3') || container === 'mpeg') return 'mp3';
  if (container === 'wave') return 'wav';
  if (container === 'ogg') return codec.includes('opus') ? 'opus' : 'ogg';
  if (container.startsWith('m4a') || container.startsWith('mp4') || container.startsWith('isom')) return 'm4a';
  if (container.startsWith('webm') || container.startsWith('matroska')) return 'webm';
  return container.split('/')[0] || codec || 'audio';
}

/**
 * Works offline (for URLs it may reach): fetches the file within AUDIO_MAX_BYTES into a work file (never
 * whole in memory), proves it is audio from its content (music-metadata), and records format, duration,
 * size and SHA-256; the file is the clip that is kept.
 */
@Injectable()
export class SandboxAudioProvider implements AudioProvider {
  constructor(
    private readonly fetcher: SafeFetchService,
    private readonly config: AppConfig,
    private readonly samples: SamplesService,
  ) {}

  async step(upload: AudioTask, ctx: AudioContext): Promise<StepOutcome<AudioFacts>> {
    const sample = this.samples.resolve(upload.params.url, upload.baseUrl);
    const clip: Buffer | MediaFile = sample ?? new MediaFile(ctx.file('clip', 'audio'));
    let size = sample?.length ?? 0;
    try {
      if (clip instanceof MediaFile) size = await this.fetcher.fetchToFile('caller', upload.params.url, this.config.audioMaxBytes, clip.path);
    } catch (err) {
      if (err instanceof OutboundError) {
        return { kind: 'failed', reason: err.kind === 'too_large' ? `the file is larger than AUDIO_MAX_BYTES (${this.config.audioMaxBytes} bytes)` : `could not fetch url: ${err.message}` };
      }
      throw err;
    }
    if (this.config.sandboxDelayMs > 0) await sleep(this.config.sandboxDelayMs);
    let format: IFormat;
    try {
      const options = { duration: true, skipCovers: true };
      ({ format } = clip instanceof MediaFile ? await parseFile(clip.path, options) : await parseBuffer(clip, undefined, options));
    } catch (err) {
      return { kind: 'failed', reason: `the file at url is not audio: ${(err as Error).message}` };
    }
    if (!format.container || !format.duration || format.duration <= 0) {
      return { kind: 'failed', reason: 'the file at url is not audio: no audio stream with a duration was found in it' };
    }
    return {
      kind: 'done',
      result: {
        format: formatName(format),
        duration: Math.round(format.duration * 1000) / 1000,
        sizeBytes: size,
        sha256: await sha256Of(clip),
        clip: { body: clip, contentType: clipContentType(formatName(format)) },
      },
    };
  }
}

async function sha256Of(clip: Buffer | MediaFile): Promise<string> {
  const hash = createHash('sha256');
  if (clip instanceof MediaFile) await pipeline(createReadStream(clip.path), hash);
  else hash.update(clip);
  return hash.digest('hex');
}
