import type { Task } from '../../common/tasks/task-kind.js';
import type { LyricsRequest, LyricsText } from '../../vendors/contracts/lyrics-vendor.js';

/**
 * A lyrics task's parameters document: the normalized request itself (LyricsRequest, the gateway's own words),
 * and the door it came through. A door maps its body into it; an adapter maps it out to its vendor.
 */
export type LyricsParams = LyricsRequest & { door: string };

/** One version of the lyrics, as a success stores it. */
export interface LyricsVersion {
  title: string | null;
  text: string;
  /** The styles the vendor suggests for the song; null where it gives none. */
  style: string | null;
}

/** What a success stores: the versions written (the words are the result: no media). */
export interface LyricsResult {
  versions: LyricsVersion[];
}

export type LyricsTask = Task<LyricsParams, LyricsResult>;

/** The normalized request of a stored task. */
export function lyricsRequestOf(params: LyricsParams): LyricsRequest {
  return { prompt: params.prompt, model: params.model };
}

/** A vendor's (or the sandbox's) lyrics as they are stored. */
export function versionsOf(lyrics: readonly LyricsText[]): LyricsVersion[] {
  return lyrics.map((l) => ({ title: l.title, text: l.text, style: l.style ?? null }));
}
