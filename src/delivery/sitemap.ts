// sitemaps.org XML, produced page by page (keyset on path) so memory does not grow with the site.
//
// What is listed: one <url> per indexable (node, locale) version, by the rule of seo.ts that also
// writes each page's robots, canonical and hreflang: a visible node, the default locale or a
// published translation (never a fallback), not noindex (flag or robots string), canonical to
// itself. Each <url> carries the node's hreflang set (its indexable versions, plus x-default when
// the default version is one of them), and its images: the version's SEO image when it
// is a media item, then the image items its media fields and blocks name, at most 1,000.
//
// Shards: more than 5,000 listed nodes, or more than would fit one file (50,000 URLs, or 50 MB
// less a margin: a node with L locales gives L URLs of L+1 alternates each), give a
// <sitemapindex> of sitemap-{n}.xml. Shard boundaries come from one streamed pass that sizes each
// node's entries exactly; the plan (a few paths per shard) is remembered per content version.

import { and, getTableName, lte, type SQL, sql } from "drizzle-orm";
import { escapeUTF8 as xmlEscape } from "entities";
import type { Db } from "../../db/client";
import { AppError, notFound } from "../errors";
import { rows } from "../lib/json";
import { seoMediaId } from "../media/seo-image";
import type { DeliveryProject } from "./cache";
import { fieldImagesColumn, refPaths, seoMediaColumn } from "./fields";
import { type MediaRef, mediaView } from "./media";
import { publicUrl } from "./render";
import { hreflangSet, type SeoFields, str, versionSeo } from "./seo";
import { deliveryModel, hiddenPrefixes, iso, pathPages, visibleCondition } from "./service";
import { PUBLISHED } from "./version";

export interface ShardLimits {
  nodes: number;
  urls: number;
  /** UTF-8 bytes of the whole file, head and tail included. */
  bytes: number;
}

/** The interface's 5,000 nodes; sitemaps.org's 50,000 URLs and 50 MiB (52,428,800 bytes) less 10%. */
export const SHARD_LIMITS: ShardLimits = { nodes: 5000, urls: 50_000, bytes: 47_185_920 };
const PAGE_SIZE = 1000;
/** Google's limit of image:image entries per <url>. */
const MAX_IMAGES = 1000;
/** Ancestor slugs remembered while streaming; cleared past this, so memory stays flat. */
const KNOWN_MAX = 20_000;

const XMLNS = 'xmlns="http://www.sitemaps.org/schemas/sitemap/0.9"';
const XML_HEAD = '<?xml version="1.0" encoding="UTF-8"?>\n';
const URLSET_HEAD = `${XML_HEAD}<urlset ${XMLNS} xmlns:xhtml="http://www.w3.org/1999/xhtml" xmlns:image="http://www.google.com/schemas/sitemap-image/1.1">\n`;
const URLSET_TAIL = "</urlset>\n";

export function robotsTxt(project: DeliveryProject): string {
  const sitemap = project.publicBaseUrl ? `\nSitemap: ${project.publicBaseUrl}/sitemap.xml\n` : "";
  return `User-agent: *\nAllow: /\n${sitemap}`;
}

function requireBaseUrl(project: DeliveryProject): string {
  if (!project.publicBaseUrl) throw new AppError("sitemap_unavailable", "this project has no public_base_url, so it has no sitemap");
  return project.publicBaseUrl;
}

/** One shard: the nodes after `after` (exclusive, null = from the start) up to `last` (inclusive), in path order. */
type Shard = { after: string | null; last: string };

/** sitemap.xml: the one urlset when everything fits a file, else the index of its shards. */
export async function sitemapXml(db: Db, project: DeliveryProject, limits: ShardLimits = SHARD_LIMITS): Promise<AsyncGenerator<string>> {
  const base = requireBaseUrl(project);
  const { hidden, shards } = await shardPlan(db, project, limits);
  return shards.length > 1 ? sitemapIndex(base, shards.length) : sitemapUrlset(db, project, hidden, shards[0] ?? null);
}

/** sitemap-{n}.xml, n from 1; past the end → 404. */
export async function shardXml(db: Db, project: DeliveryProject, n: number, limits: ShardLimits = SHARD_LIMITS): Promise<AsyncGenerator<string>> {
  requireBaseUrl(project);
  const { hidden, shards } = await shardPlan(db, project, limits);
  // A site that fits one file has the one shard too (its sitemap.xml), so an index just fetched
  // before a deletion still resolves.
  if (n > Math.max(shards.length, 1)) throw notFound("sitemap shard");
  return sitemapUrlset(db, project, hidden, shards[n - 1] ?? null);
}

