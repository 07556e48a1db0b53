-- Search rows narrow in the table (src/search/postgres.ts, docs/search.md): a search reads every hit's
-- row (for its rank, on `head`, and to count it), and a hit is a random row of the table, so the
-- rows are best small enough for the table to stay in shared_buffers. Until now a row kept its
-- description and blocks text inline (only `doc` went to TOAST): about 4 rows to a page. Now every
-- value but the title, its folded form and `head` goes to TOAST once a row needs toasting (a row
-- over about 2 kB: PostgreSQL toasts no smaller one), about 16 rows to a page (bench/search: the
-- table's main part from 120 MB to 31 MB at 10,000 nodes × 3 locales, searches 20-25 % faster one
-- at a time). Rows written from now on are stored so; rows stored before are narrowed, and the table
-- compacted, by `VACUUM FULL search_documents` (docs/operations.md: it locks the table while it runs).
ALTER TABLE "search_documents" SET (toast_tuple_target = 256);--> statement-breakpoint
ALTER TABLE "search_documents" ALTER COLUMN "head" SET STORAGE MAIN, ALTER COLUMN "title" SET STORAGE MAIN, ALTER COLUMN "title_folded" SET STORAGE MAIN;
