-- The id of the last job sent for each task and delivery, so the sweeper can tell a task whose job
-- died (taken by a worker that was killed before claiming it) from one that is merely queued.
ALTER TABLE "expand_tasks" ADD COLUMN "job_id" UUID;
ALTER TABLE "video_generations" ADD COLUMN "job_id" UUID;
ALTER TABLE "audio_uploads" ADD COLUMN "job_id" UUID;
ALTER TABLE "callback_deliveries" ADD COLUMN "job_id" UUID;
