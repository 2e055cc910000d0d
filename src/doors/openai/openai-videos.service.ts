import { randomUUID } from 'node:crypto';
import { Injectable } from '@nestjs/common';
import type { Principal } from '../../common/auth/credential.js';
import { AppError } from '../../common/errors/app-error.js';
import { TaskEngine } from '../../common/tasks/task-engine.js';
import { TaskRepository } from '../../common/tasks/task.repository.js';
import type { MediaAnswer, MediaRequest } from '../../modules/media/media-delivery.js';
import { MediaService } from '../../modules/media/media.service.js';
import { CallerUrls } from '../../modules/samples/caller-urls.service.js';
import type { CreateOpenAiVideoDto, ListOpenAiVideosQueryDto, OpenAiVideoDeletedDto, OpenAiVideoDto, OpenAiVideoListDto } from './dto/openai-video.dto.js';
import { classOf, OpenAiVideoRecords } from './openai-video.records.js';
import { OPENAI_DOOR } from './openai.door.js';
import { VideoKind } from '../../modules/video/video.kind.js';
import { doorFieldNames, VideoModels } from '../../modules/video/video-models.js';
import { VideoUploads } from '../../modules/video/video-uploads.js';
import { RESOLUTION_SIDES } from '../../vendors/contracts/resolution.js';
import { referenceRole, type StoredVideoImage, type VideoParams, type VideoTask, type VideoTaskResult, videoRequestOf } from '../../modules/video/video-task.js';

const KIND = VideoKind.definition.name;
/** The door's defaults, as OpenAI's API has its own: 1280x720, and 5 s (the length the price counts without one). */
const DEFAULT_SIZE = '1280x720';

/** The OpenAI door's names of the normalized fields, for its 400s. */
const OPENAI_FIELDS = doorFieldNames({ aspectRatio: 'size', resolution: 'size', durationS: 'seconds', firstFrame: 'input_reference', lastFrame: 'input_reference', referenceImages: 'input_reference', continues: 'input_reference' });

/** A file part as multer hands it over (kept in memory: at most UPLOAD_MAX_BYTES). */
export interface UploadedPart {
  buffer: Buffer;
  mimetype: string;
  size: number;
}

/**
 * The OpenAI-style video door over the video kind: its requests become the generation's parameters (the same
 * document the Luma door writes, `door: "openai"`), and any generation of the owner reads as OpenAI's video
 * object, whichever door made it.
 */

/** The shorter sides a size may have (480, 540, 720, 768, 1080 or 2160). */
const SIDES_IN_WORDS = ((sides) => `${sides.slice(0, -1).join(', ')} or ${sides.at(-1)}`)(Object.values(RESOLUTION_SIDES));
@Injectable()
export class OpenAiVideosService {
  constructor(
    private readonly engine: TaskEngine,
    private readonly tasks: TaskRepository,
    private readonly kind: VideoKind,
    private readonly records: OpenAiVideoRecords,
    private readonly media: MediaService,
    private readonly models: VideoModels,
    private readonly uploads: VideoUploads,
    private readonly callerUrls: CallerUrls,
  ) {}

