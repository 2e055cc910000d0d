/** What a music or concat task's parameters say of its clips (an upload's say none of it). */
export interface ClipDescription {
  title?: string | null;
  style?: string | null;
  avoid_style?: string | null;
  lyrics?: string | null;
  description?: string | null;
  model?: string | null;
  /** A concat's parts, in order. */
  parts?: { clip_id: string; type: string; cut_at: number | null }[];
}

/** gen: a take (a new song or a continuation); upload; concat: a joined song; stem: one stem split from a clip (its task's parent). */
export const CLIP_TYPES = ['gen', 'upload', 'concat', 'stem'] as const;
export type ClipType = (typeof CLIP_TYPES)[number];

/** Role of a clip's audio among its task's media (index: the clip's place), and of its cover. */
export const CLIP_AUDIO_ROLE = 'clip';
export const CLIP_COVER_ROLE = 'cover';
