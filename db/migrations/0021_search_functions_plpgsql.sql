-- The search index's two SQL functions as PL/pgSQL, their results unchanged (src/search/postgres.ts).
-- An SQL function that cannot be inlined (search_fold calls unaccent, which is only STABLE;
-- search_config reads the catalog) is parsed and planned again in every statement that calls it,
-- and a call in a row's condition or order runs once per row: a title's folding by the write path
-- (the generated title_folded) and by as-you-type (bench/search: 20 % of PostgreSQL's time for a
-- suggestion). PL/pgSQL keeps a function's plan for the session and evaluates a simple expression
-- directly. Every index and generated column over them stays valid: the results are the same.
CREATE OR REPLACE FUNCTION search_fold(t text) RETURNS text LANGUAGE plpgsql IMMUTABLE PARALLEL SAFE AS $$
BEGIN
  RETURN lower(public.unaccent('public.unaccent'::regdictionary, coalesce(t, '')));
END $$;--> statement-breakpoint
CREATE OR REPLACE FUNCTION search_config(locale text) RETURNS regconfig LANGUAGE plpgsql IMMUTABLE PARALLEL SAFE AS $$
BEGIN
  RETURN coalesce((SELECT x.oid::regconfig FROM pg_ts_config x WHERE x.cfgnamespace = 'public'::regnamespace AND x.cfgname = 'cms_' || CASE lower(split_part(replace(coalesce(locale, ''), '_', '-'), '-', 1))
    WHEN 'ar' THEN 'arabic' WHEN 'hy' THEN 'armenian' WHEN 'eu' THEN 'basque' WHEN 'ca' THEN 'catalan' WHEN 'da' THEN 'danish'
    WHEN 'nl' THEN 'dutch' WHEN 'en' THEN 'english' WHEN 'fi' THEN 'finnish' WHEN 'fr' THEN 'french' WHEN 'de' THEN 'german'
    WHEN 'el' THEN 'greek' WHEN 'hi' THEN 'hindi' WHEN 'hu' THEN 'hungarian' WHEN 'id' THEN 'indonesian' WHEN 'ga' THEN 'irish'
    WHEN 'it' THEN 'italian' WHEN 'lt' THEN 'lithuanian' WHEN 'ne' THEN 'nepali' WHEN 'no' THEN 'norwegian' WHEN 'nb' THEN 'norwegian'
    WHEN 'nn' THEN 'norwegian' WHEN 'pt' THEN 'portuguese' WHEN 'ro' THEN 'romanian' WHEN 'ru' THEN 'russian' WHEN 'sr' THEN 'serbian'
    WHEN 'es' THEN 'spanish' WHEN 'sv' THEN 'swedish' WHEN 'ta' THEN 'tamil' WHEN 'tr' THEN 'turkish' WHEN 'yi' THEN 'yiddish'
    ELSE 'simple' END), 'public.cms_simple'::regconfig);
END $$;
