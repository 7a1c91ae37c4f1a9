CREATE TABLE "conversions" (
	"id" text PRIMARY KEY NOT NULL,
	"account_id" text NOT NULL,
	"link_id" text NOT NULL,
	"click_id" text NOT NULL,
	"conversion_type" text NOT NULL,
	"value" numeric(24, 6),
	"currency" text,
	"external_order_id" text,
	"event_id" text,
	"occurred_at" timestamp with time zone NOT NULL,
	"source" text,
	"metadata" jsonb,
	"payload_hash" text NOT NULL,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
ALTER TABLE "conversions" ADD CONSTRAINT "conversions_account_id_accounts_id_fk" FOREIGN KEY ("account_id") REFERENCES "public"."accounts"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "conversions" ADD CONSTRAINT "conversions_link_id_links_id_fk" FOREIGN KEY ("link_id") REFERENCES "public"."links"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
CREATE UNIQUE INDEX "conversions_account_type_order_key" ON "conversions" USING btree ("account_id","conversion_type","external_order_id") WHERE "conversions"."external_order_id" is not null;--> statement-breakpoint
CREATE UNIQUE INDEX "conversions_account_event_key" ON "conversions" USING btree ("account_id","event_id") WHERE "conversions"."event_id" is not null;--> statement-breakpoint
CREATE INDEX "conversions_link_idx" ON "conversions" USING btree ("link_id","occurred_at");