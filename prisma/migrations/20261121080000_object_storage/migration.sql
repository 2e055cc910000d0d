-- Uploaded audio clips are kept in the media store (role 'clip'); retention deletes them like results.
ALTER TABLE "audio_uploads" ADD COLUMN "media_expired_at" TIMESTAMPTZ(3);

-- Retention reads the finished uploads whose clip is still there.
CREATE INDEX "audio_uploads_finished_at_idx" ON "audio_uploads" ("finished_at") WHERE "finished_at" IS NOT NULL AND "media_expired_at" IS NULL;
