// Node fields on delivery: references to other nodes (properties of format `node` in a
// node type's fields or a block type's schema, arrays of them too) are answered as the published
// target's { id, path, title, type } in the request's locale, or null. The targets are looked up
// in the statement that reads the node (refsColumn): one round trip per read stays one.
import { type SQL, sql } from "drizzle-orm";
import { isPlainObject } from "../lib/merge";
import type { CompiledModel } from "../model/compile";
import { walkSchema } from "../model/compile";
import type { DeliveryProject } from "./cache";
import { type MediaRef, mediaView } from "./media";
import { PUBLISHED } from "./version";

/** Where references sit: per node type (in fields) and per block type (in data), the property paths ("*" = array items). */
export interface RefPaths {
  readonly nodes: ReadonlyMap<string, readonly (readonly string[])[]>;
  readonly blocks: ReadonlyMap<string, readonly (readonly string[])[]>;
  /** The same as SQL/JSON paths, by kind ("n" fields, "b" block data) and type: the statement's parameter. */
  readonly json: string;
  /** The same for the properties of format `media` alone (the sitemap's images), or null when there are none. */
  readonly mediaJson: string | null;
}

export interface NodeRef {
  id: string;
  path: string;
  title: string;
  type: string;
}

const cache = new WeakMap<CompiledModel, RefPaths | null>();

/** The model's reference paths, or null when it declares none (reads then skip the lookup). */
export function refPaths(model: CompiledModel | null): RefPaths | null {
  if (model === null) return null;
  const hit = cache.get(model);
  if (hit !== undefined) return hit;
  const collect = (schema: unknown, formats: readonly string[]): string[][] => {
    const out: string[][] = [];
    walkSchema(schema, (path, sub) => {
      if (typeof sub.format === "string" && formats.includes(sub.format)) out.push([...path]);
    });
    return out;
  };
  const byType = (formats: readonly string[]) => {
    const nodes = new Map<string, string[][]>();
    const blocks = new Map<string, string[][]>();
    for (const t of model.definition.node_types) {
      const p = collect(t.fields, formats);
      if (p.length > 0) nodes.set(t.name, p);
    }
    for (const t of model.definition.block_types) {
      const p = collect(t.schema, formats);
      if (p.length > 0) blocks.set(t.name, p);
    }
    return { nodes, blocks };
  };
  const asJson = (m: Map<string, string[][]>) => Object.fromEntries([...m].map(([type, paths]) => [type, paths.map(jsonPath)]));
  const { nodes, blocks } = byType(["node", "media"]);
  const media = byType(["media"]);
  const found =
    nodes.size + blocks.size === 0
      ? null
      : {
          nodes,
          blocks,
          json: JSON.stringify({ n: asJson(nodes), b: asJson(blocks) }),
          mediaJson: media.nodes.size + media.blocks.size === 0 ? null : JSON.stringify({ n: asJson(media.nodes), b: asJson(media.blocks) }),
        };
  cache.set(model, found);
  return found;
}

/** ["tags", "*", "node"] → $."tags"[*]."node" (lax: a missing key is no item). */
const jsonPath = (path: readonly string[]): string => `$${path.map((s) => (s === "*" ? "[*]" : `.${JSON.stringify(s)}`)).join("")}`;

/** A media row (alias m) as a MediaRef (delivery/media.ts). */
const MEDIA_REF = sql`jsonb_build_object('media', true, 'id', m.id, 'filename', m.filename, 'hash', m.hash, 'type', m.type, 'width', m.width,
  'height', m.height, 'alt', m.alt, 'placeholder', m.placeholder, 'fx', m.focal_x, 'fy', m.focal_y)`;

/**
 * A json column: { media id: MediaRef } of the SEO images (`og_image` values naming a media item,
 * media/seo-image.ts) among `values` (a query of one text column; URLs and nulls name nothing), or
 * null. Primary-key lookups in the statement that reads the node or the sitemap's page.
 */
export function seoMediaColumn(projectId: string, values: SQL): SQL {
  return sql`(select jsonb_object_agg(m.id, ${MEDIA_REF})::json from media m where m.project_id = ${projectId} and m.id in (
    select case when btrim(v.x) ~* '^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$' then btrim(v.x)::uuid end from (${values}) v(x)))`;
}

/**
 * A json column: the image items (`image/*`) of the project that properties of format `media`
 * name in `sources` (rows of (k, ty, doc) as in refsColumn; `mediaJson` their paths), as
 * { media id: MediaRef }, at most `limit` of them, or null.
 */
export function fieldImagesColumn(projectId: string, mediaJson: string, sources: SQL, limit: number): SQL {
  return sql`(select jsonb_object_agg(m.id, ${MEDIA_REF})::json from (select * from media m where m.project_id = ${projectId} and m.type like 'image/%' and m.id in (
      select case when v.x ~* '^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$' then v.x::uuid end from (
        select jsonb_path_query(s.doc, p.path::jsonpath) #>> '{}' as x
        from (${sources}) s(k, ty, doc)
        cross join lateral jsonb_array_elements_text(coalesce(${mediaJson}::jsonb -> s.k -> s.ty, '[]'::jsonb)) p(path)
        where s.doc is not null) v)
      order by m.id limit ${limit}) m)`;
}

