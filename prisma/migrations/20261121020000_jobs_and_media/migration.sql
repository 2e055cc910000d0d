-- AlterTable: deadlines, worker leases, upstream ids and media expiry on every task table.
-- Existing rows get a deadline of created_at + 1 hour.
ALTER TABLE "expand_tasks" ADD COLUMN "attempts" INTEGER NOT NULL DEFAULT 0,
ADD COLUMN "deadline_at" TIMESTAMPTZ(3),
ADD COLUMN "finished_at" TIMESTAMPTZ(3),
ADD COLUMN "lease_owner" VARCHAR(64),
ADD COLUMN "lease_until" TIMESTAMPTZ(3),
ADD COLUMN "media_expired_at" TIMESTAMPTZ(3),
ADD COLUMN "submit_started_at" TIMESTAMPTZ(3),
ADD COLUMN "upstream_id" VARCHAR(256);
UPDATE "expand_tasks" SET "deadline_at" = "created_at" + interval '1 hour';
ALTER TABLE "expand_tasks" ALTER COLUMN "deadline_at" SET NOT NULL;

-- AlterTable
ALTER TABLE "video_generations" ADD COLUMN "attempts" INTEGER NOT NULL DEFAULT 0,
ADD COLUMN "deadline_at" TIMESTAMPTZ(3),
ADD COLUMN "finished_at" TIMESTAMPTZ(3),
ADD COLUMN "lease_owner" VARCHAR(64),
ADD COLUMN "lease_until" TIMESTAMPTZ(3),
ADD COLUMN "media_expired_at" TIMESTAMPTZ(3),
ADD COLUMN "submit_started_at" TIMESTAMPTZ(3),
ADD COLUMN "upstream_id" VARCHAR(256);
UPDATE "video_generations" SET "deadline_at" = "created_at" + interval '1 hour';
ALTER TABLE "video_generations" ALTER COLUMN "deadline_at" SET NOT NULL;

-- AlterTable
ALTER TABLE "audio_uploads" ADD COLUMN "attempts" INTEGER NOT NULL DEFAULT 0,
ADD COLUMN "deadline_at" TIMESTAMPTZ(3),
ADD COLUMN "duration" DOUBLE PRECISION,
ADD COLUMN "finished_at" TIMESTAMPTZ(3),
ADD COLUMN "format" VARCHAR(64),
ADD COLUMN "lease_owner" VARCHAR(64),
ADD COLUMN "lease_until" TIMESTAMPTZ(3),
ADD COLUMN "sha256" CHAR(64),
ADD COLUMN "size_bytes" BIGINT,
ADD COLUMN "submit_started_at" TIMESTAMPTZ(3),
ADD COLUMN "upstream_id" VARCHAR(256);
UPDATE "audio_uploads" SET "deadline_at" = "created_at" + interval '1 hour';
ALTER TABLE "audio_uploads" ALTER COLUMN "deadline_at" SET NOT NULL;

-- CreateTable
CREATE TABLE "media" (
    "id" UUID NOT NULL,
    "owner" VARCHAR(128) NOT NULL,
    "task_id" UUID NOT NULL,
    "role" VARCHAR(16) NOT NULL,
    "index" INTEGER NOT NULL DEFAULT 0,
    "content_type" VARCHAR(64) NOT NULL,
    "size_bytes" INTEGER NOT NULL,
    "width" INTEGER,
    "height" INTEGER,
    "driver" VARCHAR(16) NOT NULL,
    "storage_key" VARCHAR(256) NOT NULL,
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "media_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "media_blobs" (
    "key" VARCHAR(256) NOT NULL,
    "bytes" BYTEA NOT NULL,

    CONSTRAINT "media_blobs_pkey" PRIMARY KEY ("key")
);

-- CreateTable
CREATE TABLE "app_secrets" (
    "name" VARCHAR(64) NOT NULL,
    "value" TEXT NOT NULL,
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "app_secrets_pkey" PRIMARY KEY ("name")
);

-- CreateIndex
CREATE INDEX "expand_tasks_status_lease_until_idx" ON "expand_tasks"("status", "lease_until");

-- CreateIndex
CREATE INDEX "video_generations_state_lease_until_idx" ON "video_generations"("state", "lease_until");

-- CreateIndex
CREATE INDEX "audio_uploads_status_lease_until_idx" ON "audio_uploads"("status", "lease_until");

-- CreateIndex
CREATE INDEX "media_created_at_idx" ON "media"("created_at");

-- CreateIndex
CREATE UNIQUE INDEX "media_task_id_role_index_key" ON "media"("task_id", "role", "index");
