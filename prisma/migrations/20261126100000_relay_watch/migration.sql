-- The relay layer: a task created upstream and not final is watched (a row of task_watches, which the
-- pollers of every worker instance take in batches), not re-queued as a job for every poll; the caps
-- (a channel's max_running, an operation's <OP>_MAX_RUNNING) are read from counters kept by the
-- statements that start and end tasks, not counted under a lock.

-- Whether the task's create asked the upstream to call back (UPSTREAM_CALLBACK_BASE_URL): its polls are then a slow safety net.
ALTER TABLE "tasks" ADD COLUMN "upstream_callback" BOOLEAN NOT NULL DEFAULT false;

CREATE TABLE "task_watches" (
    "task_id" UUID NOT NULL,
    "kind" VARCHAR(32) NOT NULL,
    "channel_id" UUID,
    "poll_at" TIMESTAMPTZ(3) NOT NULL,
    "lease_owner" VARCHAR(64),
    "lease_until" TIMESTAMPTZ(3),
    "callback_pending" BOOLEAN NOT NULL DEFAULT false,
    "min_poll_s" DOUBLE PRECISION NOT NULL DEFAULT 0,
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "task_watches_pkey" PRIMARY KEY ("task_id"),
    CONSTRAINT "task_watches_task_id_fkey" FOREIGN KEY ("task_id") REFERENCES "tasks"("id") ON DELETE CASCADE ON UPDATE CASCADE
);
CREATE INDEX "task_watches_poll_at_idx" ON "task_watches"("poll_at");

-- Tasks waiting for a channel (busy: postponed, nothing sent upstream), oldest first: the one woken when a slot frees.
CREATE INDEX "tasks_kind_created_at_idx" ON "tasks"("kind", "created_at") WHERE "state" = 'running' AND "lease_owner" IS NULL AND "upstream_id" IS NULL;

-- A channel whose upstream refused polls (429, Retry-After) is not polled before this.
ALTER TABLE "channels" ADD COLUMN "polls_paused_until" TIMESTAMPTZ(3);

-- Unfinished tasks (queued or running) each channel holds, and running tasks of each kind.
ALTER TABLE "channels" ADD COLUMN "running_tasks" INTEGER NOT NULL DEFAULT 0;
CREATE TABLE "kind_counters" (
    "kind" VARCHAR(32) NOT NULL,
    "running" INTEGER NOT NULL DEFAULT 0,

    CONSTRAINT "kind_counters_pkey" PRIMARY KEY ("kind")
);

UPDATE "channels" c SET "running_tasks" = n.count
  FROM (SELECT channel_id, count(*)::int AS count FROM "tasks" WHERE "state" IN ('queued', 'running') AND channel_id IS NOT NULL GROUP BY channel_id) n
  WHERE c.id = n.channel_id;
INSERT INTO "kind_counters" ("kind", "running") SELECT "kind", count(*)::int FROM "tasks" WHERE "state" = 'running' GROUP BY "kind";

-- The counters follow every statement that changes tasks' states or channels, in that statement. Counter
-- rows are locked kinds first, then channels, each in key order, so statements that change many tasks at
-- once never deadlock on them. A task is inserted queued and without a channel (it changes no counter).
CREATE FUNCTION mgw_count_task_updates() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
  r record;
BEGIN
  IF NOT EXISTS (SELECT 1 FROM old_rows o JOIN new_rows n ON n.id = o.id WHERE o.state IS DISTINCT FROM n.state OR o.channel_id IS DISTINCT FROM n.channel_id) THEN
    RETURN NULL;
  END IF;
  FOR r IN
    SELECT d.kind, sum(d.delta)::int AS delta FROM (
      SELECT o.kind, -1 AS delta FROM old_rows o WHERE o.state = 'running'
      UNION ALL SELECT n.kind, 1 FROM new_rows n WHERE n.state = 'running') d
    GROUP BY d.kind HAVING sum(d.delta) <> 0 ORDER BY d.kind
  LOOP
    INSERT INTO kind_counters AS k (kind, running) VALUES (r.kind, r.delta) ON CONFLICT (kind) DO UPDATE SET running = k.running + EXCLUDED.running;
  END LOOP;
  FOR r IN
    SELECT d.channel_id, sum(d.delta)::int AS delta FROM (
      SELECT o.channel_id, -1 AS delta FROM old_rows o WHERE o.channel_id IS NOT NULL AND o.state IN ('queued', 'running')
      UNION ALL SELECT n.channel_id, 1 FROM new_rows n WHERE n.channel_id IS NOT NULL AND n.state IN ('queued', 'running')) d
    GROUP BY d.channel_id HAVING sum(d.delta) <> 0 ORDER BY d.channel_id
  LOOP
    UPDATE channels SET running_tasks = running_tasks + r.delta WHERE id = r.channel_id;
  END LOOP;
  RETURN NULL;
END $$;

CREATE FUNCTION mgw_count_task_deletes() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
  r record;
BEGIN
  FOR r IN SELECT o.kind, count(*)::int AS n FROM old_rows o WHERE o.state = 'running' GROUP BY o.kind ORDER BY o.kind LOOP
    UPDATE kind_counters SET running = running - r.n WHERE kind = r.kind;
  END LOOP;
  FOR r IN SELECT o.channel_id, count(*)::int AS n FROM old_rows o WHERE o.channel_id IS NOT NULL AND o.state IN ('queued', 'running') GROUP BY o.channel_id ORDER BY o.channel_id LOOP
    UPDATE channels SET running_tasks = running_tasks - r.n WHERE id = r.channel_id;
  END LOOP;
  RETURN NULL;
END $$;

CREATE TRIGGER "tasks_count_updates" AFTER UPDATE ON "tasks" REFERENCING OLD TABLE AS old_rows NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION mgw_count_task_updates();
CREATE TRIGGER "tasks_count_deletes" AFTER DELETE ON "tasks" REFERENCING OLD TABLE AS old_rows FOR EACH STATEMENT EXECUTE FUNCTION mgw_count_task_deletes();
