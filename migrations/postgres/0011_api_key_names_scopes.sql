-- API keys get a name and, optionally, the OAuth scopes they are held to (null: the account's full
-- access, as every key had until now). The keys that exist take the name verification gives a new
-- one; the default also serves a process of the previous version inserting a key during a rolling
-- deploy. A constant default fills existing rows without rewriting the table.
ALTER TABLE "api_keys" ADD COLUMN "name" text DEFAULT 'Default key' NOT NULL;--> statement-breakpoint
ALTER TABLE "api_keys" ADD COLUMN "scopes" jsonb;
