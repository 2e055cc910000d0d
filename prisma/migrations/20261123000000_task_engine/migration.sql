-- One task table for every operation (the task engine): the lifecycle columns are shared, what is
-- particular to a kind lives in `params` (its parameters, written once at acceptance) and `result` (the
-- facts a success stores), documents the kind writes and reads. Every row of the three old tables is
-- moved here with its id, so its media, callback deliveries, jobs and usage keep pointing at it.

CREATE TYPE "task_state" AS ENUM ('queued', 'running', 'succeeded', 'failed');

CREATE TABLE "tasks" (
    "id" UUID NOT NULL,
    "kind" VARCHAR(32) NOT NULL,
    "owner" VARCHAR(128) NOT NULL,
    "external_id" VARCHAR(256),
    "state" "task_state" NOT NULL DEFAULT 'queued',
    "message" TEXT,
    "params" JSONB NOT NULL DEFAULT '{}',
    "result" JSONB,
    "callback_url" TEXT,
    "base_url" VARCHAR(512),
    "parent_id" UUID,
    "channel_id" UUID,
    "slots" INTEGER NOT NULL DEFAULT 1,
    "credits" INTEGER NOT NULL DEFAULT 0,
    "attempts" INTEGER NOT NULL DEFAULT 0,
    "lease_owner" VARCHAR(64),
    "lease_until" TIMESTAMPTZ(3),
    "job_id" UUID,
    "upstream_id" VARCHAR(256),
    "submit_started_at" TIMESTAMPTZ(3),
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "updated_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "deadline_at" TIMESTAMPTZ(3) NOT NULL,
    "started_at" TIMESTAMPTZ(3),
    "finished_at" TIMESTAMPTZ(3),
    "media_expired_at" TIMESTAMPTZ(3),
    "deleted_at" TIMESTAMPTZ(3),

    CONSTRAINT "tasks_pkey" PRIMARY KEY ("id"),
    CONSTRAINT "tasks_params_object" CHECK (jsonb_typeof("params") = 'object')
);

-- Image expand: submitted → processing → succeed | failed.
INSERT INTO "tasks" (id, kind, owner, external_id, state, message, params, callback_url, base_url, slots, credits, attempts, lease_owner, lease_until, job_id,
                     upstream_id, submit_started_at, created_at, updated_at, deadline_at, started_at, finished_at, media_expired_at)
SELECT t.id, 'expand', t.owner, t.external_task_id,
       (CASE t.status WHEN 'submitted' THEN 'queued' WHEN 'processing' THEN 'running' WHEN 'succeed' THEN 'succeeded' ELSE 'failed' END)::"task_state",
       t.status_message,
       jsonb_strip_nulls(jsonb_build_object(
         'image_url', t.image_url, 'image_format', t.image_format, 'image_width', t.image_width, 'image_height', t.image_height,
         'up_ratio', t.up_ratio, 'bottom_ratio', t.bottom_ratio, 'left_ratio', t.left_ratio, 'right_ratio', t.right_ratio,
         'prompt', t.prompt, 'n', t.n, 'watermark', t.watermark)),
       t.callback_url, t.base_url, t.slots, t.credits, t.attempts, t.lease_owner, t.lease_until, t.job_id,
       t.upstream_id, t.submit_started_at, t.created_at, t.updated_at, t.deadline_at, t.started_at, t.finished_at, t.media_expired_at
FROM "expand_tasks" t;

-- Video generation: pending → dreaming → completed | failed; its keyframes become part of its parameters.
INSERT INTO "tasks" (id, kind, owner, state, message, params, callback_url, base_url, slots, credits, attempts, lease_owner, lease_until, job_id,
                     upstream_id, submit_started_at, created_at, updated_at, deadline_at, started_at, finished_at, media_expired_at, deleted_at)
SELECT g.id, 'video', g.owner,
       (CASE g.state WHEN 'pending' THEN 'queued' WHEN 'dreaming' THEN 'running' WHEN 'completed' THEN 'succeeded' ELSE 'failed' END)::"task_state",
       g.failure_reason,
       jsonb_strip_nulls(jsonb_build_object(
         'prompt', g.prompt, 'aspect_ratio', g.aspect_ratio, 'loop', g.loop, 'enhance', g.enhance, 'model', g.model,
         'resolution', g.resolution, 'duration', g.duration, 'concepts', g.concepts))
         || jsonb_build_object('keyframes', COALESCE((
              SELECT jsonb_agg(jsonb_strip_nulls(jsonb_build_object('id', k.id, 'position', k.position, 'type', k.kind, 'url', k.url, 'generation_id', k.source_generation_id)) ORDER BY k.position)
              FROM "video_keyframes" k WHERE k.generation_id = g.id), '[]'::jsonb)),
       g.callback_url, g.base_url, g.slots, g.credits, g.attempts, g.lease_owner, g.lease_until, g.job_id,
       g.upstream_id, g.submit_started_at, g.created_at, g.updated_at, g.deadline_at, g.started_at, g.finished_at, g.media_expired_at, g.deleted_at
FROM "video_generations" g;

