import { Injectable } from '@nestjs/common';
import type { Principal } from '../../common/auth/credential.js';
import { AppError } from '../../common/errors/app-error.js';
import { TaskRepository } from '../../common/tasks/task.repository.js';
import { assertComplete } from '../../modules/clips/clip-rules.js';
import type { TimedWord } from '../../modules/clips/clip-lyrics.js';
import { ClipsRepository } from '../../modules/clips/clips.repository.js';
import { MusicKind } from '../../modules/music/music.kind.js';
import type { SunoapiTimestampedLyricsDto } from './dto/sunoapi-lyrics.dto.js';
import type { SunoapiMusicTask } from './sunoapi-music.records.js';

/**
 * docs.sunoapi.org's Get Timestamped Lyrics over the words kept with each take (what its vendor timed, or the
 * sandbox): a take of one of the caller's music tasks, whichever door made it, its words timed on the track that
 * door's record answers (an upload-extend's whole track: from its cut). A take without timed words answers as
 * theirs does for an instrumental: no words. The words outlive the audio's retention.
 */
@Injectable()
export class SunoapiLyricsService {
  constructor(
    private readonly tasks: TaskRepository,
    private readonly clips: ClipsRepository,
  ) {}

  async timestamped(principal: Principal, taskId: string, audioId: string): Promise<SunoapiTimestampedLyricsDto> {
    const task = await this.tasks.findForOwner<SunoapiMusicTask['params'], SunoapiMusicTask['result']>(MusicKind.definition.name, principal.owner, taskId);
    if (!task) throw new AppError('NOT_FOUND', `taskId: there is no music task ${taskId} among yours`);
    const clip = await this.clips.findWordsForOwner(principal.owner, audioId);
    if (!clip || clip.taskId !== task.id) throw new AppError('NOT_FOUND', `audioId: task ${task.id} has no take ${audioId} (its takes are the ids in its record's response.sunoData)`);
    assertComplete({ ...clip, mediaExpired: false }, 'audioId');
    // an upload-extend's record answers whole tracks (the upload up to the cut, then the take): its words are timed on them
    const shiftS = task.result?.whole_durations_s && task.params.continues?.at_s ? task.params.continues.at_s : 0;
    return { code: 200, msg: 'success', data: { alignedWords: alignedWords(clip.timedLyrics ?? [], shiftS), waveformData: [], hootCer: 0, isStreamed: false } };
  }
}

/** A take's kept words in their alignedWords, shifted by `shiftS` (the start of the take in the track answered). */
export function alignedWords(words: readonly TimedWord[], shiftS = 0) {
  const ms = (s: number) => Math.round(s * 1000) / 1000;
  return words.map((w) => ({ word: w.word, success: true, startS: ms(w.startS + shiftS), endS: ms(w.endS + shiftS), palign: 1 }));
}
