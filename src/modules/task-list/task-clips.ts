import type { Clip } from '../../generated/prisma/client.js';
import type { Task } from '../../common/tasks/task-kind.js';
import type { TimedWord } from '../clips/clip-lyrics.js';
import type { ClipDescription } from '../clips/clip-media.js';
import type { TaskClipDto } from './dto/task-summary.dto.js';

/** The clips a task's clips are made of (what each continues, a joined song's parts): the ids whose tasks are to be looked up. */
export function linkedClipIds(task: Pick<Task, 'params'>, clips: Pick<Clip, 'parentId'>[]): string[] {
  const parts = (task.params as ClipDescription).parts ?? [];
  return [...clips.flatMap((c) => (c.parentId ? [c.parentId] : [])), ...parts.map((p) => p.clip_id)];
}

/**
 * A task's clips as its detail shows them: each its place, type, duration, title and lyrics (its maker's, else
 * those asked), its timed lyrics, the clip it continues and a joined song's parts, each with the task that made
 * it (`taskOf`). A clip a one-take model left unmade (its task succeeded, it has no duration) is left out, as
 * the task's record leaves it out.
 */
export function taskClips(task: Pick<Task, 'state' | 'params'>, clips: Clip[], taskOf: Map<string, string>): TaskClipDto[] {
  const p = task.params as ClipDescription & { instrumental?: boolean };
  const asked = (value: unknown) => (typeof value === 'string' && value.trim() ? value : null);
  const parts = (p.parts ?? []).map((part) => ({ clip_id: part.clip_id, task_id: taskOf.get(part.clip_id) ?? null, at_s: part.cut_at }));
  return clips
    .filter((c) => !(task.state === 'succeeded' && c.duration === null))
    .map((c) => ({
      id: c.id,
      index: c.idx,
      type: c.type,
      duration: c.duration,
      title: c.title ?? asked(p.title),
      lyrics: c.lyrics ?? (c.type === 'gen' && p.instrumental !== true ? asked(p.lyrics) : null),
      timed_lyrics: Array.isArray(c.timedLyrics) ? (c.timedLyrics as unknown as TimedWord[]).map((w) => ({ word: w.word, start_s: w.startS, end_s: w.endS })) : null,
      continues: c.parentId ? { clip_id: c.parentId, task_id: taskOf.get(c.parentId) ?? null, at_s: c.continueAt } : null,
      parts: c.type === 'concat' ? parts : [],
    }));
}
