import { randomUUID } from 'node:crypto';
import { Injectable } from '@nestjs/common';
import { isUUID } from 'class-validator';
import type { Principal } from '../../common/auth/credential.js';
import { AppError } from '../../common/errors/app-error.js';
import type { Prisma } from '../../generated/prisma/client.js';
import { AppConfig } from '../../infra/config/app-config.js';
import { type CallbackSubject, CallbacksService } from '../callbacks/callbacks.service.js';
import type { CallbackListDto } from '../callbacks/dto/callback.dto.js';
import { QueueService } from '../../infra/queue/queue.service.js';
import type { MediaRow } from '../media/media.repository.js';
import { LimitsService } from '../limits/limits.service.js';
import { MediaService } from '../media/media.service.js';
import { type CreateGenerationDto, DEFAULT_ASPECT_RATIO, DEFAULT_VIDEO_MODEL, type KeyframeDto } from './dto/create-generation.dto.js';
import type { ConceptRefDto, GenerationDetailDto, GenerationDto, GenerationListDto, KeyframeRefDto, KeyframesRefDto, MediaRefDto } from './dto/generation.dto.js';
import type { ListGenerationsQueryDto } from './dto/list-generations.dto.js';
import { durationSeconds } from './providers/clip-renderer.js';
import { type GenerationRecordRow, type GenerationRow, type NewGeneration, type NewKeyframe, VideoRepository } from './video.repository.js';

type Position = 'frame0' | 'frame1';

@Injectable()
export class VideoService {
  constructor(
    private readonly generations: VideoRepository,
    private readonly media: MediaService,
    private readonly config: AppConfig,
    private readonly queue: QueueService,
    private readonly callbacks: CallbacksService,
    private readonly limits: LimitsService,
  ) {}

  async createGeneration(principal: Principal, dto: CreateGenerationDto, requestBase?: string): Promise<GenerationDto> {
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
    const createdAt = new Date();
    const price = this.limits.price('video', { videoSeconds: durationSeconds(dto.duration ?? null) });
    const [id, jobId] = [randomUUID(), randomUUID()];
    const generation: NewGeneration = {
      id,
      jobId,
      owner: principal.owner,
      ...price,
      prompt: dto.prompt,
      aspectRatio: dto.aspect_ratio ?? DEFAULT_ASPECT_RATIO,
      loop: dto.loop ?? false,
      enhance: true,
      model: dto.model ?? DEFAULT_VIDEO_MODEL,
      resolution: dto.resolution ?? null,
      duration: dto.duration ?? null,
      concepts: dto.concepts?.length ? dto.concepts.map((c) => ({ key: c.key })) : null,
      callbackUrl: dto.callback_url ?? null,
      baseUrl: requestBase ?? null,
      createdAt,
      deadlineAt: new Date(createdAt.getTime() + this.config.taskTimeoutS.video * 1000),
    };
    const row = await this.limits.admit(principal.owner, 'video', price, (admission) =>
      this.generations.createGeneration(generation, keyframes, admission, QueueService.jobSql('video.run', jobId, { generationId: id })),
    );
    this.queue.jobsAdded('video.run');
    return toGenerationDto(row);
  }

  async getGeneration(principal: Principal, id: string): Promise<GenerationDetailDto> {
    const row = isUUID(id) ? await this.generations.findForOwner(principal.owner, id) : null;
    if (!row) throw new AppError('NOT_FOUND', `No generation ${id} among yours`);
    return (await this.withMedia([row]))[0];
  }

  async listGenerations(principal: Principal, query: ListGenerationsQueryDto): Promise<GenerationListDto> {
    const { rows, hasMore } = await this.generations.listForOwner(principal.owner, query.limit, query.offset);
    return { generations: await this.withMedia(rows), count: rows.length, has_more: hasMore, limit: query.limit, offset: query.offset };
  }

  /** Removes the generation and its media; one that has not finished gives back its slot and credits. */
  async deleteGeneration(principal: Principal, id: string): Promise<void> {
    if (!isUUID(id) || !(await this.generations.deleteForOwner(principal.owner, id, this.limits.onStatusChange('video')))) {
      throw new AppError('NOT_FOUND', `No generation ${id} among yours`);
    }
    await this.media.deleteForTasks([id]);
  }

