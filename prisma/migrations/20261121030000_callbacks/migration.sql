-- CreateEnum
CREATE TYPE "delivery_state" AS ENUM ('pending', 'delivered', 'failed');

-- CreateTable
CREATE TABLE "callback_deliveries" (
    "id" UUID NOT NULL,
    "owner" VARCHAR(128) NOT NULL,
    "task_kind" VARCHAR(16) NOT NULL,
    "task_id" UUID NOT NULL,
    "sequence" INTEGER NOT NULL,
    "status" VARCHAR(16) NOT NULL,
    "url" TEXT NOT NULL,
    "payload" TEXT NOT NULL,
    "state" "delivery_state" NOT NULL DEFAULT 'pending',
    "attempts" INTEGER NOT NULL DEFAULT 0,
    "next_attempt_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "locked_until" TIMESTAMPTZ(3),
    "cycle_started_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "last_error" TEXT,
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "finished_at" TIMESTAMPTZ(3),

    CONSTRAINT "callback_deliveries_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "callback_attempts" (
    "id" UUID NOT NULL,
    "delivery_id" UUID NOT NULL,
    "attempted_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "status_code" INTEGER,
    "duration_ms" INTEGER NOT NULL,
    "error" TEXT,

    CONSTRAINT "callback_attempts_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "webhook_secrets" (
    "owner" VARCHAR(128) NOT NULL,
    "secret" VARCHAR(128) NOT NULL,
    "previous_secret" VARCHAR(128),
    "previous_expires_at" TIMESTAMPTZ(3),
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "rotated_at" TIMESTAMPTZ(3),

    CONSTRAINT "webhook_secrets_pkey" PRIMARY KEY ("owner")
);

-- CreateIndex
CREATE INDEX "callback_deliveries_state_next_attempt_at_idx" ON "callback_deliveries"("state", "next_attempt_at");

-- CreateIndex
CREATE UNIQUE INDEX "callback_deliveries_task_id_sequence_key" ON "callback_deliveries"("task_id", "sequence");

-- CreateIndex
CREATE INDEX "callback_attempts_delivery_id_idx" ON "callback_attempts"("delivery_id");

-- AddForeignKey
ALTER TABLE "callback_attempts" ADD CONSTRAINT "callback_attempts_delivery_id_fkey" FOREIGN KEY ("delivery_id") REFERENCES "callback_deliveries"("id") ON DELETE CASCADE ON UPDATE CASCADE;
