import { randomUUID } from 'node:crypto';
import { Injectable } from '@nestjs/common';
import type { Principal } from '../../common/auth/credential.js';
import { AppError } from '../../common/errors/app-error.js';
import { successEnvelope } from '../../common/http/envelope.js';
import { TaskEngine } from '../../common/tasks/task-engine.js';
import { TaskRepository } from '../../common/tasks/task.repository.js';
import { isBase64Text, isHttpUrl } from '../../common/validation/validators.js';
import type { NewMedia } from '../../modules/media/media.repository.js';
import { CallerUrls } from '../../modules/samples/caller-urls.service.js';
import { CAMERA_AXES, type CreateKlingImageToVideoDto, type CreateKlingMultiImageToVideoDto, type CreateKlingTextToVideoDto, type KlingVideoTaskEnvelopeDto, type KlingVideoTaskListEnvelopeDto } from './dto/kling-video.dto.js';
import type { ListExpandTasksQueryDto as KlingPageQuery } from './dto/kling-page-query.dto.js';
import { KlingVideoRecords } from './kling-video.records.js';
import { KLING_DOOR } from './kling.door.js';
import { VideoKind } from '../../modules/video/video.kind.js';
import { KlingVideoVendor } from '../../vendors/kling/kling-video.vendor.js';
import { doorFieldNames, VideoModels } from '../../modules/video/video-models.js';
import { VideoUploads } from '../../modules/video/video-uploads.js';
import { type InputImageRole, type KeyframePositionName, referenceRole, type StoredVideoImage, type VideoParams, type VideoTask, type VideoTaskResult, videoRequestOf } from '../../modules/video/video-task.js';

const KIND = VideoKind.definition.name;

/** The Kling door's names of the normalized fields, for its 400s. */
const KLING_FIELDS = doorFieldNames({ model: 'model_name', resolution: 'mode', firstFrame: 'image', lastFrame: 'image_tail', continues: 'image', audio: 'sound', referenceImages: 'image_list' });

export type KlingEndpoint = 'text2video' | 'image2video' | 'multi-image2video';

/**
 * Kling's video door (`/video-a/v1/videos/text2video`, `/image2video` and `/multi-image2video`) over the video kind: Kling's bodies
 * become the generation's parameters (`door: "kling"`: its callbacks are Kling's records), and any generation of
 * the owner reads as Kling's task record, by its id or its external_task_id.
 */
@Injectable()
export class KlingVideosService {
  constructor(
    private readonly engine: TaskEngine,
    private readonly tasks: TaskRepository,
    private readonly kind: VideoKind,
    private readonly records: KlingVideoRecords,
    private readonly models: VideoModels,
    private readonly uploads: VideoUploads,
    private readonly callerUrls: CallerUrls,
  ) {}

