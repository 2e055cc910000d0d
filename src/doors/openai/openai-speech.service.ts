import { randomUUID } from 'node:crypto';
import { Injectable } from '@nestjs/common';
import type { Response } from 'express';
import type { Principal } from '../../common/auth/credential.js';
import { AppError } from '../../common/errors/app-error.js';
import { TaskEngine } from '../../common/tasks/task-engine.js';
import type { SpeechRequest } from '../../vendors/contracts/speech-vendor.js';
import { MediaService } from '../../modules/media/media.service.js';
import type { FinishedSpeech } from '../../modules/speech/speech-audio.js';
import { SpeechKind, speechChars } from '../../modules/speech/speech.kind.js';
import { SPEECH_DEFINITION } from '../../modules/speech/speech.definition.js';
import { SpeechModels } from '../../modules/speech/speech-models.js';
import { AUDIO_ROLE, CONTENT_TYPES, type SpeechParams, type SpeechTask } from '../../modules/speech/speech-task.js';
import type { CreateOpenAiSpeechDto } from './dto/openai-speech.dto.js';
import { type FailedTaskWords, failedTaskError } from '../../modules/channels/task-failure.js';

/** This door's names of the normalized request's fields, for its 400s (OpenAI's own). */
const OPENAI_SPEECH_FIELDS = { model: 'model', voice: 'voice', input: 'input', instructions: 'instructions', speed: 'speed' } as const;

/** How a failed speech task is worded as OpenAI's error: a vendor's refusal about the voice names `voice`. */
const SPEECH_FAILURE: FailedTaskWords = { what: 'speech', noun: SPEECH_DEFINITION.noun, paramOf: (words) => (/\bvoice/i.test(words) ? 'voice' : undefined) };

/** A failed speech task as OpenAI's error (failedTaskError). */
export function failureOf(task: Pick<SpeechTask, 'id' | 'message'>): AppError {
  return failedTaskError(task, SPEECH_FAILURE);
}

/** The size of each `speech.audio.delta` event's audio (before Base64). */
const DELTA_BYTES = 32 * 1024;

/**
 * OpenAI's speech API over the speech kind (`POST /openai/v1/audio/speech`): a request becomes a task (in GET
 * /tasks like any other, its audio stored and its cost counted) held open until it ends, then answered as
 * OpenAI answers: the audio in the asked format, or server-sent events (`speech.audio.delta`, `speech.audio.done`).
 * A client that goes away loses nothing: the task runs on and its audio stays.
 */
@Injectable()
export class OpenAiSpeechService {
  constructor(
    private readonly engine: TaskEngine,
    private readonly kind: SpeechKind,
    private readonly models: SpeechModels,
    private readonly media: MediaService,
  ) {}

  async create(principal: Principal, dto: CreateOpenAiSpeechDto, res: Response, base?: string): Promise<void> {
    const request: SpeechRequest = {
      model: dto.model,
      input: dto.input,
      voice: typeof dto.voice === 'string' ? { name: dto.voice } : { id: dto.voice.id },
      instructions: dto.instructions ?? null,
      format: dto.response_format ?? 'mp3',
      speed: dto.speed ?? 1,
    };
    await this.models.check(request, OPENAI_SPEECH_FIELDS);
    const id = randomUUID();
    const params: SpeechParams = { ...request, door: 'openai' };
    const submitted = await this.engine.submit(this.kind, { id, owner: principal.owner, params, baseUrl: base, held: true });
    // accepted: a retry of a 5xx from here on would be a second (billed) task, so OpenAI's SDKs are told not to
    res.setHeader('x-should-retry', 'false');
    // the task is named on every answer from here on: the audio, the task's failure, or the end of the hold (504)
    res.setHeader('x-task-id', id);
    if (dto.stream_format === 'sse') return this.stream(principal, submitted, res);
    const { task, made } = await this.held(principal, submitted, res);
    const audio = await this.audio(task, made);
    res.status(200).setHeader('content-type', CONTENT_TYPES[task.params.format]);
    res.end(audio);
  }

  /** Waits for the task's end (woken by it), up to its hold. */
  private async held(principal: Principal, submitted: SpeechTask, res: Response): Promise<{ task: SpeechTask; made?: FinishedSpeech }> {
    const id = submitted.id;
    const held = await this.engine.holdUntilEnded<SpeechParams, SpeechTask['result']>(this.kind, principal.owner, id, res, undefined, submitted);
    if ('deleted' in held) throw new AppError('NOT_FOUND', `speech task ${id} was deleted while the request was held`);
    if ('timedOut' in held) throw new AppError('TIMEOUT', `the speech task ${id} did not end within ${held.holdS} s; it goes on: GET /tasks/${id} shows its end and its audio`);
    return { task: held.ended, made: held.output as FinishedSpeech | undefined };
  }


  /**
   * The stored audio of an ended task (`made`: what its step made on this instance, already stored: the
   * bytes in hand, not read back); a failed one thrown as OpenAI's error (failureOf).
   */
  private async audio(task: SpeechTask, made?: FinishedSpeech): Promise<Buffer> {
    if (task.state === 'failed') throw failureOf(task);
    if (made) return made.bytes;
    const row = await this.media.findForTask(task.id, AUDIO_ROLE, 0);
    const bytes = row ? await this.media.readBytes(row) : null;
    if (!bytes) throw new AppError('UPSTREAM_FAILED', `the speech task ${task.id} ended without audio`);
    return bytes;
  }

  /**
   * Server-sent events as OpenAI sends them: `speech.audio.delta` (Base64 audio) in order, then
   * `speech.audio.done` with usage. The audio is whole once the task has ended, so the stream begins then: a
   * task that failed (or a hold that ran out) is answered with its status and OpenAI's error object, as the
   * audio route answers it, never as a 200 whose events carry the failure.
   */
  private async stream(principal: Principal, submitted: SpeechTask, res: Response): Promise<void> {
    const { task, made } = await this.held(principal, submitted, res);
    const audio = await this.audio(task, made);
    res.status(200).setHeader('content-type', 'text/event-stream; charset=utf-8');
    res.setHeader('cache-control', 'no-cache');
    res.setHeader('x-accel-buffering', 'no');
    const send = (body: Record<string, unknown>) => res.write(`data: ${JSON.stringify(body)}\n\n`);
    for (let at = 0; at < audio.length; at += DELTA_BYTES) send({ type: 'speech.audio.delta', audio: audio.subarray(at, at + DELTA_BYTES).toString('base64') });
    const chars = speechChars(task.params.input);
    send({ type: 'speech.audio.done', usage: { input_tokens: chars, output_tokens: 0, total_tokens: chars } });
    res.end();
  }
}
