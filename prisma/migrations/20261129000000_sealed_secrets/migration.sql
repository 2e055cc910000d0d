-- Secrets are sealed at rest (issue 35): AES-256-GCM under the sealing key (CHANNEL_SECRET_KEY, or the key
-- kept in DATA_DIR/sealing.key). SQL cannot seal, so the values written before move to plain_* columns and
-- the service seals them at its next start, in one transaction (src/infra/database/secret-sealing.ts),
-- emptying plain_*: a row holds its value sealed or (only until then) plain, never both.

-- app_secrets: the service's own keys (media links, upstream callbacks)
ALTER TABLE "app_secrets" RENAME COLUMN "value" TO "plain_value";
ALTER TABLE "app_secrets" ALTER COLUMN "plain_value" DROP NOT NULL;
ALTER TABLE "app_secrets" ADD COLUMN "value" BYTEA;
ALTER TABLE "app_secrets" ADD CONSTRAINT "app_secrets_sealed_or_plain" CHECK (("value" IS NULL) <> ("plain_value" IS NULL));

-- webhook_secrets: each owner's signing secret and, during a rotation, the previous one
ALTER TABLE "webhook_secrets" RENAME COLUMN "secret" TO "plain_secret";
ALTER TABLE "webhook_secrets" RENAME COLUMN "previous_secret" TO "plain_previous_secret";
ALTER TABLE "webhook_secrets" ALTER COLUMN "plain_secret" DROP NOT NULL;
ALTER TABLE "webhook_secrets" ADD COLUMN "secret" BYTEA, ADD COLUMN "previous_secret" BYTEA;
ALTER TABLE "webhook_secrets" ADD CONSTRAINT "webhook_secrets_sealed_or_plain"
  CHECK (("secret" IS NULL) <> ("plain_secret" IS NULL) AND ("previous_secret" IS NULL OR "plain_previous_secret" IS NULL));
