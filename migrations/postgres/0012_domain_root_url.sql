-- A custom domain's owner may send visitors of the domain's root (`/`) to a page of their own; null
-- keeps the neutral page. A nullable column without a default: no table rewrite, and a process of the
-- previous version, which neither reads nor writes it, keeps working during a rolling deploy.
ALTER TABLE "domains" ADD COLUMN "root_url" text;
