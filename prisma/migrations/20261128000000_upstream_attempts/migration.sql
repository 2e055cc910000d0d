-- Failover after acceptance and upstream cost: each upstream task a task had is an attempt with the model it
-- asked for, the upstream's id and what it cost the company; a task knows when its current upstream task was
-- created (a channel's stall limit counts from there); a channel may set that limit.
ALTER TABLE "task_attempts" ADD COLUMN "model" VARCHAR(128);
ALTER TABLE "task_attempts" ADD COLUMN "upstream_id" VARCHAR(256);
ALTER TABLE "task_attempts" ADD COLUMN "cost" DOUBLE PRECISION;
ALTER TABLE "tasks" ADD COLUMN "upstream_since" TIMESTAMPTZ(3);
ALTER TABLE "channels" ADD COLUMN "stall_after_s" INTEGER;
