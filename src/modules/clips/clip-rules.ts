import { AppError } from '../../common/errors/app-error.js';
import type { OwnedClip } from './clips.repository.js';

/** A clip a new task uses must be complete and still have its audio (410 once retention removed it). */
export function assertComplete(clip: OwnedClip, field: string): void {
  if (clip.state === 'failed') throw new AppError('INVALID_PARAMETER', `${field}: clip ${clip.id} failed; only a complete clip can be used`);
  if (clip.state !== 'succeeded') throw new AppError('INVALID_PARAMETER', `${field}: clip ${clip.id} is not complete yet (its task is still running); fetch it until its status is complete`);
  if (clip.mediaExpired) throw new AppError('GONE', `${field}: clip ${clip.id} has expired: its audio was removed after RESULT_RETENTION_DAYS`);
}
