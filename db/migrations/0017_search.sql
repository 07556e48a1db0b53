-- Site search (src/search/, docs/search.md). Accent folding and trigrams: the contrib extensions
-- unaccent and pg_trgm (PGlite loads its builds of both, db/client.ts).
CREATE EXTENSION IF NOT EXISTS unaccent;--> statement-breakpoint
CREATE EXTENSION IF NOT EXISTS pg_trgm;--> statement-breakpoint
-- One text-search configuration per snowball language the server ships (cms_english, cms_german…)
-- and cms_simple, each folding accents before stemming.
DO $$
DECLARE c record;
BEGIN
  FOR c IN SELECT cfgname FROM pg_ts_config WHERE cfgnamespace = 'pg_catalog'::regnamespace ORDER BY cfgname LOOP
    IF NOT EXISTS (SELECT 1 FROM pg_ts_config x WHERE x.cfgname = 'cms_' || c.cfgname AND x.cfgnamespace = 'public'::regnamespace) THEN
      EXECUTE format('CREATE TEXT SEARCH CONFIGURATION public.%I (COPY = pg_catalog.%I)', 'cms_' || c.cfgname, c.cfgname);
      EXECUTE format('ALTER TEXT SEARCH CONFIGURATION public.%I ALTER MAPPING FOR hword, hword_part, word WITH public.unaccent, %s',
        'cms_' || c.cfgname, CASE WHEN c.cfgname = 'simple' THEN 'simple' ELSE quote_ident(c.cfgname || '_stem') END);
    END IF;
  END LOOP;
END $$;--> statement-breakpoint
-- A locale's configuration: its language's (en → cms_english, de-AT → cms_german…), else cms_simple.
CREATE OR REPLACE FUNCTION search_config(locale text) RETURNS regconfig LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$
  SELECT coalesce((SELECT x.oid::regconfig FROM pg_ts_config x WHERE x.cfgnamespace = 'public'::regnamespace AND x.cfgname = 'cms_' || CASE lower(split_part(replace(coalesce(locale, ''), '_', '-'), '-', 1))
    WHEN 'ar' THEN 'arabic' WHEN 'hy' THEN 'armenian' WHEN 'eu' THEN 'basque' WHEN 'ca' THEN 'catalan' WHEN 'da' THEN 'danish'
    WHEN 'nl' THEN 'dutch' WHEN 'en' THEN 'english' WHEN 'fi' THEN 'finnish' WHEN 'fr' THEN 'french' WHEN 'de' THEN 'german'
    WHEN 'el' THEN 'greek' WHEN 'hi' THEN 'hindi' WHEN 'hu' THEN 'hungarian' WHEN 'id' THEN 'indonesian' WHEN 'ga' THEN 'irish'
    WHEN 'it' THEN 'italian' WHEN 'lt' THEN 'lithuanian' WHEN 'ne' THEN 'nepali' WHEN 'no' THEN 'norwegian' WHEN 'nb' THEN 'norwegian'
    WHEN 'nn' THEN 'norwegian' WHEN 'pt' THEN 'portuguese' WHEN 'ro' THEN 'romanian' WHEN 'ru' THEN 'russian' WHEN 'sr' THEN 'serbian'
    WHEN 'es' THEN 'spanish' WHEN 'sv' THEN 'swedish' WHEN 'ta' THEN 'tamil' WHEN 'tr' THEN 'turkish' WHEN 'yi' THEN 'yiddish'
    ELSE 'simple' END), 'public.cms_simple'::regconfig)
$$;--> statement-breakpoint
-- Lower case, accents folded: what the trigram index on titles holds.
CREATE OR REPLACE FUNCTION search_fold(t text) RETURNS text LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$
  SELECT lower(public.unaccent('public.unaccent'::regdictionary, coalesce(t, '')))
