/** Every job the service runs: its name, and its payload (ids only; handlers re-read the rows). */
export interface JobPayloads {
  /** Run (or continue) an expand task: one step of work, safe to run twice. */
  'expand.run': { taskId: string };
  'video.run': { generationId: string };
  'audio.run': { uploadId: string };
  /** Send (one attempt of) a status notification to a callback_url. */
  'callback.deliver': { deliveryId: string };
  /** Every hour: delete result media older than RESULT_RETENTION_DAYS. */
  'media.retention': Record<string, never>;
}

export type JobName = keyof JobPayloads;

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

const TASK_QUEUE: QueueSettings = { retryLimit: 5, expireInSeconds: 3600 };
const MAINTENANCE_QUEUE: QueueSettings = { retryLimit: 1, expireInSeconds: 600 };

export const QUEUES: Record<JobName, QueueSettings> = {
  'expand.run': TASK_QUEUE,
  'video.run': TASK_QUEUE,
  'audio.run': TASK_QUEUE,
  'callback.deliver': { retryLimit: 3, expireInSeconds: 300 },
  'media.retention': MAINTENANCE_QUEUE,
};
