// Pure rendering of a delivery node: locale merge, localised paths, SEO. No I/O here.
import { decodeHTML } from "entities";
import { deepMerge, isPlainObject } from "../lib/merge";
import { seoMediaId } from "../media/seo-image";
import type { DeliveryProject } from "./cache";
import { expandRefs, type NodeRef, type RefPaths } from "./fields";
import { type MediaRef, type MediaView, mediaView } from "./media";
import { absoluteUrl, hreflangSet, str, versionSeo } from "./seo";

/** A node of the ancestor chain as the chain query returns it (root first, the node last). */
export interface ChainNode {
  id: string;
  parent_id: string | null;
  slug: string;
  path: string;
  type: string;
  title: string;
  status: string;
  seo: Record<string, unknown>;
  published_at: string | null;
  updated_at: string;
  /** Published translations: locale → meta. */
  tr: Record<string, Record<string, unknown>>;
  /** The node's own blocks and its translation's block overrides in the requested locale (null on ancestors). */
  blocks: BlockRow[] | null;
  overrides: Record<string, Record<string, unknown>> | null;
  /** The node's fields and its translation's overrides of them in the requested locale (null on ancestors). */
  fields: Record<string, unknown> | null;
  field_overrides: Record<string, unknown> | null;
  /** Targets of the node's references (fields.ts), when the model declares references. */
  refs?: Record<string, NodeRef> | null;
  /** The media items the node's SEO image may name (its own, the locale's translation's); null on ancestors. */
  seo_media?: Record<string, MediaRef> | null;
}

interface BlockRow {
  id: string;
  type: string;
  order: number;
  data: Record<string, unknown>;
}

export type RenderableNode = ReturnType<typeof renderNode>;

const ARTICLE_TYPES = new Set(["entry", "article", "post", "news", "blog-post"]);
const TEXT_BLOCK_TYPES = new Set(["text", "paragraph", "richtext", "rich-text", "rich_text", "markdown", "html", "body"]);
const TEXT_FIELDS = ["text", "body", "content", "markdown", "html", "value"];
const DESCRIPTION_MAX = 160;

/** A node's slug or title in a locale: the published translation's, else the base one. */
function local(project: DeliveryProject, node: ChainNode, locale: string, field: "slug" | "title"): string {
  return (locale === project.defaultLocale ? null : str(node.tr[locale]?.[field])) ?? node[field];
}

/** Public URL of a path in a locale: absolute under public_base_url, else a site-relative path. */
export function publicUrl(project: DeliveryProject, locale: string, path: string): string {
  const rel = locale === project.defaultLocale ? `/${path}` : `/${locale}/${path}`;
  return (project.publicBaseUrl ?? "") + rel;
}

function firstText(blocks: BlockRow[]): string | null {
  for (const b of blocks) {
    if (!TEXT_BLOCK_TYPES.has(b.type)) continue;
    for (const f of TEXT_FIELDS) {
      const v = str(b.data[f]);
      if (v) return summarise(v);
    }
  }
  return null;
}

function firstImage(blocks: BlockRow[]): string | null {
  for (const b of blocks) {
    if (b.type !== "image") continue;
    const v = str(b.data.url) ?? str(b.data.src);
    if (v) return v;
  }
  return null;
}

/**
 * Plain text for a meta description: scripts, styles, tags and markdown marks removed, HTML
 * entities decoded (`fish &amp; chips` → `fish & chips`; decoded last, so an encoded `&lt;b&gt;`
 * stays visible text), cut at a word near 160 chars.
 */