  async create(principal: Principal, dto: CreateOpenAiVideoDto, file: UploadedPart | undefined, base?: string): Promise<OpenAiVideoDto> {
    const size = classOf(dto.size ?? DEFAULT_SIZE);
    if (!size) throw new AppError('INVALID_PARAMETER', `size must be WxH whose shorter side is ${SIDES_IN_WORDS} px at a whole-number ratio, such as 1280x720 or 720x1280 (not ${dto.size})`);
    if (dto.input_reference?.file_id !== undefined) throw new AppError('INVALID_PARAMETER', 'input_reference.file_id: this gateway keeps no files; upload the image as input_reference, or give input_reference.image_url');
    if (file && dto.input_reference?.image_url) throw new AppError('INVALID_PARAMETER', 'input_reference: give a file or an image_url, not both');
    this.callerUrls.check('input_reference.image_url', dto.input_reference?.image_url, base);
    const id = randomUUID();
    // input_reference is the first frame (as OpenAI's service used it), or a reference image where the caller says so
    const asReference = dto.input_reference_role === 'reference_image';
    if (asReference && !file && !dto.input_reference?.image_url) throw new AppError('INVALID_PARAMETER', 'input_reference_role: reference_image needs an input_reference (a file, or image_url)');
    const upload = file ? await this.uploads.store(principal.owner, id, asReference ? referenceRole(0) : 'frame0', file.buffer, 'input_reference') : undefined;
    const image: StoredVideoImage | undefined = upload ? { type: 'image', id: upload.id, upload: true } : dto.input_reference?.image_url ? { type: 'image', id: randomUUID(), url: dto.input_reference.image_url } : undefined;
    const params: VideoParams = {
      prompt: dto.prompt,
      loop: false,
      aspectRatio: size.aspectRatio,
      resolution: size.resolution,
      ...(dto.seconds ? { durationS: Number.parseInt(dto.seconds, 10) } : {}),
      ...(image && !asReference ? { firstFrame: image } : {}),
      ...(image && asReference ? { referenceImages: [image] } : {}),
      ...(dto.model !== undefined ? { model: dto.model } : {}),
      ...(dto.fit ? { fit: dto.fit } : {}),
      door: OPENAI_DOOR,
    };
    const stored = upload ? [upload] : [];
    let task: VideoTask;
    try {
      const made = await this.models.check(videoRequestOf(params), OPENAI_FIELDS);
      task = await this.engine.submit(this.kind, { id, owner: principal.owner, params: { ...params, ...made }, baseUrl: base, details: this.uploads.rows(stored) });
    } catch (err) {
      await this.uploads.discard(stored);
      throw err;
    }
    return (await this.records.records([task]))[0];
  }

  async get(principal: Principal, id: string): Promise<OpenAiVideoDto> {
    return (await this.records.records([await this.findOwn(principal, id)]))[0];
  }

  /** A cursor page of the caller's generations (every door's), newest first unless `order=asc`. */
  async list(principal: Principal, query: ListOpenAiVideosQueryDto): Promise<OpenAiVideoListDto> {
    const rows = await this.tasks.listForOwnerAfter<VideoParams, VideoTaskResult>(KIND, principal.owner, { after: query.after, order: query.order, take: query.limit + 1 });
    if (!rows) throw new AppError('INVALID_PARAMETER', `after must be the id of one of your videos (not ${query.after})`);
    const data = await this.records.records(rows.slice(0, query.limit));
    return { object: 'list', data, first_id: data[0]?.id ?? null, last_id: data.at(-1)?.id ?? null, has_more: rows.length > query.limit };
  }

  async delete(principal: Principal, id: string): Promise<OpenAiVideoDeletedDto> {
    if (!(await this.engine.deleteForOwner(this.kind, principal.owner, id))) throw notFound(id);
    await this.media.deleteForTasks([id]);
    return { id, object: 'video.deleted', deleted: true };
  }

  /** The video (or its thumbnail) as the media routes serve a file: Range, ETag, a file name. */
  async content(principal: Principal, id: string, variant: 'video' | 'thumbnail', request: MediaRequest): Promise<MediaAnswer> {
    const task = await this.findOwn(principal, id);
    if (task.state !== 'succeeded') throw new AppError('CONFLICT', `video ${id} has no content: it is ${task.state === 'failed' ? 'failed' : 'not completed yet'}`);
    const row = await this.media.findForTask(task.id, variant);
    if (!row) throw new AppError('NOT_FOUND', task.mediaExpiredAt ? `video ${id}'s content was deleted after RESULT_RETENTION_DAYS` : `video ${id} has no ${variant}`);
    return this.media.deliver(row, 0, request);
  }

  private async findOwn(principal: Principal, id: string): Promise<VideoTask> {
    const task = await this.tasks.findForOwner<VideoParams, VideoTaskResult>(KIND, principal.owner, id);
    if (!task) throw notFound(id);
    return task;
  }
}

function notFound(id: string): AppError {
  return new AppError('NOT_FOUND', `No video ${id} among yours`);
}