/**
 * A json column: { target id: NodeRef } for every node id found at a reference path of `sources`
 * (rows of (k, ty, doc): "n" or "b", the node or block type, the jsonb value), limited to targets of
 * the project that are delivered (their published versions, a preview's too) (published, every ancestor published), with their path and title
 * in `locale` ("" = the base ones, as in the default locale). With the locale's fallback chain
 * (`fallbacks`, fallback.ts), a target whose translation in `locale` has no title shows the first
 * chain locale's; paths never fall back (each locale's own slugs, else the base ones).
 */
export function refsColumn(projectId: string | SQL, locale: string, paths: RefPaths, sources: SQL, fallbacks: readonly string[] | null = null): SQL {
  const chain = fallbacks === null ? null : sql`string_to_array(${fallbacks.join(" ")}, ' ')`;
  const chainTitle =
    chain === null
      ? sql``
      : sql`, (array_agg(btrim(t.meta->>'title') order by array_position(${chain}, t.locale)) filter (where t.locale = any(${chain}) and nullif(btrim(t.meta->>'title'), '') is not null))[1] as title`;
  return sql`(with recursive ids as (
      select distinct v.x::uuid as id from (
        select jsonb_path_query(s.doc, p.path::jsonpath) #>> '{}' as x
        from (${sources}) s(k, ty, doc)
        cross join lateral jsonb_array_elements_text(coalesce(${paths.json}::jsonb -> s.k -> s.ty, '[]'::jsonb)) p(path)
        where s.doc is not null
      ) v where v.x ~* '^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$'
    ), up as (
      select i.id as ref, r.id, r.parent_id, r.slug, r.title, r.type, r.status, 0 as depth
      from ids i join ${PUBLISHED.nodes} r on r.id = i.id and r.project_id = ${projectId}
      union all
      select u.ref, a.id, a.parent_id, a.slug, a.title, a.type, a.status, u.depth + 1
      from up u join ${PUBLISHED.nodes} a on a.id = u.parent_id
      where a.project_id = ${projectId} and u.depth < 64
    )
    select (coalesce(jsonb_object_agg(x.ref, jsonb_build_object('id', x.ref, 'path', x.path, 'title', x.title, 'type', x.type)), '{}'::jsonb) || (
      -- Media items (format media), expanded by expandRefs with the request's locale.
      select coalesce(jsonb_object_agg(m.id, ${MEDIA_REF}), '{}'::jsonb)
      from media m where m.project_id = ${projectId} and m.id in (select id from ids)
    ))::json
    from (
      select u.ref,
        string_agg(coalesce(nullif(btrim(tm.meta->>'slug'), ''), u.slug), '/' order by u.depth desc) as path,
        max(case when u.depth = 0 then coalesce(nullif(btrim(tm.meta->>'title'), ''),${chain === null ? sql`` : sql` tm.title,`} u.title) end) as title,
        max(case when u.depth = 0 then u.type end) as type,
        bool_and(u.status = 'published') and bool_or(u.parent_id is null) as visible
      from up u left join lateral (
        select (array_agg(t.meta) filter (where t.locale = ${locale}))[1] as meta${chainTitle}
        from ${PUBLISHED.translations} t where t.node_id = u.id and t.status = 'published'
      ) tm on true
      group by u.ref
    ) x where x.visible)`;
}

/** Where media references are answered: the project (its links) and the locale of their alt text. */
export interface MediaContext {
  readonly project: DeliveryProject;
  readonly locale: string;
}

/**
 * `value` with every reference at `paths` replaced by its target in `refs` (a node's { id, path,
 * title, type }; a media item's { id, url, width, height, alt, srcset, placeholder }), or null. A
 * fresh value; `value` is not changed.
 */
export function expandRefs(value: Record<string, unknown>, paths: readonly (readonly string[])[] | undefined, refs: Record<string, NodeRef | MediaRef>, media: MediaContext): Record<string, unknown> {
  if (!paths) return value;
  let out: unknown = value;
  for (const p of paths) out = at(out, p, 0, refs, media);
  return out as Record<string, unknown>;
}

function at(value: unknown, path: readonly string[], i: number, refs: Record<string, NodeRef | MediaRef>, media: MediaContext): unknown {
  if (i === path.length) {
    const target = typeof value === "string" ? refs[value.toLowerCase()] : undefined;
    if (target === undefined) return null;
    return "media" in target ? mediaView(target, media.project, media.locale) : target;
  }
  const seg = path[i] as string;
  if (seg === "*") return Array.isArray(value) ? value.map((v) => at(v, path, i + 1, refs, media)) : value;
  if (!isPlainObject(value) || !Object.hasOwn(value, seg)) return value;
  return { ...value, [seg]: at(value[seg], path, i + 1, refs, media) };
}