function summarise(text: string): string | null {
  const plain = decodeHTML(
    text
      .replace(/<(script|style)\b[^>]*>[\s\S]*?<\/\1\s*>/gi, " ")
      .replace(/<[^>]*>/g, " ")
      .replace(/(?<!&)#+|[*_`>~]+/g, " "), // not the # of a numeric character reference
  )
    .replace(/\s+/g, " ")
    .trim();
  if (plain === "") return null;
  if (plain.length <= DESCRIPTION_MAX) return plain;
  const cut = plain.slice(0, DESCRIPTION_MAX - 1);
  const space = cut.lastIndexOf(" ");
  return `${(space > DESCRIPTION_MAX / 2 ? cut.slice(0, space) : cut).trimEnd()}…`;
}

interface Breadcrumb {
  title: string;
  path: string;
  href: string;
}

/** What the JSON-LD graph says of the page shown. */
interface PageFacts {
  title: string;
  canonical: string;
  language: string;
  description: string | null;
  image: string | null;
  breadcrumbs: Breadcrumb[];
}

/** The renderable node of `chain` (root first, node last; every member published) in `locale`. */
export function renderNode(project: DeliveryProject, chain: ChainNode[], locale: string, refs: RefPaths | null = null) {
  const node = chain[chain.length - 1];
  if (!node) throw new Error("renderNode needs the chain down to the node");
  const isDefault = locale === project.defaultLocale;
  const meta = isDefault ? {} : (node.tr[locale] ?? {});
  const translated = !isDefault && node.tr[locale] !== undefined;
  // A fallback shows the default locale's content: its language is that one.
  const language = isDefault || translated ? locale : project.defaultLocale;

  const blocks = renderBlocks(project, node, translated, refs, language);
  const fields = renderFields(project, node, translated, refs, language);
  const breadcrumbs = breadcrumbsOf(project, chain, locale);
  const path = breadcrumbs[breadcrumbs.length - 1]?.path ?? "";
  const title = local(project, node, locale, "title");
  const { canonical, robots, hreflang } = pageSeo(project, chain, node, locale, language);
  // A translation without its own description prefers its (merged, localised) text over the base one.
  const description = translated ? (str(meta.description) ?? firstText(blocks) ?? str(node.seo.description)) : (str(node.seo.description) ?? firstText(blocks));
  const { image, view } = pageImage(project, node, meta, blocks, language);
  const isArticle = ARTICLE_TYPES.has(node.type);

  return {
    id: node.id,
    parent_id: node.parent_id,
    slug: local(project, node, locale, "slug"),
    type: node.type,
    title,
    locale,
    path,
    fields,
    blocks,
    seo: {
      canonical,
      robots,
      og: { type: isArticle ? "article" : "website", title, description, image, ...imageMeta(view), url: canonical, locale: language.replace(/-/g, "_"), site_name: project.siteName },
      twitter: { card: image ? "summary_large_image" : "summary", title, description, image, ...(view === null ? {} : { image_alt: view.alt }) },
      hreflang,
      jsonld: jsonLd(project, node, isArticle, { title, canonical, language, description, image, breadcrumbs }),
      breadcrumbs,
    },
    translated,
  };
}

/** The node's blocks, each with the published translation's overrides merged over its data, references expanded. */
function renderBlocks(project: DeliveryProject, node: ChainNode, translated: boolean, refs: RefPaths | null, language: string): BlockRow[] {
  const targets = node.refs ?? {};
  return (node.blocks ?? []).map((b) => {
    const o = translated ? node.overrides?.[b.id] : undefined;
    const data = isPlainObject(o) ? deepMerge(b.data, o) : b.data;
    return { id: b.id, type: b.type, order: b.order, data: refs === null ? data : expandRefs(data, refs.blocks.get(b.type), targets, { project, locale: language }) };
  });
}

/** Fields merge like block data: the published translation's overrides over the node's own. */
function renderFields(project: DeliveryProject, node: ChainNode, translated: boolean, refs: RefPaths | null, language: string): Record<string, unknown> {
  const ownFields = isPlainObject(node.fields) ? node.fields : {};
  const merged = translated && isPlainObject(node.field_overrides) ? deepMerge(ownFields, node.field_overrides) : ownFields;
  return refs === null ? merged : expandRefs(merged, refs.nodes.get(node.type), node.refs ?? {}, { project, locale: language });
}

/** One breadcrumb per member of the chain, root first, with its localised path; the last one is the node's. */
function breadcrumbsOf(project: DeliveryProject, chain: ChainNode[], locale: string): Breadcrumb[] {
  const breadcrumbs: Breadcrumb[] = [];
  let path = "";
  for (const c of chain) {
    path = path === "" ? local(project, c, locale, "slug") : `${path}/${local(project, c, locale, "slug")}`;
    breadcrumbs.push({ title: local(project, c, locale, "title"), path, href: publicUrl(project, locale, path) });
  }
  return breadcrumbs;
}

/**
 * Canonical, robots and hreflang of the version shown. Every published version of the node (the
 * default locale, plus each published translation) is judged by the one indexability rule (seo.ts).
 */
function pageSeo(project: DeliveryProject, chain: ChainNode[], node: ChainNode, locale: string, language: string): { canonical: string; robots: string; hreflang: { locale: string; href: string }[] } {
  const localPath = (l: string): string => chain.map((c) => local(project, c, l, "slug")).join("/");
  const defaultUrl = publicUrl(project, project.defaultLocale, localPath(project.defaultLocale));
  const versions = project.locales
    .filter((l) => l === project.defaultLocale || node.tr[l] !== undefined)
    .map((l) => {
      const href = l === project.defaultLocale ? defaultUrl : publicUrl(project, l, localPath(l));
      return { locale: l, href, ...versionSeo(project, node.seo, l === project.defaultLocale ? null : (node.tr[l] ?? null), href, defaultUrl) };
    });
  const shown = versions.find((v) => v.locale === language);
  if (!shown) throw new Error("versions lists the default locale, and this one when it is translated");
  // A fallback answer shows the default locale's version: canonical to it, never indexable itself.
  // A page that is not itself indexable names no cluster: hreflang links only between indexable pages.
  const hreflang = language === locale && shown.indexable ? hreflangSet(project.defaultLocale, versions) : [];
  return { canonical: shown.canonical, robots: shown.robots, hreflang };
}

/**
 * The page's image: og_image (the translation's, else the node's), an image URL or a media item of
 * the project (media/seo-image.ts), which also gives its size, type and alt text (`view`); a media
 * id whose item is gone counts as no og_image. Else the first image block's.
 */
function pageImage(project: DeliveryProject, node: ChainNode, meta: Record<string, unknown>, blocks: BlockRow[], language: string): { image: string | null; view: MediaView | null } {
  const ogImage = str(meta.og_image ?? node.seo.og_image);
  const mediaId = seoMediaId(ogImage);
  const ogMedia = mediaId === null ? null : (node.seo_media?.[mediaId] ?? null);
  const view = ogMedia === null ? null : mediaView(ogMedia, project, language);
  const image = view?.url ?? absoluteUrl(project, mediaId === null ? ogImage : null) ?? absoluteUrl(project, firstImage(blocks));
  return { image, view };
}

/** The Open Graph image details a media item gives: size (when known), type and alt text. */
function imageMeta(view: MediaView | null): { image_width?: number; image_height?: number; image_type?: string; image_alt?: string } {
  if (view === null) return {};
  return { ...(view.width !== null && view.height !== null ? { image_width: view.width, image_height: view.height } : {}), image_type: view.type, image_alt: view.alt };
}

/**
 * schema.org JSON-LD: a @graph of the WebPage and, for article-like types, the Article it is
 * about. `breadcrumb` is a WebPage property (schema.org), so it sits there, never on the Article;
 * the two are linked by mainEntity / mainEntityOfPage. Node identifiers: fragments of the
 * canonical URL, or blank nodes when it is not absolute.
 */
function jsonLd(project: DeliveryProject, node: ChainNode, isArticle: boolean, f: PageFacts): { "@context": string; "@graph": Record<string, unknown>[] } {
  const absolute = /^https?:\/\//i.test(f.canonical) && !f.canonical.includes("#");
  const id = absolute ? { page: `${f.canonical}#webpage`, article: `${f.canonical}#article` } : { page: "_:webpage", article: "_:article" };
  const common = {
    inLanguage: f.language,
    ...(f.description ? { description: f.description } : {}),
    ...(f.image ? { image: f.image } : {}),
    ...(node.published_at ? { datePublished: node.published_at } : {}),
    dateModified: node.updated_at,
  };
  const page = {
    "@type": "WebPage",
    "@id": id.page,
    url: f.canonical,
    name: f.title,
    ...common,
    isPartOf: { "@type": "WebSite", name: project.siteName, url: `${project.publicBaseUrl ?? ""}/` },
    breadcrumb: { "@type": "BreadcrumbList", itemListElement: f.breadcrumbs.map((b, i) => ({ "@type": "ListItem", position: i + 1, name: b.title, item: b.href })) },
    ...(isArticle ? { mainEntity: { "@id": id.article } } : {}),
  };
  const graph = isArticle
    ? [page, { "@type": "Article", "@id": id.article, headline: f.title.slice(0, 110), name: f.title, url: f.canonical, ...common, mainEntityOfPage: { "@id": id.page } }]
    : [page];
  return { "@context": "https://schema.org", "@graph": graph };
}
