import { randomUUID } from 'node:crypto';
import { Injectable } from '@nestjs/common';
import type { Principal } from '../../common/auth/credential.js';
import { AppError } from '../../common/errors/app-error.js';
import { type CreateGenerationDto, DEFAULT_ASPECT_RATIO, type KeyframeDto } from './dto/create-generation.dto.js';
import type { GenerationDto, MediaRefDto } from './dto/generation.dto.js';
import { type GenerationRow, type NewKeyframe, VideoRepository } from './video.repository.js';

type Position = 'frame0' | 'frame1';

@Injectable()
export class VideoService {
  constructor(private readonly generations: VideoRepository) {}

  async createGeneration(principal: Principal, dto: CreateGenerationDto): Promise<GenerationDto> {
    const frames = (['frame0', 'frame1'] as const)
      .map((position) => [position, dto.keyframes?.[position]] as const)
      .filter((f): f is readonly [Position, KeyframeDto] => f[1] != null); // null, like absent, means no keyframe
    await this.assertOwnGenerations(principal.owner, frames);
    const keyframes: NewKeyframe[] = frames.map(([position, frame]) => ({
      id: randomUUID(),
      position,
      kind: frame.type,
      url: frame.type === 'image' ? frame.url! : null,
      sourceGenerationId: frame.type === 'generation' ? frame.id! : null,
    }));
    const row = await this.generations.createGeneration(
      {
        id: randomUUID(),
        owner: principal.owner,
        prompt: dto.prompt,
        aspectRatio: dto.aspect_ratio ?? DEFAULT_ASPECT_RATIO,
        loop: dto.loop ?? false,
        enhance: true,
        callbackUrl: dto.callback_url ?? null,
        createdAt: new Date(),
      },
      keyframes,
    );
    return toGenerationDto(row);
  }

  /** A "generation" keyframe must name one of the caller's own generations. */
  private async assertOwnGenerations(owner: string, frames: (readonly [Position, KeyframeDto])[]): Promise<void> {
    const refs = frames.filter(([, f]) => f.type === 'generation');
    if (refs.length === 0) return;
    const owned = await this.generations.findOwnedIds(owner, refs.map(([, f]) => f.id!));
    const missing = refs.filter(([, f]) => !owned.has(f.id!));
    if (missing.length > 0) {
      throw new AppError('INVALID_PARAMETER', missing.map(([p, f]) => `keyframes.${p}.id must name one of your generations; there is no generation ${f.id}`).join('; '));
    }
  }
}

function mediaRef(frame: GenerationRow['keyframes'][number] | undefined): MediaRefDto | null {
  if (!frame) return null;
  return frame.kind === 'image'
    ? { id: frame.id, media_type: null, thumbnail: null, type: 'upload' }
    : { id: frame.sourceGenerationId!, media_type: null, thumbnail: null, type: 'generation' };
}

/** The generation record exactly as the spec shows it. */
export function toGenerationDto(row: GenerationRow): GenerationDto {
  const start = row.keyframes.find((k) => k.position === 'frame0');
  const end = row.keyframes.find((k) => k.position === 'frame1');
  const withKeyframes = row.keyframes.length > 0;
  return {
    id: row.id,
    state: row.state,
    created_at: row.createdAt.toISOString(),
    request: { prompt: row.prompt, aspect_ratio: row.aspectRatio, enhance: row.enhance, request_type: withKeyframes ? 'image_to_video' : 'text_to_video' },
    media_request: { end: mediaRef(end), loop: row.loop, prompt_type: withKeyframes ? 'keyframe' : 'text', start: mediaRef(start), text: row.prompt },
  };
}
