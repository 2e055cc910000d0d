import { Injectable } from '@nestjs/common';
import sharp from 'sharp';
import { AppError } from '../../common/errors/app-error.js';
import type { DetailRows } from '../../infra/prisma/statement.js';
import { type NewMedia, snakeMedia } from '../media/media.repository.js';
import { MediaService } from '../media/media.service.js';
import type { KeyframePositionName } from './video-task.js';

export const UPLOAD_MAX_BYTES = 10 * 1024 * 1024;
const UPLOAD_TYPES = new Set(['png', 'jpeg', 'webp']);

/**
 * Keyframe images sent with a request (the OpenAI door's input_reference file, the Kling door's Base64
 * image and image_tail): each checked, stored as the generation's media of its position's role, and its row
 * written with the task; discarded when the task is not accepted.
 */
@Injectable()
export class VideoUploads {
  constructor(private readonly media: MediaService) {}

  /** `field` names it in the caller's 400s. */
  async store(owner: string, taskId: string, position: KeyframePositionName, bytes: Buffer, field: string): Promise<NewMedia> {
    if (bytes.length > UPLOAD_MAX_BYTES) throw new AppError('PAYLOAD_TOO_LARGE', `${field} must be at most ${UPLOAD_MAX_BYTES} bytes`);
    const meta = await sharp(bytes).metadata().catch(() => null);
    if (!meta?.format || !UPLOAD_TYPES.has(meta.format) || !meta.width || !meta.height) throw new AppError('INVALID_PARAMETER', `${field} must be a PNG, JPEG or WebP image`);
    return this.media.putObject({ owner, taskId, role: position, index: 0, body: bytes, contentType: `image/${meta.format}`, width: meta.width, height: meta.height });
  }

  /** The media rows to write with the task. */
  rows(uploads: NewMedia[]): DetailRows[] {
    return uploads.length ? [{ table: 'media', rows: uploads.map(snakeMedia) }] : [];
  }

  discard(uploads: NewMedia[]): Promise<void> {
    return uploads.length ? this.media.discardObjects(uploads) : Promise.resolve();
  }
}
