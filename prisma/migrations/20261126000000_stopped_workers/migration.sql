-- Workers that drained and stopped (SIGTERM). A claim of theirs that was still in flight when they handed
-- their tasks back may land afterwards; the sweeper of any other instance takes such a task back at once,
-- instead of waiting for its lease to run out.
CREATE TABLE "stopped_workers" (
    "worker" VARCHAR(64) NOT NULL,
    "stopped_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "stopped_workers_pkey" PRIMARY KEY ("worker")
);

-- The sweeper finds the running tasks of a stopped worker through this index (a few rows per deploy).
CREATE INDEX "tasks_lease_owner_idx" ON "tasks"("lease_owner") WHERE "state" = 'running';
