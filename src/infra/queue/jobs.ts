import type { PolledStatus } from '../relay/upstream-client.js';

/** The jobs of the service's own machinery, with their payloads (ids only; handlers re-read the rows). */
export interface FixedJobPayloads {
  /** Send (one attempt of) a status notification to a callback_url. */
  'callback.deliver': { deliveryId: string };
  /** Every hour: delete result media older than RESULT_RETENTION_DAYS. */
  'media.retention': Record<string, never>;
}

/** The queue of a task kind: one step of one of its tasks per job (see taskJobName). */
export type TaskJobName = `${string}.run`;
export type JobName = keyof FixedJobPayloads | TaskJobName;
/** A task's step: its id, and what the poll that queued it read of its upstream task, when it read a status (SubmitMarks.polled). */
export type TaskJobPayload = { taskId: string; polled?: PolledStatus };
export type JobPayload<N extends JobName> = N extends keyof FixedJobPayloads ? FixedJobPayloads[N] : TaskJobPayload;

/** The queue of a task kind: `<kind>.run`, payload `{ taskId }`. */
export function taskJobName(kind: string): TaskJobName {
  return `${kind}.run`;
}

/**
 * Queue priorities (higher runs first). A new task's job gets minus the slots its owner already held when
 * it was accepted, so an owner with a backlog waits behind another owner's first task: fair share between
 * owners. The next step of a task that has started (polling an upstream, a take-over) comes before any
 * new work: it holds upstream capacity, and finishing it frees a slot.
 */
export const NEW_TASK_PRIORITY = 0;
export const RESUME_PRIORITY = 1_000_000;

export interface QueueSettings {
  /** pg-boss retries a handler that throws (an unexpected error), with backoff. */
  retryLimit: number;
  /** How long a job may stay active before pg-boss gives up on it; leases, not this, recover crashed tasks. */
  expireInSeconds: number;
}

/** Every task kind's queue. */
export const TASK_QUEUE: QueueSettings = { retryLimit: 5, expireInSeconds: 3600 };

/** The queues of these task kinds (by name), as the engine creates them at start. */
export function taskQueues(kinds: readonly string[]): [TaskJobName, QueueSettings][] {
  return kinds.map((kind) => [taskJobName(kind), TASK_QUEUE]);
}

export const FIXED_QUEUES: Record<keyof FixedJobPayloads, QueueSettings> = {
  'callback.deliver': { retryLimit: 3, expireInSeconds: 300 },
  'media.retention': { retryLimit: 1, expireInSeconds: 600 },
};

/** taskJobName in SQL, over a column (or expression) holding the kind. */
export function taskJobNameSql(kindColumn: string): string {
  return `(${kindColumn} || '.run')`;
}
