import { Injectable } from '@nestjs/common';
import type { Principal } from '../../common/auth/credential.js';
import { AppError } from '../../common/errors/app-error.js';
import { assertComplete } from '../../modules/clips/clip-rules.js';
import { type ClipWords, ClipsRepository } from '../../modules/clips/clips.repository.js';
import type { ClipLyricsDto, ClipLyricsResultDto } from './dto/clip-lyrics.dto.js';

/**
 * A clip's lyrics timed word by word, in the shape of Suno's aligned lyrics (`aligned_words` of `word`, `success`,
 * `start_s`, `end_s`, `p_align`), for its owner: what its vendor timed (or the sandbox), kept with the clip when its
 * task succeeded. The words outlive the audio's retention (they are text in the clips table).
 */
@Injectable()
export class ClipLyricsService {
  constructor(private readonly clips: ClipsRepository) {}

  async timed(principal: Principal, clipId: string): Promise<ClipLyricsResultDto> {
    const clip = await this.clips.findWordsForOwner(principal.owner, clipId);
    if (!clip) throw new AppError('NOT_FOUND', `clip_id: there is no clip ${clipId} among yours`);
    assertComplete({ ...clip, mediaExpired: false }, 'clip_id');
    if (!clip.timedLyrics || clip.timedLyrics.length === 0) throw new AppError('NOT_FOUND', `clip_id: clip ${clip.id} has no timed lyrics: ${whyNone(clip)}`);
    return { code: 'success', message: '', data: alignedLyrics(clip) };
  }
}

/** Why a complete clip has no timed lyrics, in the door's words. */
function whyNone(clip: ClipWords): string {
  if (clip.type === 'upload') return 'it is an upload (the gateway times only the words of songs made here)';
  if (clip.type === 'concat') return 'it is a joined song (each part keeps its own: ask for its parts)';
  if (clip.params.instrumental === true) return 'it is instrumental';
  return 'the model that made it gave no word timing';
}

/** A clip's timed words as Suno's aligned lyrics answer them. */
export function alignedLyrics(clip: Pick<ClipWords, 'id' | 'title' | 'lyrics' | 'duration' | 'timedLyrics'>): ClipLyricsDto {
  return {
    clip_id: clip.id,
    title: clip.title,
    lyrics: clip.lyrics,
    duration: clip.duration,
    aligned_words: (clip.timedLyrics ?? []).map((w) => ({ word: w.word, success: true, start_s: w.startS, end_s: w.endS, p_align: 1 })),
  };
}
