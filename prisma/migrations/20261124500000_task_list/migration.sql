-- The cross-operation task list (GET /tasks, the console): an owner's tasks of every kind, newest first,
-- paged by a keyset on (created_at, id) — never OFFSET —, read backwards through this index.
CREATE INDEX "tasks_owner_created_at_id_idx" ON "tasks"("owner", "created_at", "id");
-- The same for the admin, over every owner.
CREATE INDEX "tasks_created_at_id_idx" ON "tasks"("created_at", "id");
-- A task found by its external id whatever its kind (and owner, for the admin): only tasks that have one.
CREATE INDEX "tasks_external_id_idx" ON "tasks"("external_id") WHERE "external_id" IS NOT NULL;

-- Requests and tasks refused by a per-owner limit (1302 rate, 1303 concurrency, 1102 credits), counted per
-- owner, UTC day and code; each instance adds what it refused about once a second (usage reports).
CREATE TABLE "limit_refusals" (
    "owner" VARCHAR(128) NOT NULL,
    "day" DATE NOT NULL,
    "code" INTEGER NOT NULL,
    "count" INTEGER NOT NULL,

    CONSTRAINT "limit_refusals_pkey" PRIMARY KEY ("owner", "day", "code")
);
-- Every owner's refusals over a range of days (the admin's usage report).
CREATE INDEX "limit_refusals_day_idx" ON "limit_refusals"("day");
