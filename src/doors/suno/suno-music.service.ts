import { randomUUID } from 'node:crypto';
import { Injectable } from '@nestjs/common';
import type { Principal } from '../../common/auth/credential.js';
import { AppError } from '../../common/errors/app-error.js';
import { TaskEngine } from '../../common/tasks/task-engine.js';
import { AppConfig } from '../../infra/config/app-config.js';
import { assertComplete } from '../../modules/clips/clip-rules.js';
import { ClipsRepository, type OwnedClip } from '../../modules/clips/clips.repository.js';
import type { MusicSubmitResultDto } from './dto/music-task.dto.js';
import { CallerUrls } from '../../modules/samples/caller-urls.service.js';
import type { SubmitMusicDto } from './dto/submit-music.dto.js';
import { MusicKind } from '../../modules/music/music.kind.js';
import { MUSIC_MODELS, type MusicModelName } from '../../modules/music/music-models.js';
import { MusicModels } from '../../modules/music/music-offer.js';
import type { MusicAsk, MusicField } from '../../vendors/contracts/music-vendor.js';
import type { MusicParams } from '../../modules/music/music-task.js';

/** Accepts music tasks: checks the model's limits and the clip a continuation names, then submits the task with its two clips. */
@Injectable()
export class MusicService {
  constructor(
    private readonly engine: TaskEngine,
    private readonly kind: MusicKind,
    private readonly clips: ClipsRepository,
    private readonly config: AppConfig,
    private readonly callerUrls: CallerUrls,
    private readonly models: MusicModels,
  ) {}

  async submit(principal: Principal, dto: SubmitMusicDto, requestBase?: string): Promise<MusicSubmitResultDto> {
    this.callerUrls.check(dto.callback_url ? 'callback_url' : 'notify_hook', dto.callback_url ?? dto.notify_hook, requestBase);
    if (dto.mv !== undefined && dto.mv in MUSIC_MODELS) checkModelLimits(dto.mv as MusicModelName, dto);
    if (!dto.continue_clip_id && (dto.continue_at != null || dto.task != null)) {
      throw new AppError('INVALID_PARAMETER', `${dto.continue_at != null ? 'continue_at' : 'task'} continues a clip: it needs continue_clip_id`);
    }
    const parent = dto.continue_clip_id ? await this.continuedClip(principal.owner, dto) : null;
    if (!parent && !hasText(dto.prompt) && !hasText(dto.gpt_description_prompt) && !hasText(dto.tags)) {
      throw new AppError('INVALID_PARAMETER', 'prompt, gpt_description_prompt or tags is required: what the new song is (lyrics, a description or a style)');
    }
    const ask: MusicAsk = {
      ...(dto.mv !== undefined ? { model: dto.mv } : {}),
      lyrics: dto.prompt ?? null,
      description: dto.gpt_description_prompt ?? null,
      style: dto.tags ?? null,
      avoidStyle: dto.negative_tags ?? null,
      instrumental: dto.make_instrumental ?? false,
      durationS: dto.duration ?? null,
      // the sandbox holds every clip, as an aggregator holds its own and the uploads sent to it
      continues: parent ? (parent.upstreamId || this.config.kinds.music.provider === 'sandbox' ? 'own' : 'stored') : null,
    };
    await this.models.check(ask, MUSIC_FIELD_NAMES);
    const id = randomUUID();
    const clipIds = Array.from({ length: await this.models.takesFor(ask) }, () => randomUUID());
    const continueAt = parent ? (dto.continue_at ?? parent.duration) : null;
    // the door's (Suno's) names mapped into the gateway's own parameters
    const params: MusicParams = {
      lyrics: dto.prompt ?? null,
      description: dto.gpt_description_prompt ?? null,
      style: dto.tags ?? null,
      avoid_style: dto.negative_tags ?? null,
      title: dto.title ?? null,
      model: dto.mv ?? null,
      instrumental: dto.make_instrumental ?? false,
      // asked only: a song the model times has none (as songs stored before durations were)
      ...(dto.duration !== undefined ? { duration_s: dto.duration } : {}),
      clip_ids: clipIds,
      continues: parent
        ? { clip_id: parent.id, at_s: continueAt, from_upload: parent.type === 'upload', upstream_clip_id: parent.upstreamId ?? null, channel_id: parent.upstreamId ? parent.channelId : null }
        : null,
    };
    const task = await this.engine.submit(this.kind, {
      id,
      owner: principal.owner,
      params,
      callbackUrl: dto.callback_url ?? dto.notify_hook ?? null,
      baseUrl: requestBase,
      parentId: parent?.id ?? null,
      details: [ClipsRepository.newRows(clipIds.map((clipId, idx) => ({ id: clipId, taskId: id, owner: principal.owner, idx, type: 'gen', parentId: parent?.id ?? null, continueAt })))],
    });
    return { code: 'success', message: '', data: task.id };
  }

