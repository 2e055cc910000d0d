-- How long each create request took (a channel's p50 over the last 5 minutes), read by channel and time.
ALTER TABLE "task_attempts" ADD COLUMN "latency_ms" INTEGER;
ALTER TABLE "task_attempts" ALTER COLUMN "task_id" DROP NOT NULL;
CREATE INDEX "task_attempts_channel_id_at_idx" ON "task_attempts"("channel_id", "at");

-- When the periodic test last ran on a channel (one instance claims each test).
ALTER TABLE "channels" ADD COLUMN "tested_at" TIMESTAMPTZ(3);
