import { Injectable } from '@nestjs/common';
import { AppError } from '../../common/errors/app-error.js';
import { AppConfig } from '../../infra/config/app-config.js';
import { decodedImageHeader, hasAlphaChannel, ImageRejected } from '../../infra/images/image-bounds.js';
import type { DetailRows } from '../../infra/prisma/statement.js';
import { type NewMedia, snakeMedia } from '../media/media.repository.js';
import { MediaService } from '../media/media.service.js';
import type { ImageInputParams } from './image-task.js';

/** An input image sent with a request: at most this many bytes (Kling's 10 MB; OpenAI's 50 MB is more than any bounded image needs). */
export const IMAGE_INPUT_MAX_BYTES = 20 * 1024 * 1024;

/**
 * Input images sent with a request (an edit's images and mask, reference images, the Kling door's Base64
 * image): each checked (PNG, JPEG or WebP by its magic numbers, within IMAGE_MAX_SIDE and IMAGE_MAX_PIXELS
 * by its header, then decoded down to a few pixels: a file cut off or corrupt is the caller's 400, not a task
 * that fails once accepted), stored as the task's media (`input` by index, `mask`), its row written
 * with the task; discarded when the task is not accepted.
 */
@Injectable()
export class ImageInputs {
  constructor(
    private readonly media: MediaService,
    private readonly config: AppConfig,
  ) {}

  /** `field` names it in the caller's 400s. */
  async store(owner: string, taskId: string, role: 'input' | 'mask', index: number, bytes: Buffer, field: string): Promise<{ media: NewMedia; facts: ImageInputParams }> {
    if (bytes.length > IMAGE_INPUT_MAX_BYTES) throw new AppError('PAYLOAD_TOO_LARGE', `${field} must be at most ${IMAGE_INPUT_MAX_BYTES / (1024 * 1024)} MB`);
    let header: { format: string; width: number; height: number };
    try {
      header = await decodedImageHeader(bytes, this.config.images);
    } catch (err) {
      if (err instanceof ImageRejected) throw new AppError('INVALID_PARAMETER', `${field} ${err.message}`);
      throw err;
    }
    const media = await this.media.putObject({ owner, taskId, role, index, body: bytes, contentType: `image/${header.format}`, width: header.width, height: header.height });
    return { media, facts: { format: header.format, width: header.width, height: header.height } };
  }

  /** Whether an image stored here (its bytes) has an alpha channel: a mask's transparent pixels say where to paint. */
  hasAlpha(bytes: Buffer): Promise<boolean> {
    return hasAlphaChannel(bytes, this.config.images);
  }

  rows(stored: NewMedia[]): DetailRows[] {
    return stored.length ? [{ table: 'media', rows: stored.map(snakeMedia) }] : [];
  }

  discard(stored: NewMedia[]): Promise<void> {
    return stored.length ? this.media.discardObjects(stored) : Promise.resolve();
  }
}
