import { Inject, Injectable } from '@nestjs/common';
import { type Price, type StepContext, type StepOutcome, type Success, type TaskKind, type TaskTx, type UpstreamWatcher } from '../../common/tasks/task-kind.js';
import { AppConfig, type ProviderName } from '../../infra/config/app-config.js';
import { mediaEndRows } from '../media/media.repository.js';
import { MediaService } from '../media/media.service.js';
import type { SpeechModelDto } from './dto/speech-model.dto.js';
import { SPEECH_DEFINITION } from './speech.definition.js';
import type { FinishedSpeech } from './speech-audio.js';
import { SpeechModels } from './speech-models.js';
import { AUDIO_ROLE, CONTENT_TYPES, type SpeechParams, type SpeechResult, type SpeechTask } from './speech-task.js';
import { SPEECH_PROVIDERS, type SpeechProvider } from './providers/speech-provider.js';

/** What a task is charged by: the input's characters (code points), each started thousand counted whole. */
export function speechChars(input: string): number {
  return [...input].length;
}

/** A speech task's record (GET /tasks/{id}): the request in the gateway's words and what was made. */
export interface SpeechRecord {
  id: string;
  object: 'speech';
  status: string;
  model: string | null;
  voice: SpeechParams['voice'];
  input_chars: number;
  response_format: string;
  speed: number;
  instructions: string | null;
  duration_s: number | null;
  created_at: number;
  error: string | null;
}

/**
 * Text to speech as a task kind: priced per 1,000 characters of input, spoken by the provider SPEECH_PROVIDER
 * chooses (the sandbox offline, a relay by the vendors behind the speech channels), the audio converted into the
 * asked format before it is stored. The OpenAI door holds the request and answers the audio itself.
 */
@Injectable()
export class SpeechKind implements TaskKind<SpeechParams, SpeechResult, FinishedSpeech> {
  static readonly definition = SPEECH_DEFINITION;
  readonly definition = SPEECH_DEFINITION;

  constructor(
    private readonly config: AppConfig,
    @Inject(SPEECH_PROVIDERS) private readonly providers: Record<ProviderName, SpeechProvider>,
    private readonly media: MediaService,
    private readonly speechModels: SpeechModels,
  ) {}

  /** One slot; PRICE_SPEECH_1K_CHARS credits per started 1,000 characters. */
  price(params: SpeechParams): Price {
    return { slots: 1, credits: Math.ceil(speechChars(params.input) / 1000) * this.config.kinds.speech.prices.kchars };
  }

  get watcher(): UpstreamWatcher | undefined {
    return this.providers[this.config.kinds.speech.provider].watcher;
  }

  async step(task: SpeechTask, ctx: StepContext): Promise<StepOutcome<FinishedSpeech>> {
    const file = (prefix: string, ext: string) => ctx.files.file(prefix, ext);
    return this.providers[this.config.kinds.speech.provider].step(task, { ...ctx.marks, signal: ctx.signal, file });
  }

  async store(task: SpeechTask, output: FinishedSpeech): Promise<Success<SpeechResult>> {
    const stored = await this.media.putResult(task.attempts, [{ owner: task.owner, taskId: task.id, role: AUDIO_ROLE, index: 0, body: output.bytes, contentType: CONTENT_TYPES[output.format] }]);
    return { result: { format: output.format, duration_s: output.durationS, chars: speechChars(task.params.input) }, details: [mediaEndRows(stored)], discard: () => this.media.discardObjects(stored) };
  }

  notifications(tasks: SpeechTask[], _tx?: TaskTx): Promise<SpeechRecord[]> {
    const states = this.definition.states;
    return Promise.resolve(
      tasks.map((t) => ({
        id: t.id,
        object: 'speech' as const,
        status: states[t.state as keyof typeof states] ?? t.state,
        model: t.params.model,
        voice: t.params.voice,
        input_chars: speechChars(t.params.input),
        response_format: t.params.format,
        speed: t.params.speed,
        instructions: t.params.instructions,
        duration_s: t.result?.duration_s ?? null,
        created_at: Math.floor(t.createdAt.getTime() / 1000),
        error: t.state === 'failed' ? t.message : null,
      })),
    );
  }

  models(): Promise<SpeechModelDto[]> {
    return this.speechModels.entries();
  }
}
