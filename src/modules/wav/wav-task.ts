import type { Task } from '../../common/tasks/task-kind.js';

/** The role of a WAV task's result among its media. */
export const WAV_ROLE = 'wav';

/** A WAV task's parameters document: the clip asked for, where its audio is stored, the door that asked. */
export interface WavParams {
  /** The door whose words render the task (the sunoapi.org-shaped door's: `sunoapi`). */
  door?: string;
  /** The music task the clip is a track of (the request's taskId). */
  music_task_id: string;
  /** The clip converted (the request's audioId). */
  clip_id: string;
  /** The stored audio converted, resolved at acceptance: its task, role and index (the take, or the whole track its door answered). */
  source: { task_id: string; role: string; index: number };
  /** Its duration as recorded, seconds (bounds the conversion's run time). */
  duration_s: number | null;
}

/** What a success stored beside its file: the WAV's duration, as recorded of its source. */
export interface WavResult {
  duration_s: number | null;
}

export type WavTask = Task<WavParams, WavResult>;
