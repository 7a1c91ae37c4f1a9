ALTER TABLE "links" ADD COLUMN "routing" jsonb;--> statement-breakpoint
ALTER TABLE "links" ADD COLUMN "ab_ends_at" timestamp with time zone;--> statement-breakpoint
CREATE INDEX "links_ab_ends_idx" ON "links" USING btree ("ab_ends_at") WHERE "links"."ab_ends_at" is not null;