import type { Task } from '../../common/tasks/task-kind.js';

/** An upload's parameters document (tasks.params). */
export interface AudioParams {
  url: string;
}

/** What the clip turned out to be (tasks.result), once ready. */
export interface AudioResult {
  format: string;
  /** Seconds. */
  duration: number;
  size_bytes: number;
  sha256: string;
}

export type AudioTask = Task<AudioParams, AudioResult>;
