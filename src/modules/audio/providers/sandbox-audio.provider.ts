import { createHash } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import { Injectable } from '@nestjs/common';
import { type IFormat, parseBuffer } from 'music-metadata';
import type { StepOutcome } from '../../../common/tasks/task-runner.js';
import { AppConfig } from '../../../infra/config/app-config.js';
import { OutboundError, SafeFetchService } from '../../../infra/outbound/safe-fetch.service.js';
import { SamplesService } from '../../samples/samples.service.js';
import type { AudioUploadRow } from '../audio.repository.js';
import type { AudioFacts, AudioProvider } from './audio-provider.js';

/** A short name for the file's format: mp3, wav, flac, ogg, opus, m4a, aiff, webm… */
/** The Content-Type a kept clip is served with, by format name. */
const CONTENT_TYPES: Record<string, string> = { mp3: 'audio/mpeg', wav: 'audio/wav', ogg: 'audio/ogg', opus: 'audio/ogg', m4a: 'audio/mp4', webm: 'audio/webm', flac: 'audio/flac', aac: 'audio/aac' };

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
 * Works offline (for URLs it may reach): fetches the file within AUDIO_MAX_BYTES, proves it is audio
 * from its content (music-metadata), and records format, duration, size and SHA-256.
 */
@Injectable()
export class SandboxAudioProvider implements AudioProvider {
  constructor(
    private readonly fetcher: SafeFetchService,
    private readonly config: AppConfig,
    private readonly samples: SamplesService,
  ) {}

  async step(upload: AudioUploadRow): Promise<StepOutcome<AudioFacts>> {
    let bytes = this.samples.resolve(upload.url, upload.baseUrl);
    try {
      bytes ??= (await this.fetcher.fetchBytes(upload.url, this.config.audioMaxBytes)).body;
    } catch (err) {
      if (err instanceof OutboundError) {
        return { kind: 'failed', reason: err.kind === 'too_large' ? `the file is larger than AUDIO_MAX_BYTES (${this.config.audioMaxBytes} bytes)` : `could not fetch url: ${err.message}` };
      }
      throw err;
    }
    if (this.config.sandboxDelayMs > 0) await sleep(this.config.sandboxDelayMs);
    let format: IFormat;
    try {
      ({ format } = await parseBuffer(bytes, undefined, { duration: true, skipCovers: true }));
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
        sizeBytes: bytes.length,
        sha256: createHash('sha256').update(bytes).digest('hex'),
        clip: { bytes, contentType: CONTENT_TYPES[formatName(format)] ?? 'application/octet-stream' },
      },
    };
  }
}
