-- An operator's suspension of an account (src/modules/admin/accounts.ts): set while suspended, null
-- otherwise. Nullable without a default: no table rewrite, and a process of the previous version, which
-- neither reads nor writes it, keeps working during a rolling deploy.
ALTER TABLE "accounts" ADD COLUMN "suspended_at" timestamp with time zone;