/**
 * Shards live on the same site as the index (sitemaps.org: an index names sitemaps of its own
 * site): the site proxies /sitemap*.xml and /robots.txt to this API.
 */
async function* sitemapIndex(publicBaseUrl: string, shards: number): AsyncGenerator<string> {
  yield `${XML_HEAD}<sitemapindex ${XMLNS}>\n`;
  for (let i = 1; i <= shards; i++) yield `<sitemap><loc>${xmlEscape(`${publicBaseUrl}/sitemap-${i}.xml`)}</loc></sitemap>\n`;
  yield "</sitemapindex>\n";
}

// ---- the shard plan ----

type Plan = { hidden: string[]; shards: Shard[] };
/**
 * Plans by project content version (a write bumps it). Bounded and tiny (a few strings per
 * shard): it spares the full sizing pass when a crawler fetches the index and then every shard.
 */
const plans = new Map<string, Promise<Plan>>();
const PLANS_MAX = 64;

function shardPlan(db: Db, project: DeliveryProject, limits: ShardLimits): Promise<Plan> {
  const key = [project.id, project.version, project.publicBaseUrl, project.defaultLocale, project.locales.join(","), limits.nodes, limits.urls, limits.bytes].join("\n");
  const known = plans.get(key);
  if (known) return known;
  const made = makePlan(db, project, limits);
  plans.set(key, made);
  const oldest = plans.keys().next();
  if (plans.size > PLANS_MAX && !oldest.done) plans.delete(oldest.value);
  made.catch(() => plans.delete(key));
  return made;
}

async function makePlan(db: Db, project: DeliveryProject, limits: ShardLimits): Promise<Plan> {
  const hidden = await hiddenPrefixes(db, project.id);
  const shards: Shard[] = [];
  const empty = utf8Length(URLSET_HEAD) + utf8Length(URLSET_TAIL);
  let after: string | null = null;
  let last: string | null = null;
  let count = { nodes: 0, urls: 0, bytes: empty };
  for await (const page of listedNodes(db, project, hidden, null)) {
    for (const node of page) {
      const bytes = entriesLength(node);
      const full = count.nodes + 1 > limits.nodes || count.urls + node.urls.length > limits.urls || count.bytes + bytes > limits.bytes;
      // A node's entries are never split: a node alone over a limit gets a shard of its own.
      if (full && count.nodes > 0 && last !== null) {
        shards.push({ after, last });
        after = last;
        count = { nodes: 0, urls: 0, bytes: empty };
      }
      count = { nodes: count.nodes + 1, urls: count.urls + node.urls.length, bytes: count.bytes + bytes };
      last = node.path;
    }
  }
  if (count.nodes > 0 && last !== null) shards.push({ after, last });
  return { hidden, shards };
}

// ---- listed versions, page by page ----

type ListedNode = ReturnType<typeof listed>;

interface LocaleInfo {
  slug: string | null;
  updatedAt: string;
  /** The translation's SEO fields (noindex, robots, canonical); null for an ancestor's. */
  meta: SeoFields | null;
}

const ISO_T = iso("t.updated_at");
const SEO_OF = (col: SQL): SQL => sql`json_build_object('noindex', ${col}->'noindex', 'robots', ${col}->'robots', 'canonical', ${col}->'canonical', 'og_image', ${col}->'og_image')`;

/**
 * Visible nodes in path order after `shard.after` up to `shard.last` (or all of them), PAGE_SIZE
 * per query, each with its indexable versions; nodes with none are left out. One query per page
 * also brings each node's own published translations; ancestors come first in path order, so
 * their localised slugs are usually known already (otherwise one small query per page fetches them).
 */
