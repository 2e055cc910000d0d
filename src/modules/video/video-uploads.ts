import { Injectable } from '@nestjs/common';
import { AppError } from '../../common/errors/app-error.js';
import { AppConfig } from '../../infra/config/app-config.js';
import { decodedImageHeader, ImageRejected } from '../../infra/images/image-bounds.js';
import type { DetailRows } from '../../infra/prisma/statement.js';
import { type NewMedia, snakeMedia } from '../media/media.repository.js';
import { MediaService } from '../media/media.service.js';
import type { InputImageRole } from './video-task.js';

export const UPLOAD_MAX_BYTES = 10 * 1024 * 1024;

/**
 * Keyframe images sent with a request (the OpenAI door's input_reference file, the Kling door's Base64
 * image and image_tail): each checked, stored as the generation's media of its position's role, and its row
 * written with the task; discarded when the task is not accepted.
 */
@Injectable()
export class VideoUploads {
  constructor(
    private readonly media: MediaService,
    private readonly config: AppConfig,
  ) {}

  /**
   * `field` names it in the caller's 400s: no bytes, not a PNG, JPEG or WebP file (read from its magic
   * numbers), over the image bounds (IMAGE_MAX_SIDE, IMAGE_MAX_PIXELS, read from its header), or pixel data that
   * does not decode (decodedImageHeader).
   */
  async store(owner: string, taskId: string, position: InputImageRole, bytes: Buffer, field: string): Promise<NewMedia> {
    if (bytes.length > UPLOAD_MAX_BYTES) throw new AppError('PAYLOAD_TOO_LARGE', `${field} must be at most ${UPLOAD_MAX_BYTES} bytes`);
    let meta: { format: string; width: number; height: number };
    try {
      meta = await decodedImageHeader(bytes, this.config.images);
    } catch (err) {
      if (err instanceof ImageRejected) throw new AppError('INVALID_PARAMETER', `${field} ${err.message}`);
      throw err;
    }
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
