import type { Task } from '../../common/tasks/task-kind.js';

/**
 * A music task's parameters document (tasks.params), in the gateway's own words: what the song is (lyrics,
 * or a description to write them from; a style and a style to avoid; a title), the model, whether it is
 * instrumental, the two clips it makes, and the clip it continues. A door maps its request into it (the
 * Suno-style door's prompt, gpt_description_prompt, tags, negative_tags, mv, make_instrumental, continue_*);
 * a vendor's adapter maps it out (`MusicRequest`).
 */
export interface MusicParams {
  lyrics: string | null;
  description: string | null;
  style: string | null;
  avoid_style: string | null;
  title: string | null;
  /** The model named (the name callers use); null: any configured model that makes what is asked. */
  model: string | null;
  instrumental: boolean;
  /** How long the song is to last, in seconds, for a model that takes a duration; null (or absent, in tasks from before): the model decides. */
  duration_s?: number | null;
  /**
   * The clips it makes (ids given at acceptance, so a fetch lists them from the start): as many as the most any
   * model that could make it makes; a task a one-take model made keeps one, the others dropped when it ends.
   */
  clip_ids: string[];
  /** The clip it continues, or null for a new song. */
  continues: MusicContinuation | null;
  /**
   * A continuation whose takes are also made whole: the continued clip up to `continues.at_s`, then the take (the
   * sunoapi.org family's upload-extend answers that track); absent or false: the takes alone, as Suno's extends.
   */
  whole_track?: boolean;
}

/** The clip a continuation continues. */
export interface MusicContinuation {
  clip_id: string;
  /** The second it is cut at (its end when the request named none). */
  at_s: number | null;
  /** It is an upload (a vendor continues an upload its own way), not a take or a joined song. */
  from_upload: boolean;
  /** The vendor's id of that clip (relay: what the continuation names upstream), and the channel that holds it. */
  upstream_clip_id: string | null;
  channel_id: string | null;
}

/**
 * A success stores its clips' facts (in the clips table) and files (media); with `whole_track`, each take's whole
 * track's duration (seconds, in the order of its takes; its audio is the media of role `whole`).
 */
export interface MusicResult {
  whole_durations_s?: number[];
}

export type MusicTask = Task<MusicParams, MusicResult>;