$$;--> statement-breakpoint
-- A string as plain text: html (a string that begins with a tag) loses its tags and its entities
-- are decoded; markdown loses its link targets, heading, quote and list markers and emphasis. The
-- snippet's markers (U+0001 to U+0004) never reach the index. Prose with none of the characters
-- these use is returned as it is, without a rewrite (the common case: every content write runs
-- this for the text it changes). PL/pgSQL: its statements' plans are kept for the session.
CREATE OR REPLACE FUNCTION search_plain(t text) RETURNS text LANGUAGE plpgsql IMMUTABLE PARALLEL SAFE AS $$
DECLARE s text := coalesce(t, '');
BEGIN
  IF s !~ '[<>&#*_`~\[\x01-\x04]|(^|\n)[ \t]{0,3}([-+]|[0-9]+\.)[ \t]' THEN RETURN btrim(s); END IF;
  IF s ~ '^\s*<[a-zA-Z!]' THEN
    s := replace(replace(replace(replace(replace(replace(
      regexp_replace(regexp_replace(s, '<(script|style)\M[^>]*>.*?</\1\s*>', ' ', 'gi'), '<[a-zA-Z/!][^>]*>', ' ', 'g'),
      '&lt;', '<'), '&gt;', '>'), '&quot;', '"'), '&#39;', ''''), '&nbsp;', ' '), '&amp;', '&');
  END IF;
  RETURN btrim(regexp_replace(regexp_replace(regexp_replace(regexp_replace(s,
    '!?\[([^\]]*)\]\([^)]*\)', '\1', 'g'),
    '(^|\n)[ \t]{0,3}(#{1,6}|>|[-*+]|[0-9]+\.)[ \t]+', '\1', 'g'),
    '(\*\*|__|\*|`+|~~|[\x01-\x04])', '', 'g'),
    '\s+', ' ', 'g'));
END $$;--> statement-breakpoint
-- The text of a block's data: its string values in document order (ids, URLs, colours and dates
-- left out: only a string without a space is checked for those), as plain text.
CREATE OR REPLACE FUNCTION search_strings(data jsonb) RETURNS text LANGUAGE plpgsql IMMUTABLE PARALLEL SAFE AS $$
DECLARE out text := ''; v text;
BEGIN
  IF jsonb_typeof(data) NOT IN ('object', 'array') THEN RETURN ''; END IF;
  FOR v IN SELECT x #>> '{}' FROM jsonb_path_query(data, 'strict $.** ? (@.type() == "string")') x LOOP
    IF strpos(btrim(v), ' ') > 0 OR NOT v ~* '^\s*([0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}|[a-z][a-z0-9+.-]*://\S*|/\S*|#[0-9a-f]{3,8}|[0-9]{4}-[0-9]{2}-[0-9]{2}(T\S*)?|mailto:\S*|tel:\S*)\s*$' THEN
      out := CASE WHEN out = '' THEN search_plain(v) ELSE out || E'\n' || search_plain(v) END;
    END IF;
  END LOOP;
  RETURN out;
END $$;--> statement-breakpoint
-- The index rows of the project's nodes, as search_documents holds them: the working copy of the
-- nodes `ids` (base content and each translation) and the published version of the nodes `pub`
-- that are published (base content and each published translation). Title (a translation's, else the
-- node's); body: the SEO description and the string fields the content model marks translatable
-- (a translation's overrides over the node's); blocks: the text of the ordered blocks (a
-- translation's overrides merged over each block's data). Bounded so that no tsvector overflows.
-- PL/pgSQL, so that the statement calling it stays small to plan and this query's plan is kept
-- for the session (a SQL function is inlined into its caller and planned again with it); generic,
-- since the custom plans PostgreSQL would otherwise keep choosing cost ~3 ms of planning a write.
CREATE OR REPLACE FUNCTION search_rows(p_project uuid, p_ids uuid[], p_pub uuid[])
RETURNS TABLE (project_id uuid, node_id uuid, published boolean, locale text, type text, parent_id uuid, config regconfig, title text, body text, blocks text)
LANGUAGE plpgsql STABLE SET plan_cache_mode = force_generic_plan AS $$
#variable_conflict use_column
BEGIN
  RETURN QUERY WITH proj AS (
    SELECT p.default_locale, m.definition FROM projects p LEFT JOIN content_models m ON m.project_id = p.id WHERE p.id = p_project
  ), tf AS (
    SELECT t->>'name' AS type, array_agg(f.key ORDER BY f.key) AS keys
    FROM proj, jsonb_array_elements(CASE WHEN jsonb_typeof(proj.definition->'node_types') = 'array' THEN proj.definition->'node_types' ELSE '[]' END) t,
      jsonb_each(CASE WHEN jsonb_typeof(t->'fields'->'properties') = 'object' THEN t->'fields'->'properties' ELSE '{}' END) f
    WHERE f.value->>'type' = 'string' AND f.value->'translatable' = 'true'::jsonb
    GROUP BY 1
  ), base AS (
    SELECT n.id, true AS published, n.type, n.parent_id, n.title, n.seo, n.fields FROM published_nodes n
    WHERE n.project_id = p_project AND n.status = 'published' AND n.id = ANY (p_pub)
    UNION ALL
    SELECT n.id, false, n.type, n.parent_id, n.title, n.seo, n.fields FROM nodes n
    WHERE n.project_id = p_project AND n.id = ANY (p_ids)
  ), tr AS (
    SELECT b.id, b.published, t.locale, t.meta, t.fields, t.blocks FROM base b JOIN published_translations t ON t.node_id = b.id AND t.status = 'published'
    WHERE b.published
    UNION ALL
    SELECT b.id, b.published, t.locale, t.meta, t.fields, t.blocks FROM base b JOIN translations t ON t.node_id = b.id
    WHERE NOT b.published
  ), docs AS (
    SELECT b.id, b.published, '' AS locale, proj.default_locale AS language, b.type, b.parent_id, b.title, b.seo->>'description' AS description, b.fields, null::jsonb AS overrides
    FROM base b, proj
    UNION ALL
    SELECT b.id, b.published, t.locale, t.locale, b.type, b.parent_id, coalesce(nullif(btrim(t.meta->>'title'), ''), b.title),
      coalesce(nullif(btrim(t.meta->>'description'), ''), b.seo->>'description'),
      CASE WHEN jsonb_typeof(b.fields) = 'object' AND jsonb_typeof(t.fields) = 'object' THEN b.fields || t.fields ELSE b.fields END,
      CASE WHEN jsonb_typeof(t.blocks) = 'object' THEN t.blocks ELSE '{}' END
    FROM tr t JOIN base b ON b.id = t.id AND b.published = t.published, proj
    WHERE t.locale <> proj.default_locale
  )
  SELECT p_project, d.id, d.published, d.locale, d.type, d.parent_id, search_config(d.language), left(d.title, 2000),
    left(concat_ws(E'\n', search_plain(d.description), (SELECT string_agg(search_plain(d.fields->>k), E'\n' ORDER BY k) FROM unnest(tf.keys) k)), 100000),
    left(coalesce(CASE WHEN d.published
      THEN (SELECT string_agg(search_strings(CASE WHEN jsonb_typeof(x.data) = 'object' AND jsonb_typeof(d.overrides->(x.id::text)) = 'object' THEN x.data || (d.overrides->(x.id::text)) ELSE x.data END), E'\n' ORDER BY x."order", x.id)
            FROM published_blocks x WHERE x.node_id = d.id)
      ELSE (SELECT string_agg(search_strings(CASE WHEN jsonb_typeof(x.data) = 'object' AND jsonb_typeof(d.overrides->(x.id::text)) = 'object' THEN x.data || (d.overrides->(x.id::text)) ELSE x.data END), E'\n' ORDER BY x."order", x.id)
            FROM blocks x WHERE x.node_id = d.id)
    END, ''), 200000)
  FROM docs d LEFT JOIN tf ON tf.type = d.type;
END $$;--> statement-breakpoint
-- The string fields of each node type the project's content model marks translatable, as one key:
-- what search_rows indexes of the fields, and what search_projects remembers it was built with.
CREATE OR REPLACE FUNCTION search_fields_key(p_project uuid) RETURNS text LANGUAGE sql STABLE AS $$
  SELECT coalesce(string_agg((t->>'name') || '.' || f.key, ',' ORDER BY t->>'name', f.key), '')
  FROM content_models m,
    jsonb_array_elements(CASE WHEN jsonb_typeof(m.definition->'node_types') = 'array' THEN m.definition->'node_types' ELSE '[]' END) t,
    jsonb_each(CASE WHEN jsonb_typeof(t->'fields'->'properties') = 'object' THEN t->'fields'->'properties' ELSE '{}' END) f
  WHERE m.project_id = p_project AND f.value->>'type' = 'string' AND f.value->'translatable' = 'true'::jsonb
$$;--> statement-breakpoint
CREATE TABLE "search_documents" (
	"project_id" uuid NOT NULL,
	"node_id" uuid NOT NULL,
	"published" boolean NOT NULL,
	"locale" text NOT NULL,
	"type" text NOT NULL,
	"parent_id" uuid,
	"config" "regconfig" NOT NULL,
	"title" text NOT NULL,
	"body" text NOT NULL,
	"blocks" text NOT NULL,
	"title_folded" text GENERATED ALWAYS AS (search_fold(title)) STORED NOT NULL,
	"head" "tsvector" GENERATED ALWAYS AS (setweight(to_tsvector(config, title), 'A') || setweight(to_tsvector(config, left(body, 2000)), 'B')) STORED NOT NULL,
	"doc" "tsvector" GENERATED ALWAYS AS (setweight(to_tsvector(config, title), 'A') || setweight(to_tsvector(config, body), 'B') || setweight(to_tsvector(config, blocks), 'C')) STORED NOT NULL,
	CONSTRAINT "search_documents_node_id_published_locale_pk" PRIMARY KEY("node_id","published","locale")
);
--> statement-breakpoint
CREATE TABLE "search_projects" (
	"project_id" uuid PRIMARY KEY NOT NULL,
	"model_version" integer NOT NULL,
	"fields_key" text NOT NULL,
	"default_locale" text NOT NULL
);
--> statement-breakpoint
ALTER TABLE "search_documents" ADD CONSTRAINT "search_documents_project_id_projects_id_fk" FOREIGN KEY ("project_id") REFERENCES "public"."projects"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "search_documents" ADD CONSTRAINT "search_documents_node_id_nodes_id_fk" FOREIGN KEY ("node_id") REFERENCES "public"."nodes"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "search_projects" ADD CONSTRAINT "search_projects_project_id_projects_id_fk" FOREIGN KEY ("project_id") REFERENCES "public"."projects"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
CREATE INDEX "search_documents_project_idx" ON "search_documents" USING btree ("project_id","published","locale");--> statement-breakpoint
CREATE INDEX "search_documents_doc_published_idx" ON "search_documents" USING gin ("doc") WHERE "search_documents"."published";--> statement-breakpoint
CREATE INDEX "search_documents_doc_working_idx" ON "search_documents" USING gin ("doc") WHERE not "search_documents"."published";--> statement-breakpoint
CREATE INDEX "search_documents_title_idx" ON "search_documents" USING gin (to_tsvector("config", "title"));--> statement-breakpoint
CREATE INDEX "search_documents_title_trgm_idx" ON "search_documents" USING gin ("title_folded" gin_trgm_ops);--> statement-breakpoint
CREATE INDEX "search_documents_title_prefix_idx" ON "search_documents" USING btree ("project_id","published","locale","title_folded" text_pattern_ops);--> statement-breakpoint
-- Existing content is indexed by the indexer (src/search/indexer.ts): a project without a
-- search_projects row is queued whole on its first look, and taken in batches.
-- Nodes whose working-copy rows wait for the indexer (src/search/indexer.ts).
CREATE TABLE "search_pending" (
	"node_id" uuid PRIMARY KEY NOT NULL,
	"project_id" uuid NOT NULL,
	"published" boolean DEFAULT false NOT NULL,
	"queued_at" timestamp with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
ALTER TABLE "search_pending" ADD CONSTRAINT "search_pending_project_id_projects_id_fk" FOREIGN KEY ("project_id") REFERENCES "public"."projects"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
CREATE INDEX "search_pending_project_idx" ON "search_pending" USING btree ("project_id","queued_at");