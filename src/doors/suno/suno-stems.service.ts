import { randomUUID } from 'node:crypto';
import { Injectable } from '@nestjs/common';
import type { Principal } from '../../common/auth/credential.js';
import { AppError } from '../../common/errors/app-error.js';
import { TaskEngine } from '../../common/tasks/task-engine.js';
import { AppConfig } from '../../infra/config/app-config.js';
import type { ClipDescription } from '../../modules/clips/clip-media.js';
import { assertComplete } from '../../modules/clips/clip-rules.js';
import { ClipsRepository } from '../../modules/clips/clips.repository.js';
import { CallerUrls } from '../../modules/samples/caller-urls.service.js';
import { StemsKind } from '../../modules/stems/stems.kind.js';
import { StemsModels } from '../../modules/stems/stems-offer.js';
import type { StemsParams } from '../../modules/stems/stems-task.js';
import type { StemsField } from '../../vendors/contracts/stems-vendor.js';
import type { MusicSubmitResultDto } from './dto/music-task.dto.js';
import type { SubmitStemsDto } from './dto/submit-stems.dto.js';

/** The door's names of the stems request's fields (its 400s). */
const STEMS_FIELD_NAMES: Record<StemsField, string> = { model: 'model', split: 'stems', clip: 'clip_id' };

/** Accepts stems tasks: the clip checked (the caller's, complete, its audio stored here), the split checked against the configured models, then submitted. */
@Injectable()
export class StemsService {
  constructor(
    private readonly engine: TaskEngine,
    private readonly kind: StemsKind,
    private readonly clips: ClipsRepository,
    private readonly models: StemsModels,
    private readonly config: AppConfig,
    private readonly callerUrls: CallerUrls,
  ) {}

  async submit(principal: Principal, dto: SubmitStemsDto, requestBase?: string): Promise<MusicSubmitResultDto> {
    this.callerUrls.check(dto.callback_url ? 'callback_url' : 'notify_hook', dto.callback_url ?? dto.notify_hook, requestBase);
    const [clip] = await this.clips.findForOwner(principal.owner, [dto.clip_id]);
    if (!clip) throw new AppError('NOT_FOUND', `clip_id: there is no clip ${dto.clip_id} among yours`);
    assertComplete(clip, 'clip_id');
    if (!clip.audioStored) {
      throw new AppError('INVALID_PARAMETER', `clip_id: the audio of clip ${clip.id} is not stored in this gateway (an upload relayed to an upstream that the gateway could not copy), so it cannot be split`);
    }
    const split = dto.stems ?? 'two';
    // a clip a vendor made is its own there (the sandbox holds every clip, as a vendor its own)
    const own = Boolean(clip.upstreamId && clip.channelId) || this.config.kinds.stems.provider === 'sandbox';
    await this.models.check({ split, clip: own ? 'own' : 'stored' }, STEMS_FIELD_NAMES);
    const described = clip.params as ClipDescription;
    const params: StemsParams = {
      clip_id: clip.id,
      split,
      model: null,
      title: described.title ?? null,
      upstream_clip_id: clip.upstreamId && clip.channelId ? clip.upstreamId : null,
      upstream_task_id: clip.upstreamId && clip.channelId ? clip.taskUpstreamId : null,
      channel_id: clip.upstreamId && clip.channelId ? clip.channelId : null,
    };
    const task = await this.engine.submit(this.kind, {
      id: randomUUID(),
      owner: principal.owner,
      params,
      callbackUrl: dto.callback_url ?? dto.notify_hook ?? null,
      baseUrl: requestBase,
      // its lineage: the clip its stems were made from
      parentId: clip.id,
    });
    return { code: 'success', message: '', data: task.id };
  }
}
