-- A channel that refused for capacity (429, Kling's 1302/1303) or could not be reached is left alone until
-- busy_until: the tasks waiting for it do not each knock; its last error is kept for admins.
ALTER TABLE "channels" ADD COLUMN "busy_until" TIMESTAMPTZ(3);
ALTER TABLE "channels" ADD COLUMN "last_error" TEXT;
ALTER TABLE "channels" ADD COLUMN "last_error_at" TIMESTAMPTZ(3);
