-- A channel's circuit: consecutive failures open it (no task goes to it) for a time that grows with its
-- recent openings; then one probe (half_open) closes it again or reopens it.
ALTER TABLE "channels" ADD COLUMN "circuit_state" VARCHAR(16) NOT NULL DEFAULT 'closed';
ALTER TABLE "channels" ADD COLUMN "circuit_open_until" TIMESTAMPTZ(3);
ALTER TABLE "channels" ADD COLUMN "consecutive_failures" INTEGER NOT NULL DEFAULT 0;
ALTER TABLE "channels" ADD COLUMN "openings" INTEGER NOT NULL DEFAULT 0;
ALTER TABLE "channels" ADD CONSTRAINT "channels_circuit_state_check" CHECK ("circuit_state" IN ('closed', 'open', 'half_open'));
