import { Injectable } from '@nestjs/common';
import type { VideoGeneration, VideoKeyframe } from '../../generated/prisma/client.js';
import { PrismaService } from '../../infra/prisma/prisma.service.js';

export type GenerationRow = VideoGeneration & { keyframes: VideoKeyframe[] };
export type NewKeyframe = Pick<VideoKeyframe, 'id' | 'position' | 'kind' | 'url' | 'sourceGenerationId'>;

@Injectable()
export class VideoRepository {
  constructor(private readonly prisma: PrismaService) {}

  /** The generation and its keyframe media, in one transaction. */
  createGeneration(
    generation: Pick<VideoGeneration, 'id' | 'owner' | 'prompt' | 'aspectRatio' | 'loop' | 'enhance' | 'callbackUrl' | 'createdAt'>,
    keyframes: NewKeyframe[],
  ): Promise<GenerationRow> {
    return this.prisma.videoGeneration.create({
      data: { ...generation, updatedAt: generation.createdAt, keyframes: { create: keyframes } },
      include: { keyframes: true },
    });
  }

  /** Which of these ids are generations of this owner. */
  async findOwnedIds(owner: string, ids: string[]): Promise<Set<string>> {
    const rows = await this.prisma.videoGeneration.findMany({ where: { owner, id: { in: ids } }, select: { id: true } });
    return new Set(rows.map((r) => r.id));
  }
}
