import { readFile } from 'node:fs/promises';
import { TaskFailure } from '../../common/tasks/task-kind.js';
import { measureAudio, withPinnedAudio } from '../../infra/ffmpeg/audio-decode.js';
import { sniffAudioFile } from '../../infra/ffmpeg/media-format.js';
import type { CpuSlots } from '../../infra/process/cpu-slots.js';
import { MUSIC_FORMATS, type MusicFormat, type MusicSource } from '../../vendors/contracts/music-vendor.js';
import { UnusableAnswer } from '../../vendors/contracts/vendor.js';
import { CLIP_AUDIO_ROLE } from '../clips/clip-media.js';
import type { ClipsRepository } from '../clips/clips.repository.js';
import type { MediaService } from '../media/media.service.js';
import type { MediaRow } from '../media/media.repository.js';

/** Longest clip split (its file is decoded, its format pinned, to measure it): an hour. */
export const MAX_CLIP_S = 3600;

/** The stored audio of clip `clipId` (its task's media row); a TaskFailure-worthy UnusableAnswer once it is gone. */
export async function clipAudioRow(clips: ClipsRepository, media: MediaService, clipId: string): Promise<MediaRow> {
  const clip = await clips.findById(clipId);
  const row = clip && (await media.findForTask(clip.taskId, CLIP_AUDIO_ROLE, clip.idx));
  if (!row) throw new UnusableAnswer(`the audio of clip ${clipId} is no longer stored`);
  return row;
}

/**
 * clipAudioRow for a step the gateway runs itself: a clip whose audio is gone ends the task (TaskFailure); any
 * other error is thrown as it is, so that the runner tells a database outage from the task's fault (the task
 * is put back and runs again when the database answers, rather than failing on a connection error).
 */
export async function clipAudioRowOrFailure(clips: ClipsRepository, media: MediaService, clipId: string): Promise<MediaRow> {
  try {
    return await clipAudioRow(clips, media, clipId);
  } catch (err) {
    if (err instanceof UnusableAnswer) throw new TaskFailure(err.message);
    throw err;
  }
}

/** The clip split, as a vendor takes it: a signed link to our copy (for an hour), or its bytes with their format and length. */
export function clipSource(o: { clips: ClipsRepository; media: MediaService; cpu: CpuSlots; clipId: string; baseUrl: string | null; file: (prefix: string, ext: string) => string }): MusicSource {
  const row = () => clipAudioRow(o.clips, o.media, o.clipId);
  return {
    url: async () => o.media.signedUrl(await row(), o.media.linkBase(o.baseUrl)),
    bytes: async () => {
      const file = o.file('source', 'audio');
      if ((await o.media.copyToFile(await row(), file)) === null) throw new UnusableAnswer(`the audio of clip ${o.clipId} is no longer stored`);
      const sniff = await sniffAudioFile(file);
      const format: MusicFormat = sniff.ok && (MUSIC_FORMATS as readonly string[]).includes(sniff.format) ? (sniff.format as MusicFormat) : 'mp3';
      const durationS = (await withPinnedAudio(file, (pinned) => o.cpu.run(() => measureAudio(file, pinned, { maxS: MAX_CLIP_S })))).durationS;
      return { bytes: await readFile(file), format, durationS };
    },
  };
}
