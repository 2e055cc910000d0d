-- Luma's states: pending (the spec's sample) → dreaming → completed | failed.
ALTER TYPE "generation_state" RENAME VALUE 'processing' TO 'dreaming';

-- Luma's create parameters, validated, echoed and honoured.
ALTER TABLE "video_generations" ADD COLUMN "model" VARCHAR(32) NOT NULL DEFAULT 'ray-2';
ALTER TABLE "video_generations" ADD COLUMN "resolution" VARCHAR(8);
ALTER TABLE "video_generations" ADD COLUMN "duration" VARCHAR(8);
ALTER TABLE "video_generations" ADD COLUMN "concepts" JSONB;

-- Kling's watermark_info.enabled: each result also gets a watermarked copy.
ALTER TABLE "expand_tasks" ADD COLUMN "watermark" BOOLEAN NOT NULL DEFAULT false;

-- The base of the request that created the task: result links use it (or PUBLIC_BASE_URL), never a guess.
ALTER TABLE "expand_tasks" ADD COLUMN "base_url" VARCHAR(512);
ALTER TABLE "video_generations" ADD COLUMN "base_url" VARCHAR(512);
ALTER TABLE "audio_uploads" ADD COLUMN "base_url" VARCHAR(512);
