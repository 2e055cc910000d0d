import { TaskFailure } from '../../src/common/tasks/task-kind.js';
import { isDatabaseUnavailable } from '../../src/infra/database/database-errors.js';
import type { ClipsRepository } from '../../src/modules/clips/clips.repository.js';
import type { MediaService } from '../../src/modules/media/media.service.js';
import { clipAudioRowOrFailure } from '../../src/modules/stems/stems-source.js';

const CLIP = '5b6c7d8e-9f0a-4b1c-8d2e-3f4a5b6c7d8e';
const row = { id: 'm1', taskId: 't1', role: 'clip', index: 0 };

function clipsWith(findById: () => Promise<unknown>): ClipsRepository {
  return { findById } as unknown as ClipsRepository;
}
function mediaWith(findForTask: () => Promise<unknown>): MediaService {
  return { findForTask } as unknown as MediaService;
}

/**
 * The stored audio a stems step splits (the sandbox's): a clip whose audio is gone is the task's failure; the
 * database going away is not (before, every error here became a TaskFailure, so a stems task running when the
 * database stopped ended failed with "connect ECONNREFUSED" instead of running again once it answered).
 */
describe('clipAudioRowOrFailure: what ends a stems task, and what puts it back', () => {
  it('answers the media row of a stored clip', async () => {
    await expect(clipAudioRowOrFailure(clipsWith(async () => ({ id: CLIP, taskId: 't1', idx: 0 })), mediaWith(async () => row), CLIP)).resolves.toBe(row);
  });

  it('a clip that is gone, or whose audio is no longer stored, fails the task (TaskFailure naming the clip)', async () => {
    for (const [clips, media] of [
      [clipsWith(async () => null), mediaWith(async () => row)],
      [clipsWith(async () => ({ id: CLIP, taskId: 't1', idx: 0 })), mediaWith(async () => null)],
    ] as const) {
      const err = await clipAudioRowOrFailure(clips, media, CLIP).catch((e: unknown) => e);
      expect(err).toBeInstanceOf(TaskFailure);
      expect((err as Error).message).toBe(`the audio of clip ${CLIP} is no longer stored`);
    }
  });

  it('a database that went away is thrown as it is, not as the task\'s failure: the runner puts the task back', async () => {
    const refused = Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:5432'), { code: 'ECONNREFUSED' });
    for (const [clips, media] of [
      [clipsWith(() => Promise.reject(refused)), mediaWith(async () => row)],
      [clipsWith(async () => ({ id: CLIP, taskId: 't1', idx: 0 })), mediaWith(() => Promise.reject(refused))],
    ] as const) {
      const err = await clipAudioRowOrFailure(clips, media, CLIP).catch((e: unknown) => e);
      expect(err).toBe(refused);
      expect(err).not.toBeInstanceOf(TaskFailure);
      expect(isDatabaseUnavailable(err)).toBe(true);
    }
  });
});