async function* listedNodes(db: Db, project: DeliveryProject, hidden: string[], shard: Shard | null): AsyncGenerator<ListedNode[]> {
  const nodes = PUBLISHED.table;
  const visible = visibleCondition(project.id, hidden);
  // biome-ignore lint/style/noNonNullAssertion: and() is undefined only when every condition is
  const cond = shard === null ? visible : and(visible, lte(nodes.path, shard.last))!;
  const others = project.locales.filter((l) => l !== project.defaultLocale);
  // The node's published translations (their slugs, dates and SEO fields) and the SEO images they
  // name, in one lateral read; the media items the node's and its translations' og_image name are
  // looked up only for nodes that have one (seo-image.ts), so a site without them pays nothing.
  const lateral =
    others.length === 0
      ? sql``
      : sql` left join lateral (select json_agg(json_build_array(t.locale, t.meta->>'slug', ${ISO_T}, ${SEO_OF(sql`t.meta`)})) as tr,
            array_agg(t.meta->>'og_image') filter (where t.meta->>'og_image' is not null) as images
          from ${PUBLISHED.translations} t where t.node_id = ${nodes.id} and t.status = 'published') tt on true`;
  const own = others.length === 0 ? sql`null` : sql`tt.tr`;
  const images =
    others.length === 0
      ? sql`case when ${nodes.seo}->>'og_image' is not null then ${seoMediaColumn(project.id, sql`values (${nodes.seo}->>'og_image')`)} end`
      : sql`case when ${nodes.seo}->>'og_image' is not null or tt.images is not null then ${seoMediaColumn(project.id, sql`select ${nodes.seo}->>'og_image' union all select unnest(tt.images)`)} end`;
  // Images in the node's media fields and blocks (properties of format media in the content model),
  // when the model declares any: the same for each of the node's versions (base content).
  const refs = refPaths(await deliveryModel(db, project));
  const fieldImages =
    refs?.mediaJson == null
      ? sql`null`
      : fieldImagesColumn(
          project.id,
          refs.mediaJson,
          sql`select 'n', ${nodes.type}, ${nodes.fields} union all select 'b', b.type, b.data from ${PUBLISHED.blocks} b where b.node_id = ${nodes.id}`,
          MAX_IMAGES,
        );
  const known = new Map<string, Map<string, LocaleInfo>>();
  const pages = pathPages(cond, shard?.after ?? null, PAGE_SIZE, async (where) =>
    rows<{
      path: string;
      updated_at: string;
      seo: SeoFields;
      tr: [string, string | null, string, SeoFields][] | null;
      media: Record<string, MediaRef> | null;
      field_media: Record<string, MediaRef> | null;
    }>(
      await db.execute(sql`select ${nodes.path} as path, ${iso(`"${getTableName(nodes)}"."updated_at"`)} as updated_at, ${SEO_OF(sql`${nodes.seo}`)} as seo, ${own} as tr,
        ${images} as media, ${fieldImages} as field_media from ${nodes}${lateral}
        where ${where} order by ${nodes.path} limit ${PAGE_SIZE}`),
    ),
  );
  for await (const page of pages) {
    if (others.length > 0) {
      if (known.size > KNOWN_MAX) known.clear();
      for (const r of page) known.set(r.path, new Map((r.tr ?? []).map(([locale, slug, updatedAt, meta]) => [locale, { slug: str(slug), updatedAt, meta }])));
      await learnAncestors(db, project, page, known);
    }
    yield page.map((r) => listed(project, others, r, known)).filter((node) => node.urls.length > 0);
  }
}

/** Loads published translation slugs of the ancestors of these paths that are not known yet. */
async function learnAncestors(db: Db, project: DeliveryProject, page: { path: string }[], known: Map<string, Map<string, LocaleInfo>>): Promise<void> {
  const wanted = new Set<string>();
  for (const { path: p } of page) {
    for (let i = p.lastIndexOf("/"); i > 0; i = p.lastIndexOf("/", i - 1)) {
      const prefix = p.slice(0, i);
      if (!known.has(prefix)) wanted.add(prefix);
    }
  }
  if (wanted.size === 0) return;
  for (const w of wanted) known.set(w, new Map());
  const found = rows<{ path: string; locale: string; slug: string | null; updated_at: string }>(
    await db.execute(sql`select n.path, t.locale, t.meta->>'slug' as slug, ${ISO_T} as updated_at
      from ${PUBLISHED.nodes} n join ${PUBLISHED.translations} t on t.node_id = n.id
      where n.project_id = ${project.id} and t.status = 'published'
        and n.path = any (string_to_array(${[...wanted].join("\n")}, E'\\n'))`),
  );
  for (const r of found) known.get(r.path)?.set(r.locale, { slug: str(r.slug), updatedAt: r.updated_at, meta: null });
}

function localisedPath(path: string, locale: string, known: Map<string, Map<string, LocaleInfo>>): string {
  const segs = path.split("/");
  return segs.map((seg, i) => known.get(segs.slice(0, i + 1).join("/"))?.get(locale)?.slug ?? seg).join("/");
}

