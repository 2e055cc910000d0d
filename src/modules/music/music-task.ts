import type { Task } from '../../common/tasks/task-kind.js';
import type { MusicModelName } from './music-models.js';

/** A music task's parameters document (tasks.params): the request as accepted, and the clip it continues. */
export interface MusicParams {
  prompt: string | null;
  gpt_description_prompt: string | null;
  tags: string | null;
  negative_tags: string | null;
  title: string | null;
  mv: MusicModelName;
  make_instrumental: boolean;
  /** The two clips it makes (ids given at acceptance, so a fetch lists them from the start). */
  clip_ids: [string, string];
  /** A continuation: the clip, the second it is cut at (its end when the request named none), and its kind of source. */
  continue_clip_id: string | null;
  continue_at: number | null;
  task: 'extend' | 'upload_extend' | null;
  /** The upstream's id of the continued clip (relay: what the continuation sends upstream). */
  continue_upstream_id: string | null;
  /** The channel that holds the continued clip (relay): the continuation goes to it (absent in tasks accepted before channels). */
  continue_channel_id?: string | null;
}

/** A success stores nothing but its clips' facts (in the clips table) and files (media). */
export type MusicResult = Record<string, never>;

export type MusicTask = Task<MusicParams, MusicResult>;