  /** The generations' notifications: the record GET gives, fixed at the state change. */
  async callbackSubjects(tx: Prisma.TransactionClient, ids: string[]): Promise<CallbackSubject[]> {
    const rows = await this.generations.findWithCallback(ids, tx);
    const details = await this.withMedia(rows, tx);
    return rows.map((row, i) => ({ taskId: row.id, owner: row.owner, url: row.callbackUrl!, body: () => details[i] }));
  }

  /** The notifications sent for one of the caller's generations, with every attempt. */
  async listCallbacks(principal: Principal, id: string): Promise<CallbackListDto> {
    const row = isUUID(id) ? await this.generations.findForOwner(principal.owner, id) : null;
    if (!row) throw new AppError('NOT_FOUND', `No generation ${id} among yours`);
    return { deliveries: await this.callbacks.listForTask(row.id) };
  }

  private async withMedia(rows: GenerationRow[], tx?: Prisma.TransactionClient): Promise<GenerationDetailDto[]> {
    const media = await this.media.listForTasks(rows.filter((r) => r.state === 'completed').map((r) => r.id), tx);
    return rows.map((row) => {
      const base = this.media.linkBase(row.baseUrl);
      return toGenerationDetailDto(row, media.filter((m) => m.taskId === row.id), (m) => this.media.signedUrl(m, base));
    });
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

/** The keyframes as they were given (Luma echoes them in `request`). */
function keyframesAsGiven(row: GenerationRecordRow): KeyframesRefDto | undefined {
  if (row.keyframes.length === 0) return undefined;
  const ref = (k: GenerationRow['keyframes'][number]): KeyframeRefDto => (k.kind === 'image' ? { type: 'image', url: k.url! } : { type: 'generation', id: k.sourceGenerationId! });
  return Object.fromEntries(row.keyframes.map((k) => [k.position, ref(k)]));
}

/** As Luma, what a generation does not have is left out: failure_reason unless it failed, assets unless it completed. */
function toGenerationDetailDto(row: GenerationRow, media: MediaRow[], urlOf: (m: MediaRow) => string): GenerationDetailDto {
  const video = media.find((m) => m.role === 'video');
  const image = media.find((m) => m.role === 'thumbnail');
  return {
    ...toGenerationDto(row),
    ...(row.state === 'failed' && row.failureReason ? { failure_reason: row.failureReason } : {}),
    ...(row.state === 'completed' && video ? { assets: { video: urlOf(video), ...(image ? { image: urlOf(image) } : {}) } } : {}),
    media_expired: row.mediaExpiredAt !== null,
  };
}

/** The generation record: the spec's fields, and Luma's generation_type, model and request parameters. */
export function toGenerationDto(row: GenerationRecordRow): GenerationDto {
  const start = row.keyframes.find((k) => k.position === 'frame0');
  const end = row.keyframes.find((k) => k.position === 'frame1');
  const withKeyframes = row.keyframes.length > 0;
  const keyframes = keyframesAsGiven(row);
  return {
    id: row.id,
    generation_type: 'video',
    state: row.state,
    model: row.model,
    created_at: row.createdAt.toISOString(),
    request: {
      prompt: row.prompt,
      aspect_ratio: row.aspectRatio,
      enhance: row.enhance,
      request_type: withKeyframes ? 'image_to_video' : 'text_to_video',
      generation_type: 'video',
      model: row.model,
      loop: row.loop,
      ...(row.resolution ? { resolution: row.resolution } : {}),
      ...(row.duration ? { duration: row.duration } : {}),
      ...(keyframes ? { keyframes } : {}),
      ...(row.concepts ? { concepts: row.concepts as unknown as ConceptRefDto[] } : {}),
      ...(row.callbackUrl ? { callback_url: row.callbackUrl } : {}),
    },
    media_request: { end: mediaRef(end), loop: row.loop, prompt_type: withKeyframes ? 'keyframe' : 'text', start: mediaRef(start), text: row.prompt },
  };
}
