-- Upstream channels: the provider accounts tasks are sent to. A task keeps the channel that took it
-- (tasks.channel_id) for its polls and downloads, even after the channel is disabled or deleted (soft).

CREATE TABLE "channels" (
    "id" UUID NOT NULL,
    "name" VARCHAR(128) NOT NULL,
    "operations" TEXT[] NOT NULL,
    "protocol" VARCHAR(16) NOT NULL,
    "base_url" VARCHAR(2048) NOT NULL,
    "credentials" BYTEA,
    "credentials_hint" VARCHAR(256),
    "weight" INTEGER NOT NULL DEFAULT 100,
    "priority" INTEGER NOT NULL DEFAULT 0,
    "max_running" INTEGER,
    "status" VARCHAR(16) NOT NULL DEFAULT 'enabled',
    "status_reason" TEXT,
    "source" VARCHAR(16) NOT NULL DEFAULT 'admin',
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "updated_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "deleted_at" TIMESTAMPTZ(3),

    CONSTRAINT "channels_pkey" PRIMARY KEY ("id"),
    CONSTRAINT "channels_status_check" CHECK ("status" IN ('enabled', 'disabled', 'auto_disabled')),
    CONSTRAINT "channels_source_check" CHECK ("source" IN ('admin', 'config'))
);

-- Names are unique among the channels that exist (a deleted one frees its name).
CREATE UNIQUE INDEX "channels_name_key" ON "channels"("name") WHERE "deleted_at" IS NULL;

-- The unfinished tasks a channel holds (its running count, and the 409 of a delete).
CREATE INDEX "tasks_channel_id_idx" ON "tasks"("channel_id") WHERE "state" IN ('queued', 'running');
