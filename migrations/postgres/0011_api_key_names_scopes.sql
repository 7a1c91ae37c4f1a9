-- API keys get a name and, optionally, the OAuth scopes they are held to (null: the account's full
-- access, as every key had until now). Existing keys are named like the key verification creates.
ALTER TABLE "api_keys" ADD COLUMN "name" text;--> statement-breakpoint
UPDATE "api_keys" SET "name" = 'Default key';--> statement-breakpoint
ALTER TABLE "api_keys" ALTER COLUMN "name" SET NOT NULL;--> statement-breakpoint
ALTER TABLE "api_keys" ADD COLUMN "scopes" jsonb;
