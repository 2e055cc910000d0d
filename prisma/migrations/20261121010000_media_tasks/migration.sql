-- CreateEnum
CREATE TYPE "expand_task_status" AS ENUM ('submitted', 'processing', 'succeed', 'failed');

-- CreateEnum
CREATE TYPE "generation_state" AS ENUM ('pending', 'processing', 'completed', 'failed');

-- CreateEnum
CREATE TYPE "keyframe_position" AS ENUM ('frame0', 'frame1');

-- CreateEnum
CREATE TYPE "keyframe_kind" AS ENUM ('image', 'generation');

-- CreateEnum
CREATE TYPE "audio_upload_status" AS ENUM ('pending', 'ready', 'failed');

-- CreateTable
CREATE TABLE "expand_tasks" (
    "id" UUID NOT NULL,
    "owner" VARCHAR(128) NOT NULL,
    "external_task_id" VARCHAR(256),
    "status" "expand_task_status" NOT NULL DEFAULT 'submitted',
    "status_message" TEXT,
    "image_url" TEXT,
    "image_format" VARCHAR(8),
    "image_width" INTEGER,
    "image_height" INTEGER,
    "up_ratio" DOUBLE PRECISION NOT NULL,
    "bottom_ratio" DOUBLE PRECISION NOT NULL,
    "left_ratio" DOUBLE PRECISION NOT NULL,
    "right_ratio" DOUBLE PRECISION NOT NULL,
    "prompt" TEXT,
    "n" INTEGER NOT NULL,
    "callback_url" TEXT,
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "updated_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "expand_tasks_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "expand_inputs" (
    "task_id" UUID NOT NULL,
    "bytes" BYTEA NOT NULL,

    CONSTRAINT "expand_inputs_pkey" PRIMARY KEY ("task_id")
);

-- CreateTable
CREATE TABLE "video_generations" (
    "id" UUID NOT NULL,
    "owner" VARCHAR(128) NOT NULL,
    "state" "generation_state" NOT NULL DEFAULT 'pending',
    "failure_reason" TEXT,
    "prompt" TEXT NOT NULL,
    "aspect_ratio" VARCHAR(16) NOT NULL,
    "loop" BOOLEAN NOT NULL,
    "enhance" BOOLEAN NOT NULL,
    "callback_url" TEXT,
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "updated_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "video_generations_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "video_keyframes" (
    "id" UUID NOT NULL,
    "generation_id" UUID NOT NULL,
    "position" "keyframe_position" NOT NULL,
    "kind" "keyframe_kind" NOT NULL,
    "url" TEXT,
    "source_generation_id" UUID,

    CONSTRAINT "video_keyframes_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "audio_uploads" (
    "id" UUID NOT NULL,
    "owner" VARCHAR(128) NOT NULL,
    "url" TEXT NOT NULL,
    "status" "audio_upload_status" NOT NULL DEFAULT 'pending',
    "error" TEXT,
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "updated_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "audio_uploads_pkey" PRIMARY KEY ("id")
);

-- CreateIndex
CREATE INDEX "expand_tasks_owner_created_at_idx" ON "expand_tasks"("owner", "created_at");

-- CreateIndex
CREATE UNIQUE INDEX "expand_tasks_owner_external_task_id_key" ON "expand_tasks"("owner", "external_task_id");

-- CreateIndex
CREATE INDEX "video_generations_owner_created_at_idx" ON "video_generations"("owner", "created_at");

-- CreateIndex
CREATE UNIQUE INDEX "video_keyframes_generation_id_position_key" ON "video_keyframes"("generation_id", "position");

-- CreateIndex
CREATE INDEX "audio_uploads_owner_created_at_idx" ON "audio_uploads"("owner", "created_at");

-- AddForeignKey
ALTER TABLE "expand_inputs" ADD CONSTRAINT "expand_inputs_task_id_fkey" FOREIGN KEY ("task_id") REFERENCES "expand_tasks"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "video_keyframes" ADD CONSTRAINT "video_keyframes_generation_id_fkey" FOREIGN KEY ("generation_id") REFERENCES "video_generations"("id") ON DELETE CASCADE ON UPDATE CASCADE;
