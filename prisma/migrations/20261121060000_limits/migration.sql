-- Limits an admin set for an owner: exactly the keys given (PUT /admin/owners/{owner}/limits).
-- A key that is absent means the default (DEFAULT_* settings); a null value means unlimited.
CREATE TABLE "owner_limits" (
    "owner" VARCHAR(128) NOT NULL,
    "limits" JSONB NOT NULL DEFAULT '{}',
    "updated_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "owner_limits_pkey" PRIMARY KEY ("owner")
);

-- The current minute's request count of each owner (rate limit), shared by every instance.
-- Unlogged: written on every request without waiting for the WAL; a crash only resets the windows.
CREATE UNLOGGED TABLE "rate_windows" (
    "owner" VARCHAR(128) NOT NULL,
    "window_start" TIMESTAMPTZ(3) NOT NULL,
    "count" INTEGER NOT NULL,

    CONSTRAINT "rate_windows_pkey" PRIMARY KEY ("owner")
);

-- Slots each owner's unfinished tasks hold, and credits used this month, kept here so admission is one
-- row lock; a missing row is rebuilt from the task rows. Logged: the task insert that comes with each
-- change commits to the WAL anyway, and deleted generations still count.
CREATE TABLE "owner_counters" (
    "owner" VARCHAR(128) NOT NULL,
    "active_slots" INTEGER NOT NULL,
    "credits_month" CHAR(7) NOT NULL,
    "credits_used" INTEGER NOT NULL,

    CONSTRAINT "owner_counters_pkey" PRIMARY KEY ("owner")
);

-- What each task holds (slots, from acceptance until it is final), what it was charged, and when it started.
ALTER TABLE "expand_tasks" ADD COLUMN "slots" INTEGER NOT NULL DEFAULT 1, ADD COLUMN "credits" INTEGER NOT NULL DEFAULT 0, ADD COLUMN "started_at" TIMESTAMPTZ(3);
ALTER TABLE "video_generations" ADD COLUMN "slots" INTEGER NOT NULL DEFAULT 1, ADD COLUMN "credits" INTEGER NOT NULL DEFAULT 0, ADD COLUMN "started_at" TIMESTAMPTZ(3);
ALTER TABLE "audio_uploads" ADD COLUMN "slots" INTEGER NOT NULL DEFAULT 1, ADD COLUMN "credits" INTEGER NOT NULL DEFAULT 0, ADD COLUMN "started_at" TIMESTAMPTZ(3);
UPDATE "expand_tasks" SET "slots" = "n";
-- Tasks that had started before: their deadline already ran from then.
UPDATE "expand_tasks" SET "started_at" = "updated_at" WHERE "attempts" > 0;
UPDATE "video_generations" SET "started_at" = "updated_at" WHERE "attempts" > 0;
UPDATE "audio_uploads" SET "started_at" = "updated_at" WHERE "attempts" > 0;

-- A deleted generation leaves the API but stays for usage and credits.
ALTER TABLE "video_generations" ADD COLUMN "deleted_at" TIMESTAMPTZ(3);

CREATE INDEX "expand_tasks_owner_status_idx" ON "expand_tasks"("owner", "status");
CREATE INDEX "video_generations_owner_state_idx" ON "video_generations"("owner", "state");
CREATE INDEX "audio_uploads_owner_status_idx" ON "audio_uploads"("owner", "status");

-- Admission of a new task, atomic across instances (the owner's counter row is locked): it fits when the
-- owner's held slots plus its slots stay within p_max_slots and this month's credits plus its price within
-- p_max_credits (null: unlimited). A missing counter row is rebuilt from the task tables first.
-- Returns whether it was admitted, why not ('concurrency' or 'credits'), and the counters before it.
CREATE FUNCTION "mgw_admit"(p_owner VARCHAR, p_slots INTEGER, p_credits INTEGER, p_max_slots INTEGER, p_max_credits INTEGER, p_month CHAR(7), p_month_start TIMESTAMPTZ)
RETURNS TABLE (admitted BOOLEAN, refusal TEXT, slots_before INTEGER, credits_before INTEGER)
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
            (SELECT COALESCE(SUM(t.slots), 0) FROM "expand_tasks" t WHERE t.owner = p_owner AND t.status IN ('submitted', 'processing'))
              + (SELECT COALESCE(SUM(t.slots), 0) FROM "video_generations" t WHERE t.owner = p_owner AND t.state IN ('pending', 'dreaming'))
              + (SELECT COALESCE(SUM(t.slots), 0) FROM "audio_uploads" t WHERE t.owner = p_owner AND t.status = 'pending'),
            p_month,
            (SELECT COALESCE(SUM(t.credits), 0) FROM "expand_tasks" t WHERE t.owner = p_owner AND t.created_at >= p_month_start AND t.status <> 'failed')
              + (SELECT COALESCE(SUM(t.credits), 0) FROM "video_generations" t WHERE t.owner = p_owner AND t.created_at >= p_month_start AND t.state <> 'failed')
              + (SELECT COALESCE(SUM(t.credits), 0) FROM "audio_uploads" t WHERE t.owner = p_owner AND t.created_at >= p_month_start AND t.status <> 'failed'))
        ON CONFLICT (owner) DO NOTHING;
        SELECT c.active_slots, c.credits_month, c.credits_used INTO v_slots, v_month, v_credits
          FROM "owner_counters" c WHERE c.owner = p_owner FOR UPDATE;
    END IF;
    IF v_month <> p_month THEN
        v_credits := 0; -- a new month
    END IF;
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
