-- Translations written before deleting a block pruned its overrides kept them, and writing such a
-- translation back as read was refused (400): drop every override of a block the node no longer has.
UPDATE "translations" t SET "blocks" = (
  SELECT coalesce(jsonb_object_agg(o.key, o.value), '{}'::jsonb)
  FROM jsonb_each(t."blocks") o
  WHERE EXISTS (SELECT 1 FROM "blocks" b WHERE b."node_id" = t."node_id" AND b."id"::text = o.key)
)
WHERE EXISTS (
  SELECT 1 FROM jsonb_object_keys(t."blocks") k
  WHERE NOT EXISTS (SELECT 1 FROM "blocks" b WHERE b."node_id" = t."node_id" AND b."id"::text = k)
);
