-- Music: the clips of music tasks (two takes each), of concat tasks (the joined song) and of uploads
-- (the uploaded file; its clip id is the upload's task id). A clip is what a continuation names
-- (continue_clip_id) and what concat walks back through (parent_id).

CREATE TABLE "clips" (
    "id" UUID NOT NULL,
    "task_id" UUID NOT NULL,
    "owner" VARCHAR(128) NOT NULL,
    "idx" INTEGER NOT NULL DEFAULT 0,
    "type" VARCHAR(16) NOT NULL,
    "parent_id" UUID,
    "continue_at" DOUBLE PRECISION,
    "duration" DOUBLE PRECISION,
    "upstream_id" VARCHAR(256),
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "clips_pkey" PRIMARY KEY ("id"),
    CONSTRAINT "clips_type_check" CHECK ("type" IN ('gen', 'upload', 'concat'))
);

CREATE UNIQUE INDEX "clips_task_id_idx_key" ON "clips"("task_id", "idx");

CREATE INDEX "clips_parent_id_idx" ON "clips"("parent_id");

ALTER TABLE "clips" ADD CONSTRAINT "clips_task_id_fkey" FOREIGN KEY ("task_id") REFERENCES "tasks"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- Every upload accepted before this release is a clip: same id as its task, its duration as read then.
INSERT INTO "clips" ("id", "task_id", "owner", "idx", "type", "duration", "upstream_id", "created_at")
SELECT "id", "id", "owner", 0, 'upload', ("result"->>'duration')::double precision, "upstream_id", "created_at"
FROM "tasks" WHERE "kind" = 'audio'
ON CONFLICT DO NOTHING;