interface PageRow {
  path: string;
  updated_at: string;
  seo: SeoFields;
  media: Record<string, MediaRef> | null;
  field_media: Record<string, MediaRef> | null;
}

function listed(project: DeliveryProject, others: string[], { path, updated_at: updatedAt, seo, media, field_media }: PageRow, known: Map<string, Map<string, LocaleInfo>>) {
  const own = known.get(path);
  const fieldUrls = Object.values(field_media ?? {}).map((m) => mediaView(m, project, project.defaultLocale).url);
  // A version's images: its SEO image first, then those of the fields and blocks, each once.
  const imagesOf = (ogImage: unknown): string[] => {
    const seoImage = imageOf(project, media, ogImage);
    return [...new Set(seoImage === null ? fieldUrls : [seoImage, ...fieldUrls])].slice(0, MAX_IMAGES);
  };
  const defaultUrl = publicUrl(project, project.defaultLocale, path);
  const versions = [
    { locale: project.defaultLocale, href: defaultUrl, lastmod: updatedAt, images: imagesOf(seo.og_image), indexable: versionSeo(project, seo, null, defaultUrl, defaultUrl).indexable },
  ];
  for (const l of others) {
    const tr = own?.get(l);
    if (!tr) continue; // no published translation: a fallback, never listed
    const href = publicUrl(project, l, localisedPath(path, l, known));
    const lastmod = tr.updatedAt > updatedAt ? tr.updatedAt : updatedAt;
    versions.push({ locale: l, href, lastmod, images: imagesOf(tr.meta?.og_image ?? seo.og_image), indexable: versionSeo(project, seo, tr.meta ?? {}, href, defaultUrl).indexable });
  }
  // One <url> per indexable version, each with the hreflang set of the node.
  return {
    path,
    urls: versions.filter((v) => v.indexable).map((v) => ({ href: v.href, lastmod: v.lastmod, images: v.images })),
    alternates: hreflangSet(project.defaultLocale, versions),
  };
}

/** The URL of the image a version's og_image names when it is one of the project's media images (media/seo-image.ts). */
function imageOf(project: DeliveryProject, media: Record<string, MediaRef> | null, ogImage: unknown): string | null {
  const id = seoMediaId(ogImage);
  const m = id === null ? undefined : media?.[id];
  return m?.type.startsWith("image/") ? mediaView(m, project, project.defaultLocale).url : null;
}

// ---- XML ----

function alternatesXml(node: ListedNode): string {
  return node.alternates.map((a) => `<xhtml:link rel="alternate" hreflang="${xmlEscape(a.locale)}" href="${xmlEscape(a.href)}"/>`).join("");
}

function urlXml(u: { href: string; lastmod: string; images: readonly string[] }, links: string): string {
  const images = u.images.map((i) => `<image:image><image:loc>${xmlEscape(i)}</image:loc></image:image>`).join("");
  return `<url><loc>${xmlEscape(u.href)}</loc><lastmod>${u.lastmod}</lastmod>${links}${images}</url>\n`;
}

function entriesXml(node: ListedNode): string {
  const links = alternatesXml(node);
  return node.urls.map((u) => urlXml(u, links)).join("");
}

/** The UTF-8 length of entriesXml(node), without building the L × L text. */
function entriesLength(node: ListedNode): number {
  const links = utf8Length(alternatesXml(node));
  return node.urls.reduce((total, u) => total + utf8Length(urlXml(u, "")) + links, 0);
}

const utf8Length = (s: string): number => Buffer.byteLength(s, "utf8");

/** Text handed to the stream at a time: a page of a 100-locale site is a gigabyte of XML. */
const CHUNK_CHARS = 64 * 1024;

/**
 * A urlset of one shard (or of the whole site), streamed. The head goes out with the first page,
 * not before it (see StreamPlan): no 200 is sent before a page was read.
 */
async function* sitemapUrlset(db: Db, project: DeliveryProject, hidden: string[], shard: Shard | null): AsyncGenerator<string> {
  let head = URLSET_HEAD;
  for await (const page of listedNodes(db, project, hidden, shard)) {
    let out = head;
    head = "";
    for (const node of page) {
      out += entriesXml(node);
      if (out.length >= CHUNK_CHARS) {
        yield out;
        out = "";
      }
    }
    if (out !== "") yield out;
  }
  yield head + URLSET_TAIL;
}
