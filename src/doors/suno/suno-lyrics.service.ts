import { randomUUID } from 'node:crypto';
import { Injectable } from '@nestjs/common';
import type { Principal } from '../../common/auth/credential.js';
import { TaskEngine } from '../../common/tasks/task-engine.js';
import { LyricsKind } from '../../modules/lyrics/lyrics.kind.js';
import { LyricsModels } from '../../modules/lyrics/lyrics-models.js';
import type { LyricsParams } from '../../modules/lyrics/lyrics-task.js';
import { CallerUrls } from '../../modules/samples/caller-urls.service.js';
import type { MusicSubmitResultDto } from './dto/music-task.dto.js';
import type { SubmitLyricsDto } from './dto/submit-lyrics.dto.js';
import { SUNO_DOOR } from './suno.door.js';

/** Accepts lyrics tasks in new-api's words: checks the model and the prompt's length against what is configured, then submits the task. */
@Injectable()
export class LyricsService {
  constructor(
    private readonly engine: TaskEngine,
    private readonly kind: LyricsKind,
    private readonly models: LyricsModels,
    private readonly callerUrls: CallerUrls,
  ) {}

  async submit(principal: Principal, dto: SubmitLyricsDto, requestBase?: string): Promise<MusicSubmitResultDto> {
    this.callerUrls.check(dto.callback_url ? 'callback_url' : 'notify_hook', dto.callback_url ?? dto.notify_hook, requestBase);
    // the door's (new-api's) names mapped into the gateway's own request
    const params: LyricsParams = { prompt: dto.prompt, model: dto.mv ?? null, door: SUNO_DOOR };
    await this.models.check(params, { model: 'mv', prompt: 'prompt' });
    const task = await this.engine.submit(this.kind, { id: randomUUID(), owner: principal.owner, params, callbackUrl: dto.callback_url ?? dto.notify_hook ?? null, baseUrl: requestBase });
    return { code: 'success', message: '', data: task.id };
  }
}