  async create(principal: Principal, requestId: string, endpoint: KlingEndpoint, dto: CreateKlingTextToVideoDto | CreateKlingImageToVideoDto | CreateKlingMultiImageToVideoDto, base?: string): Promise<KlingVideoTaskEnvelopeDto> {
    if (dto.watermark_info?.enabled) throw new AppError('INVALID_PARAMETER', 'watermark_info.enabled: no watermarked copy of a video is made here; leave it false');
    checkCameraControl(dto.camera_control);
    const images = endpoint === 'image2video' ? (dto as CreateKlingImageToVideoDto) : {};
    const references = endpoint === 'multi-image2video' ? (dto as CreateKlingMultiImageToVideoDto).image_list.map((item, i) => [`image_list[${i}].image`, item.image] as const) : [];
    if (endpoint === 'image2video' && !images.image && !images.image_tail) throw new AppError('INVALID_PARAMETER', 'image is required (or image_tail): an http(s) URL or Base64 of a JPEG or PNG');
    for (const field of ['image', 'image_tail'] as const) if (isHttpUrl(images[field])) this.callerUrls.check(field, images[field], base);
    for (const [field, value] of references) if (isHttpUrl(value)) this.callerUrls.check(field, value, base);
    this.callerUrls.check('callback_url', dto.callback_url, base);
    const id = randomUUID();
    const stored: NewMedia[] = [];
    try {
      const frames: Partial<Record<KeyframePositionName, StoredVideoImage>> = {};
      for (const [position, field, value] of [['frame0', 'image', images.image], ['frame1', 'image_tail', images.image_tail]] as const) {
        if (value !== undefined) frames[position] = await this.keyframe(principal.owner, id, position, field, value, stored);
      }
      const referenceImages: StoredVideoImage[] = [];
      for (const [i, [field, value]] of references.entries()) referenceImages.push(await this.keyframe(principal.owner, id, referenceRole(i), field, value, stored));
      // image2video takes the image's shape: no ratio is asked
      const aspect = endpoint !== 'image2video' ? ((dto as CreateKlingTextToVideoDto).aspect_ratio ?? '16:9') : undefined;
      const params: VideoParams = {
        prompt: dto.prompt ?? '',
        loop: false,
        ...(aspect !== undefined ? { aspectRatio: aspect } : {}),
        ...(dto.mode ? { resolution: dto.mode === 'pro' ? '1080p' : '720p' } : {}),
        ...(dto.duration ? { durationS: Number.parseInt(dto.duration, 10) } : {}),
        ...(frames.frame0 ? { firstFrame: frames.frame0 } : {}),
        ...(frames.frame1 ? { lastFrame: frames.frame1 } : {}),
        ...(referenceImages.length > 0 ? { referenceImages } : {}),
        ...(dto.model_name !== undefined ? { model: dto.model_name } : {}),
        ...(dto.negative_prompt != null ? { negativePrompt: dto.negative_prompt } : {}),
        ...(dto.cfg_scale != null ? { cfgScale: dto.cfg_scale } : {}),
        ...(dto.camera_control ? { cameraControl: { ...dto.camera_control } as Record<string, unknown> } : {}),
        ...(dto.sound ? { audio: dto.sound === 'on' } : {}),
        door: KLING_DOOR,
      };
      const made = await this.models.check(videoRequestOf(params), KLING_FIELDS, KlingVideoVendor.protocol);
      const task = await this.engine.submit(this.kind, {
        id,
        owner: principal.owner,
        params: { ...params, ...made },
        externalId: dto.external_task_id ? { value: dto.external_task_id, field: 'external_task_id' } : null,
        callbackUrl: dto.callback_url,
        baseUrl: base,
        details: this.uploads.rows(stored),
      });
      return successEnvelope(requestId, { data: (await this.records.records([task]))[0] });
    } catch (err) {
      await this.uploads.discard(stored);
      throw err;
    }
  }

  async get(principal: Principal, requestId: string, idOrExternalId: string): Promise<KlingVideoTaskEnvelopeDto> {
    const task = await this.tasks.findForOwnerByIdOrExternalId<VideoParams, VideoTaskResult>(KIND, principal.owner, idOrExternalId);
    if (!task) throw new AppError('NOT_FOUND', `No task ${idOrExternalId} among yours (by task_id or external_task_id)`);
    return successEnvelope(requestId, { data: (await this.records.records([task as VideoTask]))[0] });
  }

  /** A page of the caller's generations (every door's), newest first. */
  async list(principal: Principal, requestId: string, query: KlingPageQuery): Promise<KlingVideoTaskListEnvelopeDto> {
    const page = { skip: (query.pageNum - 1) * query.pageSize, take: query.pageSize, externalId: query.external_task_id };
    const tasks = await this.tasks.listForOwner<VideoParams, VideoTaskResult>(KIND, principal.owner, page);
    return successEnvelope(requestId, { data: await this.records.records(tasks) });
  }

  /** A frame or reference image given as a URL is kept as one; Base64 is decoded and stored with the generation. */
  private async keyframe(owner: string, taskId: string, position: InputImageRole, field: string, value: string, stored: NewMedia[]): Promise<StoredVideoImage> {
    if (isHttpUrl(value)) return { type: 'image', id: randomUUID(), url: value };
    // a Base64 image as Kling takes it: no data: prefix, no whitespace
    if (!isBase64Text(value)) throw new AppError('INVALID_PARAMETER', `${field} must be an http(s) URL or Base64 of a JPEG or PNG (no data: prefix)`);
    const media = await this.uploads.store(owner, taskId, position, Buffer.from(value, 'base64'), field);
    stored.push(media);
    return { type: 'image', id: media.id, upload: true };
  }
}

/** Kling's rule: `simple` moves along exactly one axis of config; the presets take no config. */
function checkCameraControl(control: CreateKlingTextToVideoDto['camera_control']): void {
  if (!control) return;
  const moving = CAMERA_AXES.filter((axis) => (control.config?.[axis] ?? 0) !== 0);
  if (control.type === 'simple' && moving.length !== 1) throw new AppError('INVALID_PARAMETER', `camera_control.config must set exactly one of ${CAMERA_AXES.join(', ')} to a non-zero value for type simple (${moving.length} set)`);
  if (control.type !== 'simple' && control.config !== undefined) throw new AppError('INVALID_PARAMETER', `camera_control.config is taken only with type simple (not ${control.type})`);
}
