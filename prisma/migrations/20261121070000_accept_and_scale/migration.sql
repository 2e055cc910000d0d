-- The limits of an owner as a JSON object of effective values: what an admin stored, else the given
-- defaults (the DEFAULT_* settings); a JSON null is unlimited.
CREATE FUNCTION "mgw_owner_limit"(p_limits JSONB, p_key TEXT, p_default INTEGER)
RETURNS INTEGER LANGUAGE sql IMMUTABLE AS $$
    SELECT CASE WHEN p_limits ? p_key THEN (p_limits->>p_key)::int ELSE p_default END
$$;

-- Admission of a new task inside the one statement that inserts it (see insertAdmittedTask): the owner's
-- limits are read here, so an admin's change applies to the very next submission on every instance. A
-- refusal raises (SQLSTATE MGW01, DETAIL: the refusal, the counters and the limits as JSON), which undoes
-- the whole statement; a counter row rebuilt from the task tables leaves out p_task_id (inserted
-- alongside). Returns the counters before this task (the job's fair-share priority is minus slots_before).
CREATE FUNCTION "mgw_admit_task"(p_owner VARCHAR, p_task_id UUID, p_slots INTEGER, p_credits INTEGER, p_default_max_slots INTEGER, p_default_max_credits INTEGER, p_month CHAR(7), p_month_start TIMESTAMPTZ)
RETURNS TABLE (slots_before INTEGER, credits_before INTEGER)
LANGUAGE plpgsql AS $$
DECLARE
    v_limits JSONB;
    v_max_slots INTEGER;
    v_max_credits INTEGER;
    v_slots INTEGER;
    v_month CHAR(7);
    v_credits INTEGER;
    v_refusal TEXT;
BEGIN
    SELECT l.limits INTO v_limits FROM "owner_limits" l WHERE l.owner = p_owner;
    v_max_slots := mgw_owner_limit(v_limits, 'max_concurrent_tasks', p_default_max_slots);
    v_max_credits := mgw_owner_limit(v_limits, 'monthly_credits', p_default_max_credits);
    SELECT c.active_slots, c.credits_month, c.credits_used INTO v_slots, v_month, v_credits
      FROM "owner_counters" c WHERE c.owner = p_owner FOR UPDATE;
    IF NOT FOUND THEN
        INSERT INTO "owner_counters" (owner, active_slots, credits_month, credits_used) VALUES (
            p_owner,
            (SELECT COALESCE(SUM(t.slots), 0) FROM "expand_tasks" t WHERE t.owner = p_owner AND t.id <> p_task_id AND t.status IN ('submitted', 'processing'))
              + (SELECT COALESCE(SUM(t.slots), 0) FROM "video_generations" t WHERE t.owner = p_owner AND t.id <> p_task_id AND t.state IN ('pending', 'dreaming'))
              + (SELECT COALESCE(SUM(t.slots), 0) FROM "audio_uploads" t WHERE t.owner = p_owner AND t.id <> p_task_id AND t.status = 'pending'),
            p_month,
            (SELECT COALESCE(SUM(t.credits), 0) FROM "expand_tasks" t WHERE t.owner = p_owner AND t.id <> p_task_id AND t.created_at >= p_month_start AND t.status <> 'failed')
              + (SELECT COALESCE(SUM(t.credits), 0) FROM "video_generations" t WHERE t.owner = p_owner AND t.id <> p_task_id AND t.created_at >= p_month_start AND t.state <> 'failed')
              + (SELECT COALESCE(SUM(t.credits), 0) FROM "audio_uploads" t WHERE t.owner = p_owner AND t.id <> p_task_id AND t.created_at >= p_month_start AND t.status <> 'failed'))
        ON CONFLICT (owner) DO NOTHING;
        SELECT c.active_slots, c.credits_month, c.credits_used INTO v_slots, v_month, v_credits
          FROM "owner_counters" c WHERE c.owner = p_owner FOR UPDATE;
    END IF;
    IF v_month <> p_month THEN
        v_credits := 0; -- a new month
    END IF;
    IF v_max_slots IS NOT NULL AND v_slots + p_slots > v_max_slots THEN
        v_refusal := 'concurrency';
    ELSIF v_max_credits IS NOT NULL AND v_credits + p_credits > v_max_credits THEN
        v_refusal := 'credits';
    END IF;
    IF v_refusal IS NOT NULL THEN
        RAISE EXCEPTION 'admission refused: %', v_refusal USING ERRCODE = 'MGW01',
            DETAIL = json_build_object('refusal', v_refusal, 'slots_before', v_slots, 'credits_before', v_credits, 'max_slots', v_max_slots, 'max_credits', v_max_credits)::text;
    END IF;
    UPDATE "owner_counters" SET active_slots = v_slots + p_slots, credits_month = p_month, credits_used = v_credits + p_credits WHERE owner = p_owner;
    RETURN QUERY SELECT v_slots, v_credits;
END
$$;

-- A grant of requests from the owner's one-minute window (see RateLimiter): an instance takes up to
-- p_want requests at once, never more than a sixteenth of what is left (so near the limit it takes one
-- at a time and the count stays exact across instances), and gives back what it did not use of its last
-- grant in the same window. Past the limit it is granted nothing, and the refused request is counted.
-- An owner without a rate limit (NULL) is not counted at all.
CREATE FUNCTION "mgw_rate_take"(p_owner VARCHAR, p_default_rpm INTEGER, p_want INTEGER, p_give_back INTEGER, p_give_back_window TIMESTAMPTZ, p_window_s INTEGER)
RETURNS TABLE (rpm INTEGER, granted INTEGER, counted INTEGER, window_start TIMESTAMPTZ, reset_ms INTEGER)
LANGUAGE plpgsql AS $$
DECLARE
    v_rpm INTEGER;
    v_start TIMESTAMPTZ;
    v_count INTEGER;
    v_grant INTEGER;
BEGIN
    SELECT mgw_owner_limit(l.limits, 'requests_per_minute', p_default_rpm) INTO v_rpm FROM "owner_limits" l WHERE l.owner = p_owner;
    IF NOT FOUND THEN
        v_rpm := p_default_rpm;
    END IF;
    IF v_rpm IS NULL THEN
        RETURN QUERY SELECT NULL::INTEGER, 0, 0, NULL::TIMESTAMPTZ, NULL::INTEGER;
        RETURN;
    END IF;
    INSERT INTO "rate_windows" (owner, window_start, count) VALUES (p_owner, now(), 0) ON CONFLICT (owner) DO NOTHING;
    SELECT w.window_start, w.count INTO v_start, v_count FROM "rate_windows" w WHERE w.owner = p_owner FOR UPDATE;
    IF v_start <= now() - make_interval(secs => p_window_s) THEN
        v_start := now();
        v_count := 0;
    ELSIF p_give_back > 0 AND v_start = p_give_back_window THEN
        v_count := GREATEST(0, v_count - p_give_back);
    END IF;
    IF v_count >= v_rpm THEN
        v_grant := 0;
        v_count := v_count + 1;
    ELSE
        v_grant := LEAST(GREATEST(p_want, 1), GREATEST(1, (v_rpm - v_count) / 16));
        v_count := v_count + v_grant;
    END IF;
    UPDATE "rate_windows" SET window_start = v_start, count = v_count WHERE owner = p_owner;
    RETURN QUERY SELECT v_rpm, v_grant, v_count, v_start,
        GREATEST(1, ceil(extract(epoch FROM v_start + make_interval(secs => p_window_s) - now()) * 1000))::INTEGER;
END
$$;

-- Images and media are compressed formats already (PNG, JPEG, MP4): stored out of line without
-- PostgreSQL trying (and failing) to compress them again, which costs CPU on every write.
ALTER TABLE "expand_inputs" ALTER COLUMN "bytes" SET STORAGE EXTERNAL;
ALTER TABLE "media_blobs" ALTER COLUMN "bytes" SET STORAGE EXTERNAL;

-- Retention looks for finished tasks whose media is still there: only those are in these indexes, so
-- the hourly sweep reads what it changes, not every task ever stored.
CREATE INDEX "expand_tasks_finished_at_idx" ON "expand_tasks" ("finished_at") WHERE "finished_at" IS NOT NULL AND "media_expired_at" IS NULL;
CREATE INDEX "video_generations_finished_at_idx" ON "video_generations" ("finished_at") WHERE "finished_at" IS NOT NULL AND "media_expired_at" IS NULL;

-- Usage of every owner by day reads a range of created_at. BRIN: tasks are stored in the order they are
-- created, so a summary per range of pages finds them, in an index of a few pages that inserts barely touch.
CREATE INDEX "expand_tasks_created_at_idx" ON "expand_tasks" USING brin ("created_at") WITH (autosummarize = on);
CREATE INDEX "video_generations_created_at_idx" ON "video_generations" USING brin ("created_at") WITH (autosummarize = on);
CREATE INDEX "audio_uploads_created_at_idx" ON "audio_uploads" USING brin ("created_at") WITH (autosummarize = on);
