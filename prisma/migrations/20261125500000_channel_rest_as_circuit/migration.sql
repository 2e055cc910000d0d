-- A channel no longer rests on its own beside its circuit: a refusal counts toward the circuit's
-- threshold, and an upstream's Retry-After opens the circuit for that long.
ALTER TABLE "channels" DROP COLUMN "busy_until";
