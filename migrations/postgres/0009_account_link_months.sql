CREATE TABLE "account_link_months" (
	"account_id" text NOT NULL,
	"month" date NOT NULL,
	"links" integer NOT NULL,
	CONSTRAINT "account_link_months_account_id_month_pk" PRIMARY KEY("account_id","month")
);
--> statement-breakpoint
ALTER TABLE "account_link_months" ADD CONSTRAINT "account_link_months_account_id_accounts_id_fk" FOREIGN KEY ("account_id") REFERENCES "public"."accounts"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
-- The quota's month of a link (a calendar month in UTC, account/meta.ts monthWindow), whatever the session's time zone.
CREATE FUNCTION "link_month"("created_at" timestamp with time zone) RETURNS date LANGUAGE sql IMMUTABLE PARALLEL SAFE
AS $$ SELECT date_trunc('month', "created_at" AT TIME ZONE 'UTC')::date $$;--> statement-breakpoint
-- Triggers keep account_link_months equal to count(*) of the account's links per month on every path that
-- adds, removes or moves a link (creates, bulk, deletes, a domain's deletion, claiming a guest's links, an
-- account's deletion). Inserts and deletes are counted once per statement, one row per account and month
-- (a bulk create is one counter write), taking the rows in (account, month) order so that two statements
-- never wait on each other's counters the other way round.
CREATE FUNCTION "account_link_months_add"() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  INSERT INTO "account_link_months" ("account_id", "month", "links")
    SELECT "account_id", link_month("created_at"), count(*) FROM "added" WHERE "account_id" IS NOT NULL GROUP BY 1, 2 ORDER BY 1, 2
    ON CONFLICT ("account_id", "month") DO UPDATE SET "links" = "account_link_months"."links" + excluded."links";
  RETURN NULL;
END $$;--> statement-breakpoint
-- An update, never an upsert: when an account is deleted its counters may be gone already (their own
-- cascade), and there is then nothing to subtract from and no account to insert a row for.
CREATE FUNCTION "account_link_months_remove"() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
  removed record;
BEGIN
  FOR removed IN
    SELECT "account_id", link_month("created_at") AS "month", count(*) AS "links" FROM "removed_links" WHERE "account_id" IS NOT NULL GROUP BY 1, 2 ORDER BY 1, 2
  LOOP
    UPDATE "account_link_months" SET "links" = "links" - removed."links" WHERE "account_id" = removed."account_id" AND "month" = removed."month";
  END LOOP;
  RETURN NULL;
END $$;--> statement-breakpoint
-- A link that changes account (a guest's link claimed: null to the account) or creation time. Row by row:
-- Postgres allows no transition tables on an UPDATE OF trigger, and a claim moves a guest's few links.
CREATE FUNCTION "account_link_months_move"() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF OLD."account_id" IS NOT NULL THEN
    UPDATE "account_link_months" SET "links" = "links" - 1 WHERE "account_id" = OLD."account_id" AND "month" = link_month(OLD."created_at");
  END IF;
  IF NEW."account_id" IS NOT NULL THEN
    INSERT INTO "account_link_months" ("account_id", "month", "links") VALUES (NEW."account_id", link_month(NEW."created_at"), 1)
      ON CONFLICT ("account_id", "month") DO UPDATE SET "links" = "account_link_months"."links" + 1;
  END IF;
  RETURN NULL;
END $$;--> statement-breakpoint
CREATE TRIGGER "links_count_added" AFTER INSERT ON "links" REFERENCING NEW TABLE AS "added"
  FOR EACH STATEMENT EXECUTE FUNCTION "account_link_months_add"();--> statement-breakpoint
CREATE TRIGGER "links_count_removed" AFTER DELETE ON "links" REFERENCING OLD TABLE AS "removed_links"
  FOR EACH STATEMENT EXECUTE FUNCTION "account_link_months_remove"();--> statement-breakpoint
CREATE TRIGGER "links_count_moved" AFTER UPDATE OF "account_id", "created_at" ON "links"
  FOR EACH ROW WHEN (OLD."account_id" IS DISTINCT FROM NEW."account_id" OR OLD."created_at" IS DISTINCT FROM NEW."created_at")
  EXECUTE FUNCTION "account_link_months_move"();--> statement-breakpoint
-- The links that exist already. After the triggers: creating them locked `links` against writes until this
-- migration commits, so every link is counted once, here or by a trigger.
INSERT INTO "account_link_months" ("account_id", "month", "links")
  SELECT "account_id", link_month("created_at"), count(*) FROM "links" WHERE "account_id" IS NOT NULL GROUP BY 1, 2;
