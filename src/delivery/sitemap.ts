// sitemaps.org XML, produced page by page (keyset on path) so memory does not grow with the site.
import { type SQL, and, asc, count, gt, sql } from "drizzle-orm";
import type { Db } from "../../db/client";
import { nodes } from "../../db/schema";
import { AppError, notFound } from "../errors";
import { rows } from "../lib/json";
import type { DeliveryProject } from "./cache";
import { publicUrl } from "./render";
import { hiddenPrefixes, visibleCondition } from "./service";

export const SHARD_SIZE = 5000;
const PAGE_SIZE = 1000;
/** Ancestor slugs remembered while streaming; cleared past this, so memory stays flat. */
const KNOWN_MAX = 20_000;

const XMLNS = 'xmlns="http://www.sitemaps.org/schemas/sitemap/0.9"';
const XML_HEAD = '<?xml version="1.0" encoding="UTF-8"?>\n';

export function xmlEscape(s: string): string {
  return s.replace(/[&<>"']/g, (c) => (c === "&" ? "&amp;" : c === "<" ? "&lt;" : c === ">" ? "&gt;" : c === '"' ? "&quot;" : "&apos;"));
}

export function robotsTxt(project: DeliveryProject): string {
  const lines = ["User-agent: *", "Allow: /"];
  if (project.publicBaseUrl) lines.push("", `Sitemap: ${project.publicBaseUrl}/sitemap.xml`);
  return lines.join("\n") + "\n";
}

export function requireBaseUrl(project: DeliveryProject): void {
  if (!project.publicBaseUrl) {
    throw new AppError("sitemap_unavailable", "this project has no public_base_url, so it has no sitemap");
  }
}

/** Nodes listed in the sitemap: visible ones, except those marked noindex. */
function sitemapCondition(projectId: string, hidden: string[]): SQL {
  return and(visibleCondition(projectId, hidden), sql`coalesce(${nodes.seo}->'noindex', 'false'::jsonb) <> 'true'::jsonb`)!;
}

export type SitemapPlan =
  | { kind: "urlset"; after: string | null; limit: number }
  | { kind: "index"; shards: number };

/** sitemap.xml: one urlset up to SHARD_SIZE nodes, else an index of ceil(n / SHARD_SIZE) shards. */
export async function planSitemap(db: Db, project: DeliveryProject): Promise<{ plan: SitemapPlan; hidden: string[] }> {
  requireBaseUrl(project);
  const hidden = await hiddenPrefixes(db, project.id);
  const [{ n }] = await db.select({ n: count() }).from(nodes).where(sitemapCondition(project.id, hidden));
  const total = Number(n);
  if (total <= SHARD_SIZE) return { plan: { kind: "urlset", after: null, limit: SHARD_SIZE }, hidden };
  return { plan: { kind: "index", shards: Math.ceil(total / SHARD_SIZE) }, hidden };
}

/** sitemap-{n}.xml: the n-th run of SHARD_SIZE nodes in path order; past the end → 404. */
export async function planShard(db: Db, project: DeliveryProject, shard: number): Promise<{ plan: SitemapPlan; hidden: string[] }> {
  requireBaseUrl(project);
  const hidden = await hiddenPrefixes(db, project.id);
  const cond = sitemapCondition(project.id, hidden);
  // The shard's first node must exist; the path just before it is the keyset start.
  const skip = (shard - 1) * SHARD_SIZE;
  const bounds = await db
    .select({ path: nodes.path })
    .from(nodes)
    .where(cond)
    .orderBy(asc(nodes.path))
    .offset(Math.max(skip - 1, 0))
    .limit(skip === 0 ? 1 : 2);
  if (bounds.length < (skip === 0 ? 1 : 2)) throw notFound("sitemap shard");
  return { plan: { kind: "urlset", after: skip === 0 ? null : bounds[0].path, limit: SHARD_SIZE }, hidden };
}

export async function* sitemapIndex(apiBase: string, shards: number): AsyncGenerator<string> {
  yield `${XML_HEAD}<sitemapindex ${XMLNS}>\n`;
  for (let i = 1; i <= shards; i++) yield `<sitemap><loc>${xmlEscape(`${apiBase}/sitemap-${i}.xml`)}</loc></sitemap>\n`;
  yield "</sitemapindex>\n";
}

interface LocaleInfo {
  slug: string | null;
  updatedAt: string;
  /** The translation sets noindex: its URL is left out (its slug still localises descendants). */
  noindex: boolean;
}

/**
 * A urlset with one <url> per (visible node, locale it is published in): the default locale, and
 * each project locale with a published translation. Each lists every version as an xhtml:link
 * alternate plus x-default (the default-locale URL). One query per page of nodes, which also
 * brings each node's own translations; ancestors come first in path order, so their localised
 * slugs are usually known already (otherwise one small query per page fetches them).
 */
export async function* sitemapUrlset(db: Db, project: DeliveryProject, hidden: string[], after: string | null, limit: number): AsyncGenerator<string> {
  // The head goes out with the first page, not before it (see StreamPlan): no 200 before a page was read.
  let out = `${XML_HEAD}<urlset ${XMLNS} xmlns:xhtml="http://www.w3.org/1999/xhtml">\n`;
  const cond = sitemapCondition(project.id, hidden);
  const others = project.locales.filter((l) => l !== project.defaultLocale);
  const own = others.length === 0
    ? sql`null`
    : sql`(select json_agg(json_build_array(t.locale, t.meta->>'slug', ${ISO_T}, t.meta->'noindex' = 'true'::jsonb)) from translations t
           where t.node_id = ${nodes.id} and t.status = 'published')`;
  const known = new Map<string, Map<string, LocaleInfo>>();
  let remaining = limit;
  let cursor = after;
  while (remaining > 0) {
    const take = Math.min(PAGE_SIZE, remaining);
    const page = rows<{ path: string; updated_at: string; tr: [string, string | null, string, boolean | null][] | null }>(
      await db.execute(sql`select ${nodes.path} as path, ${ISO_N} as updated_at, ${own} as tr from ${nodes}
        where ${cursor === null ? cond : and(cond, gt(nodes.path, cursor))}
        order by ${nodes.path} limit ${take}`),
    );
    if (page.length === 0) break;
    if (others.length > 0) {
      if (known.size > KNOWN_MAX) known.clear();
      for (const r of page) {
        const m = new Map<string, LocaleInfo>();
        for (const [locale, slug, updatedAt, noindex] of r.tr ?? []) {
          m.set(locale, { slug: slug && slug.trim() !== "" ? slug : null, updatedAt, noindex: noindex === true });
        }
        known.set(r.path, m);
      }
      await learnAncestors(db, project, page.map((p) => p.path), known);
    }
    for (const node of page) out += urlEntries(project, others, node.path, node.updated_at, known);
    yield out;
    out = "";
    remaining -= page.length;
    cursor = page[page.length - 1].path;
    if (page.length < take) break;
  }
  yield out + "</urlset>\n";
}

const ISO_N = sql.raw(`to_char("nodes"."updated_at" at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"')`);
const ISO_T = sql.raw(`to_char(t.updated_at at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"')`);

/** Loads published translation slugs of the ancestors of these paths that are not known yet. */
async function learnAncestors(db: Db, project: DeliveryProject, paths: string[], known: Map<string, Map<string, LocaleInfo>>): Promise<void> {
  const wanted = new Set<string>();
  for (const p of paths) {
    for (let i = p.lastIndexOf("/"); i > 0; i = p.lastIndexOf("/", i - 1)) {
      const prefix = p.slice(0, i);
      if (!known.has(prefix)) wanted.add(prefix);
    }
  }
  if (wanted.size === 0) return;
  for (const w of wanted) known.set(w, new Map());
  const found = rows<{ path: string; locale: string; slug: string | null; updated_at: string }>(
    await db.execute(sql`select n.path, t.locale, t.meta->>'slug' as slug, ${ISO_T} as updated_at
      from nodes n join translations t on t.node_id = n.id
      where n.project_id = ${project.id} and t.status = 'published'
        and n.path = any (string_to_array(${[...wanted].join("\n")}, E'\\n'))`),
  );
  for (const r of found) known.get(r.path)?.set(r.locale, { slug: r.slug && r.slug.trim() !== "" ? r.slug : null, updatedAt: r.updated_at, noindex: false });
}

function localisedPath(path: string, locale: string, known: Map<string, Map<string, LocaleInfo>>): string {
  const segs = path.split("/");
  const out: string[] = [];
  for (let i = 0; i < segs.length; i++) {
    const prefix = segs.slice(0, i + 1).join("/");
    out.push(known.get(prefix)?.get(locale)?.slug ?? segs[i]);
  }
  return out.join("/");
}

function urlEntries(project: DeliveryProject, others: string[], path: string, updatedAt: string, known: Map<string, Map<string, LocaleInfo>>): string {
  const own = known.get(path);
  const versions: { locale: string; href: string; lastmod: string }[] = [
    { locale: project.defaultLocale, href: publicUrl(project, project.defaultLocale, path), lastmod: updatedAt },
  ];
  for (const l of others) {
    const tr = own?.get(l);
    // A noindex translation renders robots "noindex": listing it would submit a URL search engines must drop.
    if (!tr || tr.noindex) continue;
    versions.push({ locale: l, href: publicUrl(project, l, localisedPath(path, l, known)), lastmod: tr.updatedAt > updatedAt ? tr.updatedAt : updatedAt });
  }
  let links = "";
  for (const v of versions) links += `<xhtml:link rel="alternate" hreflang="${xmlEscape(v.locale)}" href="${xmlEscape(v.href)}"/>`;
  links += `<xhtml:link rel="alternate" hreflang="x-default" href="${xmlEscape(versions[0].href)}"/>`;
  let out = "";
  for (const v of versions) out += `<url><loc>${xmlEscape(v.href)}</loc><lastmod>${v.lastmod}</lastmod>${links}</url>\n`;
  return out;
}
