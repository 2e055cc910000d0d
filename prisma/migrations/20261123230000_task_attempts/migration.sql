-- Every create request a task sent to a channel, and what came of it: kept for admins.
CREATE TABLE "task_attempts" (
    "id" UUID NOT NULL,
    "task_id" UUID NOT NULL,
    "channel_id" UUID,
    "at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "outcome" VARCHAR(16) NOT NULL,
    "message" TEXT,

    CONSTRAINT "task_attempts_pkey" PRIMARY KEY ("id")
);

CREATE INDEX "task_attempts_task_id_idx" ON "task_attempts"("task_id");

ALTER TABLE "task_attempts" ADD CONSTRAINT "task_attempts_task_id_fkey" FOREIGN KEY ("task_id") REFERENCES "tasks"("id") ON DELETE CASCADE ON UPDATE CASCADE;
