import { randomUUID } from 'node:crypto';
import { Injectable } from '@nestjs/common';
import type { Principal } from '../../common/auth/credential.js';
import { AppError } from '../../common/errors/app-error.js';
import { TaskEngine } from '../../common/tasks/task-engine.js';
import { TaskRepository } from '../../common/tasks/task.repository.js';
import { CallbacksService } from '../../modules/callbacks/callbacks.service.js';
import type { CallbackListDto } from '../../modules/callbacks/dto/callback.dto.js';
import { MediaService } from '../../modules/media/media.service.js';
import { CallerUrls } from '../../modules/samples/caller-urls.service.js';
import { type CreateGenerationDto, type KeyframeDto } from './dto/create-generation.dto.js';
import type { GenerationDetailDto, GenerationDto, GenerationListDto } from './dto/generation.dto.js';
import type { ListGenerationsQueryDto } from './dto/list-generations.dto.js';
import { VideoKind } from '../../modules/video/video.kind.js';
import { doorFieldNames, VideoModels } from '../../modules/video/video-models.js';
import { LumaVideoRecords, toGenerationDto } from './luma-video.records.js';
import { LUMA_DOOR } from './luma.door.js';
import { type KeyframePositionName, type StoredVideoFrame, type VideoParams, type VideoTask, type VideoTaskResult, videoRequestOf } from '../../modules/video/video-task.js';

const KIND = VideoKind.definition.name;

/** The Luma door's names of the normalized fields, for its 400s. */
const LUMA_FIELDS = doorFieldNames({ firstFrame: 'keyframes.frame0', lastFrame: 'keyframes.frame1', continues: 'keyframes (a generation)' });

@Injectable()
export class LumaVideoService {
  constructor(
    private readonly engine: TaskEngine,
    private readonly tasks: TaskRepository,
    private readonly kind: VideoKind,
    private readonly records: LumaVideoRecords,
    private readonly media: MediaService,
    private readonly callbacks: CallbacksService,
    private readonly models: VideoModels,
    private readonly callerUrls: CallerUrls,
  ) {}

  async createGeneration(principal: Principal, dto: CreateGenerationDto, requestBase?: string): Promise<GenerationDto> {
    const frames = (['frame0', 'frame1'] as const)
      .map((position) => [position, dto.keyframes?.[position]] as const)
      .filter((f): f is readonly [KeyframePositionName, KeyframeDto] => f[1] != null); // null, like absent, means no keyframe
    for (const [position, frame] of frames) if (frame.type === 'image') this.callerUrls.check(`keyframes.${position}.url`, frame.url, requestBase);
    this.callerUrls.check('callback_url', dto.callback_url, requestBase);
    await this.assertOwnGenerations(principal.owner, frames);
    const stored = (frame: KeyframeDto): StoredVideoFrame => (frame.type === 'image' ? { type: 'image', id: randomUUID(), url: frame.url! } : { type: 'generation', generationId: frame.id! });
    const [first, last] = (['frame0', 'frame1'] as const).map((position) => frames.find(([p]) => p === position)?.[1]);
    const params: VideoParams = {
      prompt: dto.prompt,
      loop: dto.loop ?? false,
      ...(dto.aspect_ratio !== undefined ? { aspectRatio: dto.aspect_ratio } : {}),
      ...(dto.resolution ? { resolution: dto.resolution } : {}),
      ...(dto.duration ? { durationS: Number.parseInt(dto.duration, 10) } : {}),
      ...(first ? { firstFrame: stored(first) } : {}),
      ...(last ? { lastFrame: stored(last) } : {}),
      ...(dto.model !== undefined ? { model: dto.model } : {}),
      ...(dto.concepts?.length ? { concepts: dto.concepts.map((c) => c.key) } : {}),
      ...(dto.fit ? { fit: dto.fit } : {}),
      door: LUMA_DOOR,
    };
    const made = await this.models.check(videoRequestOf(params), LUMA_FIELDS);
    return toGenerationDto(await this.engine.submit(this.kind, { owner: principal.owner, params: { ...params, ...made }, callbackUrl: dto.callback_url, baseUrl: requestBase }));
  }

  async getGeneration(principal: Principal, id: string): Promise<GenerationDetailDto> {
    return (await this.records.records([await this.findOwn(principal, id)]))[0];
  }

  /** A page of the caller's generations, newest first; one more is read to know whether more follow (no count of all). */
  async listGenerations(principal: Principal, query: ListGenerationsQueryDto): Promise<GenerationListDto> {
    const rows = await this.tasks.listForOwner<VideoParams, VideoTaskResult>(KIND, principal.owner, { skip: query.offset, take: query.limit + 1 });
    const page = rows.slice(0, query.limit);
    return { generations: await this.records.records(page), count: page.length, has_more: rows.length > query.limit, limit: query.limit, offset: query.offset };
  }

  /** Removes the generation and its media; one that has not finished gives back its slot and credits. */
  async deleteGeneration(principal: Principal, id: string): Promise<void> {
    if (!(await this.engine.deleteForOwner(this.kind, principal.owner, id))) throw notFound(id);
    await this.media.deleteForTasks([id]);
  }

  /** The notifications sent for one of the caller's generations, with every attempt. */
  async listCallbacks(principal: Principal, id: string): Promise<CallbackListDto> {
    return { deliveries: await this.callbacks.listForTask((await this.findOwn(principal, id)).id) };
  }

  private async findOwn(principal: Principal, id: string): Promise<VideoTask> {
    const task = await this.tasks.findForOwner<VideoParams, VideoTaskResult>(KIND, principal.owner, id);
    if (!task) throw notFound(id);
    return task;
  }

  /** A "generation" keyframe must name one of the caller's own generations. */
  private async assertOwnGenerations(owner: string, frames: (readonly [KeyframePositionName, KeyframeDto])[]): Promise<void> {
    const refs = frames.filter(([, f]) => f.type === 'generation');
    if (refs.length === 0) return;
    const owned = await this.tasks.findOwnedIds(KIND, owner, refs.map(([, f]) => f.id!));
    const missing = refs.filter(([, f]) => !owned.has(f.id!));
    if (missing.length > 0) {
      throw new AppError('INVALID_PARAMETER', missing.map(([p, f]) => `keyframes.${p}.id must name one of your generations; there is no generation ${f.id}`).join('; '));
    }
  }
}

function notFound(id: string): AppError {
  return new AppError('NOT_FOUND', `No generation ${id} among yours`);
}
