import { createReadStream } from 'node:fs';
import { stat } from 'node:fs/promises';
import { pipeline } from 'node:stream/promises';
import { Injectable, Logger } from '@nestjs/common';
import type { Response } from 'express';
import type { Principal } from '../../common/auth/credential.js';
import { AppError } from '../../common/errors/app-error.js';
import { NoAudio, pinAudio } from '../../infra/ffmpeg/audio-decode.js';
import { exportPcm16, PCM16_EXPORTS, type Pcm16Export } from '../../infra/ffmpeg/audio-export.js';
import { FfmpegFailed, FfmpegTimedOut } from '../../infra/ffmpeg/ffmpeg.js';
import { MediaRefused } from '../../infra/ffmpeg/media-format.js';
import { CpuSlots } from '../../infra/process/cpu-slots.js';
import { StepScope } from '../../infra/process/step-scope.js';
import { WorkDirService } from '../../infra/workdir/work-dir.service.js';
import { type ClipDescription, CLIP_AUDIO_ROLE } from '../../modules/clips/clip-media.js';
import { assertComplete } from '../../modules/clips/clip-rules.js';
import { ClipsRepository, type OwnedClip } from '../../modules/clips/clips.repository.js';
import type { MediaRow } from '../../modules/media/media.repository.js';
import { MediaService } from '../../modules/media/media.service.js';

/** When a caller is told to try again after a conversion that ran out of time (the machine is busy). */
const RETRY_AFTER_S = 30;

/**
 * A stored clip (a take, an upload, a joined song) as 16-bit WAV or FLAC at its own rate and channels, for
 * its owner: the stored file is copied to the work directory, converted there by ffmpeg in one of the CPU
 * slots (its format pinned from its bytes), and the result streamed with its length, then removed. The
 * conversion goes to a file, not a pipe, so the WAV header has its sizes and FLAC its sample count and MD5,
 * and a file that does not convert is a refusal in the envelope, never a 200 cut short. A client that goes
 * away stops the conversion.
 */
@Injectable()
export class ClipAudioService {
  private readonly logger = new Logger('ClipAudio');

  constructor(
    private readonly clips: ClipsRepository,
    private readonly media: MediaService,
    private readonly cpu: CpuSlots,
    private readonly workDir: WorkDirService,
  ) {}

  async send(principal: Principal, clipId: string, format: Pcm16Export, res: Response, ifNoneMatch?: string): Promise<void> {
    const [clip] = await this.clips.findForOwner(principal.owner, [clipId]);
    if (!clip) throw new AppError('NOT_FOUND', `clip_id: there is no clip ${clipId} among yours`);
    assertComplete(clip, 'clip_id');
    if (!clip.audioStored) {
      throw new AppError('INVALID_PARAMETER', `clip_id: the audio of clip ${clip.id} is not stored in this gateway (an upload relayed to an upstream that the gateway could not copy), so it cannot be converted`);
    }
    const row = await this.media.findForTask(clip.taskId, CLIP_AUDIO_ROLE, clip.idx);
    if (!row) throw expired(clip);
    const etag = etagOf(row, format);
    const validators = { etag, 'cache-control': 'private, no-cache' };
    if (ifNoneMatch && ifNoneMatch.split(',').some((tag) => tag.trim() === etag || tag.trim() === '*')) {
      res.set(validators).status(304).end();
      return;
    }
    const scope = new StepScope();
    const left = () => scope.close(new Error('the client went away'));
    res.once('close', left);
    try {
      await this.workDir.inScope(async (files) => {
        const source = files.file('clip-source', 'audio');
        const out = files.file('clip-export', format);
        await scope.run(async () => {
          if ((await this.media.copyToFile(row, source)) === null) throw expired(clip);
          await this.cpu.run(async () => {
            if (scope.signal.aborted) return; // gone while waiting for a slot
            await this.convert(clip, source, out, format);
          });
        });
        if (scope.signal.aborted) return;
        const { size } = await stat(out);
        res.attachment(`${fileStem(clip)}.${format}`);
        res.set({ ...validators, 'content-type': PCM16_EXPORTS[format].contentType, 'content-length': String(size) });
        res.status(200);
        if (res.req.method === 'HEAD') {
          res.end();
          return;
        }
        await pipeline(createReadStream(out), res).catch(() => res.destroy());
      });
    } catch (err) {
      if (scope.signal.aborted && !(err instanceof AppError)) return; // the client went away: no one to answer
      throw err;
    } finally {
      res.off('close', left);
    }
  }

  private async convert(clip: OwnedClip, source: string, out: string, format: Pcm16Export): Promise<void> {
    try {
      await exportPcm16(source, await pinAudio(source), out, format, clip.duration);
    } catch (err) {
      if (err instanceof FfmpegTimedOut) {
        throw new AppError('UNAVAILABLE', `clip_id: converting clip ${clip.id} to ${format} took longer than ${Math.round(err.limitMs / 1000)} s; the service is busy, try again`, RETRY_AFTER_S);
      }
      if (err instanceof MediaRefused || err instanceof FfmpegFailed || err instanceof NoAudio) {
        this.logger.warn({ msg: 'a stored clip could not be converted', clip_id: clip.id, format, reason: err.message, ffmpeg: err instanceof FfmpegFailed ? err.detail : undefined });
        const reason = err instanceof MediaRefused ? err.message : 'does not decode';
        throw new AppError('CONFLICT', `clip_id: the stored audio of clip ${clip.id} ${reason}, so it cannot be converted to ${format}`);
      }
      throw err;
    }
  }
}

function expired(clip: OwnedClip): AppError {
  return new AppError('GONE', `clip_id: clip ${clip.id} has expired: its audio was removed after RESULT_RETENTION_DAYS`);
}

/** Weak (the same samples, though another ffmpeg may write other bytes): the stored file's identity and the format. */
function etagOf(row: MediaRow, format: Pcm16Export): string {
  return `W/"${row.id}-${row.sizeBytes.toString(36)}-${row.createdAt.getTime().toString(36)}-${format}"`;
}

const LONE_SURROGATE = /[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/g;

/** The downloaded file's name: the clip's title when it has one (no path separators or control characters, at most 120 characters), else its id. */
export function fileStem(clip: Pick<OwnedClip, 'id' | 'params'>): string {
  const title = (clip.params as ClipDescription).title;
  if (typeof title !== 'string') return clip.id;
  // code points, not UTF-16 units: a cut must not leave half a surrogate pair (no header could carry it)
  const clean = Array.from(title.replace(LONE_SURROGATE, '\ufffd').replace(/[\u0000-\u001f\u007f/\\]+/g, ' ').replace(/\s+/g, ' ').trim()).slice(0, 120).join('').trim();
  return clean || clip.id;
}
