-- An account's link pages are ordered by (created_at, id): with id in the index, a cursor's row comparison
-- is an index condition instead of a filter over every newer link. Builds once, locking writes to links
-- while it does (seconds per million links).
DROP INDEX "links_account_idx";--> statement-breakpoint
CREATE INDEX "links_account_idx" ON "links" USING btree ("account_id","created_at","id") WHERE "links"."account_id" is not null;