CREATE TABLE "guest_sessions" (
	"id" text PRIMARY KEY NOT NULL,
	"token_hash" text NOT NULL,
	"expires_at" timestamp with time zone NOT NULL,
	"request_count" integer DEFAULT 0 NOT NULL,
	"link_count" integer DEFAULT 0 NOT NULL,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	CONSTRAINT "guest_sessions_token_hash_unique" UNIQUE("token_hash")
);
--> statement-breakpoint
CREATE TABLE "links" (
	"id" text PRIMARY KEY NOT NULL,
	"domain" text NOT NULL,
	"alias" text NOT NULL,
	"url" text NOT NULL,
	"guest_id" text,
	"account_id" text,
	"password_hash" text,
	"expires_at" timestamp with time zone,
	"activated_at" timestamp with time zone,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	"updated_at" timestamp with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
ALTER TABLE "links" ADD CONSTRAINT "links_guest_id_guest_sessions_id_fk" FOREIGN KEY ("guest_id") REFERENCES "public"."guest_sessions"("id") ON DELETE set null ON UPDATE no action;--> statement-breakpoint
CREATE UNIQUE INDEX "links_domain_alias_key" ON "links" USING btree ("domain","alias");--> statement-breakpoint
CREATE INDEX "links_guest_idx" ON "links" USING btree ("guest_id") WHERE "links"."guest_id" is not null;--> statement-breakpoint
CREATE INDEX "links_account_idx" ON "links" USING btree ("account_id","created_at") WHERE "links"."account_id" is not null;