-- Audio upload: pending (waiting or being fetched) → ready | failed. A pending upload a worker had started is running.
INSERT INTO "tasks" (id, kind, owner, state, message, params, result, base_url, slots, credits, attempts, lease_owner, lease_until, job_id,
                     upstream_id, submit_started_at, created_at, updated_at, deadline_at, started_at, finished_at, media_expired_at)
SELECT a.id, 'audio', a.owner,
       (CASE WHEN a.status = 'ready' THEN 'succeeded' WHEN a.status = 'failed' THEN 'failed'
             WHEN a.started_at IS NOT NULL OR a.lease_owner IS NOT NULL THEN 'running' ELSE 'queued' END)::"task_state",
       a.error,
       jsonb_build_object('url', a.url),
       CASE WHEN a.format IS NULL THEN NULL ELSE jsonb_strip_nulls(jsonb_build_object('format', a.format, 'duration', a.duration, 'size_bytes', a.size_bytes, 'sha256', a.sha256)) END,
       a.base_url, a.slots, a.credits, a.attempts, a.lease_owner, a.lease_until, a.job_id,
       a.upstream_id, a.submit_started_at, a.created_at, a.updated_at, a.deadline_at, a.started_at, a.finished_at, a.media_expired_at
FROM "audio_uploads" a;

-- The decoded input images of expand tasks stay expand's own detail table, now beside the one task table.
ALTER TABLE "expand_inputs" DROP CONSTRAINT "expand_inputs_task_id_fkey";
ALTER TABLE "expand_inputs" ADD CONSTRAINT "expand_inputs_task_id_fkey" FOREIGN KEY ("task_id") REFERENCES "tasks"("id") ON DELETE CASCADE ON UPDATE CASCADE;

DROP TABLE "video_keyframes";
DROP TABLE "expand_tasks";
DROP TABLE "video_generations";
DROP TABLE "audio_uploads";
DROP TYPE "expand_task_status";
DROP TYPE "generation_state";
DROP TYPE "keyframe_position";
DROP TYPE "keyframe_kind";
DROP TYPE "audio_upload_status";

-- Every task's job now carries { taskId } (the video and audio jobs named their ids otherwise). pg-boss
-- creates its schema at the service's first start, after the first migrations: only an existing one is updated.
DO $$
BEGIN
    IF to_regclass('pgboss.job') IS NOT NULL THEN
        UPDATE pgboss.job SET data = jsonb_build_object('taskId', data->>'generationId') WHERE name = 'video.run' AND data ? 'generationId';
        UPDATE pgboss.job SET data = jsonb_build_object('taskId', data->>'uploadId') WHERE name = 'audio.run' AND data ? 'uploadId';
    END IF;
END
$$;

