import { Injectable } from '@nestjs/common';
import type { Clip } from '../../generated/prisma/client.js';
import { CLIP_AUDIO_ROLE, CLIP_COVER_ROLE, type ClipDescription } from '../../modules/clips/clip-media.js';
import type { Task, TaskTx } from '../../common/tasks/task-kind.js';
import { CONCAT_DEFINITION } from '../../modules/concat/concat.definition.js';
import { MUSIC_DEFINITION } from '../../modules/music/music.definition.js';
import type { DoorRendering } from '../contracts/door.js';
import { SUNO_DOOR } from './suno.door.js';
import type { MediaRow } from '../../modules/media/media.repository.js';
import { MediaService } from '../../modules/media/media.service.js';
import { type Ancestor, ClipsRepository } from '../../modules/clips/clips.repository.js';
import type { ClipDto, ClipHistoryEntryDto, MusicTaskDto } from './dto/music-task.dto.js';
import { stemNameOf } from '../../modules/stems/stems-task.js';

/** Each music kind's action, by kind name (the aggregators' vocabulary). */
export const MUSIC_ACTIONS_BY_KIND: Record<string, string> = { music: 'MUSIC', concat: 'CONCAT', audio: 'UPLOAD', stems: 'STEMS' };

/** The record GET /music-a/fetch answers for a music, concat or upload task (and the body of its callbacks). */
@Injectable()
export class ClipRecords {
  constructor(
    private readonly clips: ClipsRepository,
    private readonly media: MediaService,
  ) {}

  /** `tx`: read in a state change's transaction (its notification). */
  async records(tasks: Task<object, unknown>[], tx?: TaskTx, now = new Date()): Promise<MusicTaskDto[]> {
    const clips = await this.clips.listForTasks(
      tasks.map((t) => t.id),
      tx,
    );
    const ancestors = await this.clips.ancestorsOf(
      clips.filter((c) => c.parentId).map((c) => c.id),
      tx,
    );
    const mediaOf = await this.media.linkedMedia(
      tasks.filter((t) => !t.mediaExpiredAt),
      tx,
    );
    return tasks.map((task) => {
      const { media, link } = mediaOf(task);
      const find = (role: string, idx: number): MediaRow | undefined => (task.mediaExpiredAt ? undefined : media.find((m) => m.role === role && m.index === idx));
      const urlOf = (role: string, idx: number) => {
        const row = find(role, idx);
        return row ? link(row) : null;
      };
      const status = taskStatus(task, now);
      return {
        task_id: task.id,
        action: MUSIC_ACTIONS_BY_KIND[task.kind] ?? task.kind.toUpperCase(),
        status,
        fail_reason: task.state === 'failed' ? (task.message ?? 'failed') : '',
        submit_time: unixSeconds(task.createdAt),
        start_time: task.startedAt && status !== 'QUEUED' ? unixSeconds(task.startedAt) : 0,
        finish_time: task.finishedAt ? unixSeconds(task.finishedAt) : 0,
        progress: progressOf(task, status, now),
        data: clips.filter((c) => c.taskId === task.id && !(task.state === 'succeeded' && c.duration === null)).map((clip) => toClip(task, clip, status, ancestors.get(clip.id) ?? [], urlOf(CLIP_AUDIO_ROLE, clip.idx), urlOf(CLIP_COVER_ROLE, clip.idx))),
      };
    });
  }
}

/** The record of a music task, its callbacks' body: the door's only rendering of music. */
@Injectable()
export class SunoMusicRecords implements DoorRendering {
  readonly door = SUNO_DOOR;
  readonly kind = MUSIC_DEFINITION.name;
  readonly fallback = true;

  constructor(private readonly clips: ClipRecords) {}

  records(tasks: Task<object, unknown>[], tx?: TaskTx): Promise<MusicTaskDto[]> {
    return this.clips.records(tasks, tx);
  }
}

