-- The daily re-check of verified custom domains (src/modules/domains/recheck.ts): when their TXT record
-- was last looked up, and since when it has been missing (a domain is unverified seven days after).
-- Nullable columns without a default: no table rewrite, and a process of the previous version, which
-- neither reads nor writes them, keeps working during a rolling deploy.
ALTER TABLE "domains" ADD COLUMN "rechecked_at" timestamp with time zone;--> statement-breakpoint
ALTER TABLE "domains" ADD COLUMN "record_missing_since" timestamp with time zone;