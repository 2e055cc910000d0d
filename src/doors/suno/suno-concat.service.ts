import { randomUUID } from 'node:crypto';
import { Injectable } from '@nestjs/common';
import type { Principal } from '../../common/auth/credential.js';
import { AppError } from '../../common/errors/app-error.js';
import { TaskEngine } from '../../common/tasks/task-engine.js';
import { AppConfig } from '../../infra/config/app-config.js';
import type { ClipDescription } from '../../modules/clips/clip-media.js';
import { assertComplete } from '../../modules/clips/clip-rules.js';
import { ClipsRepository, type OwnedClip } from '../../modules/clips/clips.repository.js';
import type { MusicSubmitResultDto } from './dto/music-task.dto.js';
import { CallerUrls } from '../../modules/samples/caller-urls.service.js';
import { ConcatKind } from '../../modules/concat/concat.kind.js';
import type { ConcatParams, ConcatPart } from '../../modules/concat/concat-task.js';
import type { SubmitConcatDto } from './dto/submit-concat.dto.js';

/** Accepts concat tasks: resolves the parts (a chain walked back from its last clip, or the clips given), checks them, submits. */
@Injectable()
export class ConcatService {
  constructor(
    private readonly engine: TaskEngine,
    private readonly kind: ConcatKind,
    private readonly clips: ClipsRepository,
    private readonly config: AppConfig,
    private readonly callerUrls: CallerUrls,
  ) {}

  async submit(principal: Principal, dto: SubmitConcatDto, requestBase?: string): Promise<MusicSubmitResultDto> {
    this.callerUrls.check(dto.callback_url ? 'callback_url' : 'notify_hook', dto.callback_url ?? dto.notify_hook, requestBase);
    if ((dto.clip_id == null) === (dto.clip_ids == null)) {
      throw new AppError('INVALID_PARAMETER', 'give either clip_id (the last clip of a continuation chain) or clip_ids (clips to join end to end), not both and not neither');
    }
    const parts = dto.clip_id != null ? await this.chainParts(principal.owner, dto.clip_id) : await this.listedParts(principal.owner, dto.clip_ids!);
    for (const { clip } of parts) {
      if (!clip.audioStored) {
        throw new AppError('INVALID_PARAMETER', `${dto.clip_id != null ? 'clip_id' : 'clip_ids'}: the audio of clip ${clip.id} is not stored in this gateway (an upload relayed to an upstream that the gateway could not copy), so it cannot be joined`);
      }
    }
    const totalS = parts.reduce((sum, { clip, cutAt }) => sum + (cutAt ?? clip.duration ?? 0), 0);
    const maxS = this.config.kinds.concat.options.maxDurationS;
    if (totalS > maxS) {
      throw new AppError('INVALID_PARAMETER', `${dto.clip_id ? 'clip_id' : 'clip_ids'}: the joined song would last ${round(totalS)} s, more than CONCAT_MAX_DURATION_S (${maxS} s)`);
    }
    const last = parts[parts.length - 1].clip.params as ClipDescription;
    const id = randomUUID();
    const songId = randomUUID();
    const params: ConcatParams = {
      clip_id: dto.clip_id ?? null,
      clip_ids: dto.clip_ids ?? null,
      parts: parts.map(({ clip, cutAt }): ConcatPart => ({ clip_id: clip.id, task_id: clip.taskId, idx: clip.idx, type: clip.type, cut_at: cutAt })),
      song_id: songId,
      title: last.title ?? null,
      style: last.style ?? null,
      lyrics: last.lyrics ?? last.description ?? null,
      model: last.model ?? null,
    };
    const task = await this.engine.submit(this.kind, {
      id,
      owner: principal.owner,
      params,
      callbackUrl: dto.callback_url ?? dto.notify_hook ?? null,
      baseUrl: requestBase,
      parentId: parts[parts.length - 1].clip.id,
      details: [ClipsRepository.newRows([{ id: songId, taskId: id, owner: principal.owner, idx: 0, type: 'concat' }])],
    });
    return { code: 'success', message: '', data: task.id };
  }

  /** Suno's concat: the chain from its first clip to `id`, each part cut where the next one continues it. */
  private async chainParts(owner: string, id: string): Promise<{ clip: OwnedClip; cutAt: number | null }[]> {
    const chain = await this.clips.chainOf(owner, id);
    if (chain.length === 0) throw new AppError('NOT_FOUND', `clip_id: there is no clip ${id} among yours`);
    if (chain.length > MAX_CHAIN_PARTS) throw new AppError('INVALID_PARAMETER', `clip_id: the chain of clip ${id} has ${chain.length} parts, more than the ${MAX_CHAIN_PARTS} one concat joins`);
    const leaf = chain[chain.length - 1];
    if (!leaf.parentId) {
      throw new AppError('INVALID_PARAMETER', `clip_id: clip ${id} continues no clip, so there is nothing to join it with; name the last clip of a continuation chain, or join clips end to end with clip_ids`);
    }
    if (chain[0].parentId) throw new AppError('INVALID_PARAMETER', `clip_id: the chain of clip ${id} reaches a clip that is no longer among yours (${chain[0].parentId})`);
    for (const clip of chain) assertComplete(clip, 'clip_id');
    return chain.map((clip, i) => ({ clip, cutAt: i < chain.length - 1 ? chain[i + 1].continueAt : null }));
  }

  /** This gateway's join: the clips given, whole, in order. */
  private async listedParts(owner: string, ids: string[]): Promise<{ clip: OwnedClip; cutAt: null }[]> {
    const found = await this.clips.findForOwner(owner, ids);
    const missing = ids.filter((id) => !found.some((c) => c.id === id));
    if (missing.length > 0) throw new AppError('NOT_FOUND', `clip_ids: there is no clip ${missing.join(', ')} among yours`);
    const byId = new Map(found.map((c) => [c.id, c]));
    const clips = ids.map((id) => byId.get(id)!);
    for (const clip of clips) assertComplete(clip, 'clip_ids');
    return clips.map((clip) => ({ clip, cutAt: null }));
  }
}

/** The longest continuation chain one concat joins (a bound on the work of one step). */
export const MAX_CHAIN_PARTS = 100;

function round(seconds: number): number {
  return Math.round(seconds * 1000) / 1000;
}
