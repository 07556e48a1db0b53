-- The text index scoped (src/search/postgres.ts, docs/search.md): each row's lexemes are indexed
-- with its version and locale in front ('de:preis' for a published German row, '~de:preis' for a
-- working copy's, ':price' for the base content's), positions and weights left out, so a query
-- reads its own version's and locale's posting lists alone, and a short prefix ('de:pre':*)
-- expands over their words alone. Until now one index per version held every locale's lexemes: a
-- German search read (and then threw away) the English and French rows sharing a word or prefix,
-- as many as four in five of a short prefix's rows on bench/search. The titles' index likewise.
-- A phrase (which needs positions) is then checked on the row's own `doc`. Words over 2,000 bytes
-- are left out of the scoped index (a scoped lexeme must stay within tsvector's 2,047 bytes).
CREATE OR REPLACE FUNCTION search_scoped(v tsvector, published boolean, locale text) RETURNS tsvector LANGUAGE plpgsql IMMUTABLE PARALLEL SAFE AS $$
BEGIN
  RETURN array_to_tsvector(array(SELECT CASE WHEN published THEN '' ELSE '~' END || locale || ':' || l FROM unnest(tsvector_to_array(v)) l WHERE octet_length(l) < 2000));
END $$;--> statement-breakpoint
DROP INDEX "search_documents_doc_published_idx";--> statement-breakpoint
DROP INDEX "search_documents_doc_working_idx";--> statement-breakpoint
DROP INDEX "search_documents_title_idx";--> statement-breakpoint
CREATE INDEX "search_documents_doc_scoped_idx" ON "search_documents" USING gin (search_scoped("doc", "published", "locale"));--> statement-breakpoint
CREATE INDEX "search_documents_title_scoped_idx" ON "search_documents" USING gin (search_scoped(to_tsvector("config", "title"), "published", "locale"));