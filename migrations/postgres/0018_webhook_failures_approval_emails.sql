-- accounts.approval_emails: whether a new approval of an Agent's call is mailed (on unless the account
-- turns it off, PATCH /api/v1/account/notifications). webhooks.failing_since: since when every attempt to
-- the endpoint has failed (three days of it disable it). A constant default adds the column without a
-- table rewrite (PostgreSQL 11+), and a process of the previous version, which neither reads nor writes
-- them, keeps working during a rolling deploy.
ALTER TABLE "accounts" ADD COLUMN "approval_emails" boolean DEFAULT true NOT NULL;--> statement-breakpoint
ALTER TABLE "webhooks" ADD COLUMN "failing_since" timestamp with time zone;