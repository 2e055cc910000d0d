import { Injectable } from '@nestjs/common';
import type { StepOutcome } from '../../../common/tasks/task-kind.js';
import { AppConfig } from '../../../infra/config/app-config.js';
import { StepScope } from '../../../infra/process/step-scope.js';
import type { LyricsText } from '../../../vendors/contracts/lyrics-vendor.js';
import { LyricsModels } from '../lyrics-models.js';
import { lyricsRequestOf, type LyricsTask } from '../lyrics-task.js';
import { writeLyrics } from '../lyrics-templates.js';

/**
 * Writes lyrics offline from templates (lyrics-templates.ts): the same prompt, the same lyrics; as many versions
 * as the model the request names (or the first that takes it) writes.
 */
@Injectable()
export class SandboxLyricsProvider {
  constructor(
    private readonly config: AppConfig,
    private readonly models: LyricsModels,
  ) {}

  async step(task: LyricsTask): Promise<StepOutcome<LyricsText[]>> {
    if (this.config.sandboxDelayMs > 0) await StepScope.delay(this.config.sandboxDelayMs);
    const request = lyricsRequestOf(task.params);
    const model = await this.models.modelFor(request);
    return { kind: 'done', result: writeLyrics(request.prompt, model?.spec.takes ?? 1) };
  }
}
