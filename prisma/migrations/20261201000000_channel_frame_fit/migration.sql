-- A video channel's default for fitting a first frame to the asked aspect ratio (issue 38): crop, pad or
-- none; null keeps the gateway's default (crop).
ALTER TABLE "channels" ADD COLUMN "frame_fit" VARCHAR(8);
ALTER TABLE "channels" ADD CONSTRAINT "channels_frame_fit_check" CHECK ("frame_fit" IN ('crop', 'pad', 'none'));
