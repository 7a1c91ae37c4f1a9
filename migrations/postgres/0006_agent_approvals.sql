CREATE TABLE "agent_approvals" (
	"id" text PRIMARY KEY NOT NULL,
	"account_id" text NOT NULL,
	"agent_id" text NOT NULL,
	"operation" text NOT NULL,
	"scopes" jsonb NOT NULL,
	"method" text NOT NULL,
	"path" text NOT NULL,
	"query" jsonb NOT NULL,
	"body" jsonb,
	"status" text DEFAULT 'pending' NOT NULL,
	"idempotency_key" text,
	"fingerprint" text NOT NULL,
	"result" jsonb,
	"expires_at" timestamp with time zone NOT NULL,
	"decided_at" timestamp with time zone,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
ALTER TABLE "agent_approvals" ADD CONSTRAINT "agent_approvals_account_id_accounts_id_fk" FOREIGN KEY ("account_id") REFERENCES "public"."accounts"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "agent_approvals" ADD CONSTRAINT "agent_approvals_agent_id_agents_id_fk" FOREIGN KEY ("agent_id") REFERENCES "public"."agents"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
CREATE INDEX "agent_approvals_account_idx" ON "agent_approvals" USING btree ("account_id","created_at");--> statement-breakpoint
CREATE INDEX "agent_approvals_agent_pending_idx" ON "agent_approvals" USING btree ("agent_id") WHERE "agent_approvals"."status" = 'pending';--> statement-breakpoint
CREATE UNIQUE INDEX "agent_approvals_idempotency_unique" ON "agent_approvals" USING btree ("agent_id","idempotency_key") WHERE "agent_approvals"."idempotency_key" is not null;