-- An external id is unique per owner and kind (Kling's external_task_id).
CREATE UNIQUE INDEX "tasks_owner_kind_external_id_key" ON "tasks"("owner", "kind", "external_id");
-- An owner's tasks of a kind, newest first (lists), and by month (usage).
CREATE INDEX "tasks_owner_kind_created_at_idx" ON "tasks"("owner", "kind", "created_at");
-- The sweeper, the upstream caps and the orphan search read only unfinished tasks: a small index.
CREATE INDEX "tasks_kind_state_lease_until_idx" ON "tasks"("kind", "state", "lease_until") WHERE "state" IN ('queued', 'running');
-- Retention reads finished tasks whose media is still there.
CREATE INDEX "tasks_finished_at_idx" ON "tasks"("finished_at") WHERE "finished_at" IS NOT NULL AND "media_expired_at" IS NULL;
-- Usage of every owner by day reads a range of created_at (tasks are stored in creation order).
CREATE INDEX "tasks_created_at_idx" ON "tasks" USING brin ("created_at") WITH (autosummarize = on);

-- The owner's counters, locked until the end of the transaction; a missing row is rebuilt from the task
-- table first, leaving out p_exclude (tasks inserted alongside). Credits of another month read as 0.
CREATE FUNCTION "mgw_lock_counters"(p_owner VARCHAR, p_exclude UUID[], p_month CHAR(7), p_month_start TIMESTAMPTZ)
RETURNS TABLE (active_slots INTEGER, credits_used INTEGER)
LANGUAGE plpgsql AS $$
DECLARE
    v_slots INTEGER;
    v_month CHAR(7);
    v_credits INTEGER;
BEGIN
    SELECT c.active_slots, c.credits_month, c.credits_used INTO v_slots, v_month, v_credits
      FROM "owner_counters" c WHERE c.owner = p_owner FOR UPDATE;
    IF NOT FOUND THEN
        INSERT INTO "owner_counters" (owner, active_slots, credits_month, credits_used) VALUES (
            p_owner,
            (SELECT COALESCE(SUM(t.slots), 0) FROM "tasks" t WHERE t.owner = p_owner AND t.id <> ALL(p_exclude) AND t.state IN ('queued', 'running')),
            p_month,
            (SELECT COALESCE(SUM(t.credits), 0) FROM "tasks" t WHERE t.owner = p_owner AND t.id <> ALL(p_exclude) AND t.created_at >= p_month_start AND t.state <> 'failed'))
        ON CONFLICT (owner) DO NOTHING;
        SELECT c.active_slots, c.credits_month, c.credits_used INTO v_slots, v_month, v_credits
          FROM "owner_counters" c WHERE c.owner = p_owner FOR UPDATE;
    END IF;
    RETURN QUERY SELECT v_slots, CASE WHEN v_month = p_month THEN v_credits ELSE 0 END;
END
$$;

-- Admission of nothing (reading the counters under the rules of an admission), and of one task: see mgw_admit_tasks.
CREATE OR REPLACE FUNCTION "mgw_admit"(p_owner VARCHAR, p_slots INTEGER, p_credits INTEGER, p_max_slots INTEGER, p_max_credits INTEGER, p_month CHAR(7), p_month_start TIMESTAMPTZ)
RETURNS TABLE (admitted BOOLEAN, refusal TEXT, slots_before INTEGER, credits_before INTEGER)
LANGUAGE plpgsql AS $$
DECLARE
    v_slots INTEGER;
    v_credits INTEGER;
BEGIN
    SELECT c.active_slots, c.credits_used INTO v_slots, v_credits FROM mgw_lock_counters(p_owner, '{}', p_month, p_month_start) c;
    IF p_max_slots IS NOT NULL AND v_slots + p_slots > p_max_slots THEN
        RETURN QUERY SELECT false, 'concurrency'::TEXT, v_slots, v_credits;
        RETURN;
    END IF;
    IF p_max_credits IS NOT NULL AND v_credits + p_credits > p_max_credits THEN
        RETURN QUERY SELECT false, 'credits'::TEXT, v_slots, v_credits;
        RETURN;
    END IF;
    UPDATE "owner_counters" SET active_slots = v_slots + p_slots, credits_month = p_month, credits_used = v_credits + p_credits WHERE owner = p_owner;
    RETURN QUERY SELECT true, NULL::TEXT, v_slots, v_credits;
END
$$;

-- Admission of an owner's tasks, in order, inside the one statement that inserts them (the engine groups
-- an owner's concurrent submissions into one statement: the counter row is locked once for all of them).
-- Each task is admitted when the owner's held slots plus its slots stay within max_concurrent_tasks and
-- this month's credits plus its price within monthly_credits (the limits an admin stored, else the given
-- defaults; null: unlimited), counting the tasks admitted before it; a refused task is left out and does
-- not count. A counter row rebuilt from the task table leaves out p_task_ids (inserted alongside).
-- Returns, per task (ord: its position, from 1), whether it was admitted, why not, the counters before
-- it (the job's fair-share priority is minus slots_before) and the limits.
DROP FUNCTION "mgw_admit_task"(VARCHAR, UUID, INTEGER, INTEGER, INTEGER, INTEGER, CHAR(7), TIMESTAMPTZ);
CREATE FUNCTION "mgw_admit_tasks"(p_owner VARCHAR, p_task_ids UUID[], p_slots INTEGER[], p_credits INTEGER[], p_default_max_slots INTEGER, p_default_max_credits INTEGER, p_month CHAR(7), p_month_start TIMESTAMPTZ)
RETURNS TABLE (ord INTEGER, admitted BOOLEAN, refusal TEXT, slots_before INTEGER, credits_before INTEGER, max_slots INTEGER, max_credits INTEGER)
LANGUAGE plpgsql AS $$
DECLARE
    v_limits JSONB;
    v_max_slots INTEGER;
    v_max_credits INTEGER;
    v_slots INTEGER;
    v_credits INTEGER;
    i INTEGER;
BEGIN
    SELECT l.limits INTO v_limits FROM "owner_limits" l WHERE l.owner = p_owner;
    v_max_slots := mgw_owner_limit(v_limits, 'max_concurrent_tasks', p_default_max_slots);
    v_max_credits := mgw_owner_limit(v_limits, 'monthly_credits', p_default_max_credits);
    SELECT c.active_slots, c.credits_used INTO v_slots, v_credits FROM mgw_lock_counters(p_owner, p_task_ids, p_month, p_month_start) c;
    FOR i IN 1 .. COALESCE(array_length(p_task_ids, 1), 0) LOOP
        IF v_max_slots IS NOT NULL AND v_slots + p_slots[i] > v_max_slots THEN
            RETURN QUERY SELECT i, false, 'concurrency'::TEXT, v_slots, v_credits, v_max_slots, v_max_credits;
        ELSIF v_max_credits IS NOT NULL AND v_credits + p_credits[i] > v_max_credits THEN
            RETURN QUERY SELECT i, false, 'credits'::TEXT, v_slots, v_credits, v_max_slots, v_max_credits;
        ELSE
            RETURN QUERY SELECT i, true, NULL::TEXT, v_slots, v_credits, v_max_slots, v_max_credits;
            v_slots := v_slots + p_slots[i];
            v_credits := v_credits + p_credits[i];
        END IF;
    END LOOP;
    UPDATE "owner_counters" SET active_slots = v_slots, credits_month = p_month, credits_used = v_credits WHERE owner = p_owner;
END
$$;
