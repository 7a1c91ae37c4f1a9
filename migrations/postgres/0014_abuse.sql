CREATE TABLE "banned_hosts" (
	"host" text PRIMARY KEY NOT NULL,
	"reason" text,
	"banned_by" text,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
CREATE TABLE "operator_actions" (
	"id" text PRIMARY KEY NOT NULL,
	"operator_id" text,
	"action" text NOT NULL,
	"target" text NOT NULL,
	"reason" text,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
CREATE TABLE "reports" (
	"id" text PRIMARY KEY NOT NULL,
	"link_id" text NOT NULL,
	"reporter_hash" text NOT NULL,
	"network_hash" text NOT NULL,
	"reason" text NOT NULL,
	"details" text,
	"email" text,
	"status" text DEFAULT 'open' NOT NULL,
	"resolution" text,
	"closed_at" timestamp with time zone,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
ALTER TABLE "links" ADD COLUMN "state" text DEFAULT 'ok' NOT NULL;--> statement-breakpoint
ALTER TABLE "links" ADD COLUMN "state_reason" text;--> statement-breakpoint
ALTER TABLE "links" ADD COLUMN "url_host_rev" text GENERATED ALWAYS AS (reverse(lower(substring(url from '^[A-Za-z][A-Za-z0-9+.-]*://(?:[^/?#@]*@)?([^/?#:]+)')))) STORED;--> statement-breakpoint
ALTER TABLE "banned_hosts" ADD CONSTRAINT "banned_hosts_banned_by_accounts_id_fk" FOREIGN KEY ("banned_by") REFERENCES "public"."accounts"("id") ON DELETE set null ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "operator_actions" ADD CONSTRAINT "operator_actions_operator_id_accounts_id_fk" FOREIGN KEY ("operator_id") REFERENCES "public"."accounts"("id") ON DELETE set null ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "reports" ADD CONSTRAINT "reports_link_id_links_id_fk" FOREIGN KEY ("link_id") REFERENCES "public"."links"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
CREATE INDEX "operator_actions_created_idx" ON "operator_actions" USING btree ("created_at");--> statement-breakpoint
CREATE UNIQUE INDEX "reports_open_reporter_key" ON "reports" USING btree ("link_id","reporter_hash") WHERE "reports"."status" = 'open';--> statement-breakpoint
CREATE INDEX "reports_status_idx" ON "reports" USING btree ("status","created_at","id");--> statement-breakpoint
CREATE INDEX "links_url_host_rev_idx" ON "links" USING btree ("url_host_rev" text_pattern_ops);--> statement-breakpoint
CREATE INDEX "links_state_idx" ON "links" USING btree ("state") WHERE "links"."state" <> 'ok';