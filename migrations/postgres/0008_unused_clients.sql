ALTER TABLE "oauth_clients" ADD COLUMN "first_token_at" timestamp with time zone;--> statement-breakpoint
CREATE INDEX "oauth_clients_unused_idx" ON "oauth_clients" USING btree ("created_at") WHERE "oauth_clients"."first_token_at" is null;--> statement-breakpoint
-- Clients that already obtained tokens are in use: only those that never did can be swept.
UPDATE "oauth_clients" SET "first_token_at" = "first"."at" FROM (SELECT "client_id", min("created_at") AS "at" FROM "oauth_tokens" WHERE "client_id" IS NOT NULL GROUP BY "client_id") AS "first" WHERE "first"."client_id" = "oauth_clients"."id";