  /** The clip a continuation names, checked: the owner's, complete, not expired, continue_at inside it, task matching its source. */
  private async continuedClip(owner: string, dto: SubmitMusicDto): Promise<OwnedClip> {
    const id = dto.continue_clip_id!;
    const [clip] = await this.clips.findForOwner(owner, [id]);
    if (!clip) throw new AppError('NOT_FOUND', `continue_clip_id: there is no clip ${id} among yours`);
    assertComplete(clip, 'continue_clip_id');
    const duration = clip.duration ?? 0;
    if (dto.continue_at != null && !(dto.continue_at > 0 && dto.continue_at < duration)) {
      throw new AppError('INVALID_PARAMETER', `continue_at must be more than 0 and less than the clip's duration, ${duration} s (got ${dto.continue_at})`);
    }
    if (dto.task === 'upload_extend' && clip.type !== 'upload') {
      throw new AppError('INVALID_PARAMETER', `task "upload_extend" continues an uploaded clip, and clip ${id} is a ${clip.type === 'gen' ? 'generated' : clip.type === 'stem' ? 'stem' : 'joined'} clip: use "extend" (or leave task out)`);
    }
    if (dto.task === 'extend' && clip.type === 'upload') {
      throw new AppError('INVALID_PARAMETER', `task "extend" continues a generated clip, and clip ${id} is an upload: use "upload_extend" (or leave task out)`);
    }
    const relay = this.config.kinds.music.provider === 'relay' && !(await this.models.offered()).some((m) => m.spec.continueUpload);
    if (relay && clip.type === 'upload' && clip.upstreamId && this.config.kinds.audio.relayUrl !== this.config.kinds.music.relayUrl) {
      throw new AppError(
        'INVALID_PARAMETER',
        `continue_clip_id: clip ${id} is an upload held by the audio upstream (RELAY_AUDIO_URL), not by the music upstream (RELAY_MUSIC_URL): only uploads sent to the music upstream can be continued`,
      );
    }
    if (relay && !clip.upstreamId) {
      throw new AppError(
        'INVALID_PARAMETER',
        `continue_clip_id: clip ${id} is not known to the upstream this gateway relays music to (it was made or joined here): only clips the upstream made, or uploads sent to it, can be continued`,
      );
    }
    return clip;
  }
}

/** The Suno-style door's names of the normalized fields (its 400s). */
const MUSIC_FIELD_NAMES: Record<MusicField, string> = {
  model: 'mv',
  lyrics: 'prompt',
  description: 'gpt_description_prompt',
  style: 'tags',
  avoidStyle: 'negative_tags',
  instrumental: 'make_instrumental',
  durationS: 'duration',
  continues: 'continue_clip_id',
};

function hasText(value: string | undefined): boolean {
  return typeof value === 'string' && value.trim().length > 0;
}

function checkModelLimits(mv: MusicModelName, dto: SubmitMusicDto): void {
  const model = MUSIC_MODELS[mv];
  const limits: [keyof SubmitMusicDto, number][] = [
    ['prompt', model.promptMax],
    ['tags', model.tagsMax],
    ['negative_tags', model.tagsMax],
    ['title', model.titleMax],
  ];
  for (const [field, max] of limits) {
    const value = dto[field];
    if (typeof value === 'string' && [...value].length > max) {
      throw new AppError('INVALID_PARAMETER', `${field} must be at most ${max} characters long with mv ${mv} (got ${[...value].length})`);
    }
  }
}
