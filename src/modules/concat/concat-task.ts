import type { Task } from '../../common/tasks/task-kind.js';

/** One part of a joined song: a clip, kept from its start to cut_at seconds (null: whole). */
export interface ConcatPart {
  clip_id: string;
  /** Its task and place among the task's clips: where its audio is stored. */
  task_id: string;
  idx: number;
  type: string;
  cut_at: number | null;
}

/** A concat task's parameters document: its parts, resolved at acceptance, and what the song takes from its last part. */
export interface ConcatParams {
  /** The request: the last clip of a chain, or clips to join end to end. */
  clip_id: string | null;
  clip_ids: string[] | null;
  parts: ConcatPart[];
  /** Its clip's id (given at acceptance). */
  song_id: string;
  /** The last part's description, shown on the joined song (ClipDescription). */
  title: string | null;
  style: string | null;
  lyrics: string | null;
  model: string | null;
}

export type ConcatResult = Record<string, never>;

export type ConcatTask = Task<ConcatParams, ConcatResult>;
