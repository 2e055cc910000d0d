import { createHash, randomUUID } from 'node:crypto';
import { Injectable } from '@nestjs/common';
import type { Response } from 'express';
import type { Principal } from '../../common/auth/credential.js';
import { AppError } from '../../common/errors/app-error.js';
import { TaskEngine } from '../../common/tasks/task-engine.js';
import { CLIP_AUDIO_ROLE } from '../../modules/clips/clip-media.js';
import { ClipsRepository } from '../../modules/clips/clips.repository.js';
import { MediaService } from '../../modules/media/media.service.js';
import { MusicModels } from '../../modules/music/music-offer.js';
import type { MusicParams, MusicResult, MusicTask } from '../../modules/music/music-task.js';
import { MusicKind } from '../../modules/music/music.kind.js';
import type { MusicAsk } from '../../vendors/contracts/music-vendor.js';
import { failedTaskError } from '../../modules/channels/task-failure.js';
import { MUSIC_DEFINITION } from '../../modules/music/music.definition.js';
import type { ElevenLabsComposeMusicDto } from './dto/elevenlabs-music.dto.js';
import { ELEVENLABS_DOOR } from './elevenlabs.door.js';
import { PLAN_FIELDS, PROMPT_FIELDS, assertComposable, composedSong } from './elevenlabs-music.mapping.js';

/** The size of each chunk `/stream` writes. */
const STREAM_CHUNK_BYTES = 64 * 1024;

/**
 * ElevenLabs' music API over the music kind (`POST /elevenlabs/v1/music`, `…/stream`): a compose request becomes
 * a music task (in GET /tasks and the Suno-style door's fetch like any other, its songs stored and its cost
 * counted) held open until it ends, then answered as ElevenLabs answers: the first take's audio, its task id
 * in the `song-id` header. A client that goes away loses nothing: the task runs on and its songs stay.
 */
@Injectable()
export class ElevenLabsMusicService {
  constructor(
    private readonly engine: TaskEngine,
    private readonly kind: MusicKind,
    private readonly models: MusicModels,
    private readonly media: MediaService,
  ) {}

  /** Checks and submits the song, holds the request until its task ends, and answers its audio (`stream`: in chunks as they are written). */
  async compose(principal: Principal, dto: ElevenLabsComposeMusicDto, res: Response, stream: boolean, base?: string): Promise<void> {
    assertComposable(dto);
    const song = composedSong(dto);
    // the request's model_id where a configured model has that name; else any model that makes the song
    const named = dto.model_id !== undefined && (await this.models.offered()).some((m) => m.name === dto.model_id) ? dto.model_id : null;
    const ask: MusicAsk = {
      ...(named !== null ? { model: named } : {}),
      lyrics: song.lyrics,
      description: song.description,
      style: song.style,
      avoidStyle: song.avoid_style,
      instrumental: song.instrumental,
      durationS: song.duration_s,
      continues: null,
    };
    await this.models.check(ask, dto.composition_plan ? PLAN_FIELDS : PROMPT_FIELDS);
    // ElevenLabs' SDKs send a request answered 504 again by themselves (twice): such a retry is held on the
    // task the first made, which goes on, rather than made (and charged) again
    const fingerprint = createHash('sha256').update(JSON.stringify(dto)).digest('base64url');
    const retried = await this.engine.findRetried<MusicParams, MusicResult>(this.kind, principal.owner, fingerprint);
    const task = await this.held(principal, retried ?? (await this.submit(principal, dto, song, named, ask, fingerprint, base)), res);
    const { bytes, contentType } = await this.audio(task);
    res.status(200).setHeader('content-type', contentType);
    res.setHeader('song-id', task.id);
    if (!stream) {
      res.end(bytes);
      return;
    }
    // chunked (no Content-Length), as ElevenLabs streams a song
    for (let at = 0; at < bytes.length; at += STREAM_CHUNK_BYTES) res.write(bytes.subarray(at, at + STREAM_CHUNK_BYTES));
    res.end();
  }

  /** The song as a music task of the owner's, its request's fingerprint kept in its params (findRetried). */
  private async submit(principal: Principal, dto: ElevenLabsComposeMusicDto, song: ReturnType<typeof composedSong>, named: string | null, ask: MusicAsk, fingerprint: string, base?: string): Promise<MusicTask> {
    const id = randomUUID();
    const clipIds = Array.from({ length: await this.models.takesFor(ask) }, () => randomUUID());
    // the door's name stored (GET /tasks?door=elevenlabs finds its songs); it renders none, so its records are the kind's fallback's
    const params: MusicParams & { door: string; request_fingerprint: string } = { door: ELEVENLABS_DOOR, ...song, title: null, model: named, clip_ids: clipIds, continues: null, request_fingerprint: fingerprint };
    return this.engine.submit(this.kind, {
      id,
      owner: principal.owner,
      params,
      baseUrl: base,
      details: [ClipsRepository.newRows(clipIds.map((clipId, idx) => ({ id: clipId, taskId: id, owner: principal.owner, idx, type: 'gen', parentId: null, continueAt: null })))],
      held: true,
    });
  }

  /** Waits for the task's end (woken by it), up to its hold. */
  private async held(principal: Principal, submitted: MusicTask, res: Response): Promise<MusicTask> {
    const id = submitted.id;
    const held = await this.engine.holdUntilEnded<MusicParams, MusicResult>(this.kind, principal.owner, id, res, undefined, submitted);
    if ('deleted' in held) throw new AppError('NOT_FOUND', `music task ${id} was deleted while the request was held`);
    if ('timedOut' in held) throw new AppError('TIMEOUT', `the music task ${id} did not end within ${held.holdS} s; it goes on: GET /tasks/${id} shows its end and its songs`);
    return held.ended;
  }


  /**
   * The first take's stored audio of an ended task; a failed one thrown: a vendor's content refusal as 400
   * `bad_prompt`, a vendor refusing the request itself (a length or a plan it does not take) as the 422 ElevenLabs
   * answers a refused request, in the vendor's words and naming the field where they name one of this door's
   * (no retry mends it; the vendor was asked once), anything else 502.
   */
  private async audio(task: MusicTask): Promise<{ bytes: Buffer; contentType: string }> {
    if (task.state === 'failed') throw failureOf(task);
    const row = await this.media.findForTask(task.id, CLIP_AUDIO_ROLE, 0);
    const bytes = row ? await this.media.readBytes(row) : null;
    if (!row || !bytes) throw new AppError('UPSTREAM_FAILED', `the music task ${task.id} ended without audio`);
    return { bytes, contentType: row.contentType };
  }
}

/** The fields of this door's body, which a vendor's refusal may name first (`music_length_ms: …`). */
const BODY_FIELDS = new Set(['prompt', 'composition_plan', 'music_length_ms', 'model_id', 'force_instrumental']);

/** A failed music task as this door's error (ElevenLabsMusicService.audio): the vendor's refusal names the door's field its words begin with. */
export function failureOf(task: Pick<MusicTask, 'id' | 'message'>): AppError {
  return failedTaskError(task, { what: 'music', noun: MUSIC_DEFINITION.noun, paramOf: bodyFieldOf });
}

/** The door's field a vendor's words begin with (`music_length_ms: …`, `composition_plan.sections.0: …`), if any. */
function bodyFieldOf(words: string): string | undefined {
  const field = /^([a-z_]+)(?:\.[a-z0-9_.]+)?(?=: )/.exec(words);
  return field && BODY_FIELDS.has(field[1]) ? field[0] : undefined;
}