/** The record of a concat task, its callbacks' body: the door's only rendering of concat. */
@Injectable()
export class SunoConcatRecords implements DoorRendering {
  readonly door = SUNO_DOOR;
  readonly kind = CONCAT_DEFINITION.name;
  readonly fallback = true;

  constructor(private readonly clips: ClipRecords) {}

  records(tasks: Task<object, unknown>[], tx?: TaskTx): Promise<MusicTaskDto[]> {
    return this.clips.records(tasks, tx);
  }
}

/** How far ahead of this process's clock the database's may run before a start reads as in the future (QUEUED). */
const CLOCK_SKEW_MS = 200;

/** The aggregators' task status: SUBMITTED (accepted), QUEUED (the upstream is busy: waiting off the clock), IN_PROGRESS, SUCCESS, FAILURE. */
export function taskStatus(task: Pick<Task, 'state' | 'startedAt'>, now: Date): string {
  switch (task.state) {
    case 'queued':
      return 'SUBMITTED';
    case 'running':
      // A busy upstream moves the start ahead (postpone); the start the database wrote a moment ago is not that.
      return task.startedAt && task.startedAt.getTime() > now.getTime() + CLOCK_SKEW_MS ? 'QUEUED' : 'IN_PROGRESS';
    case 'succeeded':
      return 'SUCCESS';
    case 'failed':
      return 'FAILURE';
  }
}

const CLIP_STATUS: Record<string, string> = { SUBMITTED: 'submitted', QUEUED: 'queued', IN_PROGRESS: 'streaming', SUCCESS: 'complete', FAILURE: 'error' };

export function unixSeconds(at: Date): number {
  return Math.floor(at.getTime() / 1000);
}

/** 0% until it starts, 100% once it ends; in between, a guess from the time it has run (never 100% before it ends). */
export function progressOf(task: Pick<Task, 'startedAt'>, status: string, now: Date): string {
  if (status === 'SUCCESS' || status === 'FAILURE') return '100%';
  if (status !== 'IN_PROGRESS' || !task.startedAt) return '0%';
  const elapsedS = (now.getTime() - task.startedAt.getTime()) / 1000;
  return `${Math.min(95, 10 + Math.floor((elapsedS / 60) * 85))}%`;
}

function entry(a: Ancestor): ClipHistoryEntryDto {
  return { id: a.id, type: a.type, continue_at: a.cutAt };
}

function toClip(task: Task<object, unknown>, clip: Clip, status: string, ancestors: Ancestor[], audioUrl: string | null, imageUrl: string | null): ClipDto {
  const p = task.params as ClipDescription;
  const clipStatus = CLIP_STATUS[status];
  return {
    id: clip.id,
    status: clipStatus,
    audio_url: status === 'SUCCESS' ? audioUrl : null,
    image_url: status === 'SUCCESS' ? imageUrl : null,
    // a stem is titled by its stem's name (vocals, instrumental, …)
    title: clip.title ?? stemNameOf(task, clip.idx) ?? p.title ?? null,
    model_name: p.model ?? null,
    created_at: clip.createdAt.toISOString(),
    metadata: {
      tags: p.style ?? null,
      // the lyrics it sings as its maker reported them (description mode: those written), else what was asked
      prompt: clip.lyrics ?? p.lyrics ?? p.description ?? null,
      gpt_description_prompt: p.description ?? null,
      negative_tags: p.avoid_style ?? null,
      duration: clip.duration,
      type: clip.type,
      continue_clip_id: clip.parentId,
      continue_at: clip.continueAt,
      history: ancestors.map(entry),
      ...(clip.type === 'stem' ? { stem_of: (p as { clip_id?: string }).clip_id ?? null } : {}),
      ...(p.parts ? { concat_history: p.parts.map((part) => ({ id: part.clip_id, type: part.type, continue_at: part.cut_at })) } : {}),
      error_message: status === 'FAILURE' ? (task.message ?? 'failed') : null,
    },
  };
}
