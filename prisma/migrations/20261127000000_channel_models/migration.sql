-- Models on channels: the models a channel (an account of one vendor) serves, each with the name callers use,
-- the vendor's model id and what it costs the company: [{"name", "vendor_model", "price"}]. Empty: every model
-- of its vendor's catalog, under the vendor's own ids.
ALTER TABLE "channels" ADD COLUMN "models" JSONB NOT NULL DEFAULT '[]';
