// Pure rendering of a delivery node: locale merge, localised paths, SEO. No I/O here.
import { decodeHTML } from "entities";
import { isPlainObject } from "../lib/merge";
import { seoMediaId } from "../media/seo-image";
import type { CompiledModel } from "../model/compile";
import type { Path } from "../model/leaves";
import { pointerOf, unitPaths } from "../model/units";
import type { DeliveryProject } from "./cache";
import { type Layer, layerHas, mergeLayers, provenance, withoutUnit } from "./fallback";
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
  /** With a fallback chain (fallback.ts): its locales' published block and field overrides, by locale (null when none has a translation). */
  chain_blocks?: Record<string, unknown> | null;
  chain_fields?: Record<string, unknown> | null;
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

/**
 * How a read in a locale other than the default one answers what its locale lacks: from `chain`
 * (the locales after the requested one before the default locale, which ends it; often none), or,
 * with `none` (?fallback=none), not at all. `model`: where the translatable units are (units.ts).
 */
export interface Fallback {
  readonly chain: readonly string[];
  readonly none: boolean;
  readonly model: CompiledModel | null;
}

/** The parts of a page that depend on where its text comes from. */
interface PageText {
  language: string;
  title: string | null;
  description: string | null;
  blocks: BlockRow[];
  fields: Record<string, unknown>;
  /** The node's answer says it (fallback.ts): `fallback` (pointer → locale) or `missing` (pointers). */
  said: { fallback: Record<string, string> } | { missing: string[] } | null;
}

const ARTICLE_TYPES = new Set(["entry", "article", "post", "news", "blog-post"]);
const TEXT_BLOCK_TYPES = new Set(["text", "paragraph", "richtext", "rich-text", "rich_text", "markdown", "html", "body"]);
const TEXT_FIELDS = ["text", "body", "content", "markdown", "html", "value"];
const DESCRIPTION_MAX = 160;

/** A node's slug or title in a locale: the published translation's, else the base one. */
function local(project: DeliveryProject, node: ChainNode, locale: string, field: "slug" | "title"): string {
  return (locale === project.defaultLocale ? null : str(node.tr[locale]?.[field])) ?? node[field];
}

/** A node's title in a locale with a fallback chain: the first of these locales' published translations that has one, else the base one. */
function chainTitle(node: ChainNode, locales: readonly string[]): string {
  for (const l of locales) {
    const t = str(node.tr[l]?.title);
    if (t !== null) return t;
  }
  return node.title;
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
  title: string | null;
  canonical: string;
  language: string;
  description: string | null;
  image: string | null;
  breadcrumbs: Breadcrumb[];
}

/**
 * The renderable node of `chain` (root first, node last; every member published) in `locale`.
 * `fallback`: how a locale other than the default one answers what it lacks (its chain), or
 * ?fallback=none; required for every locale but the default one, which lacks nothing (null, or
 * `none` to say so with an empty `missing`).
 */
export function renderNode(project: DeliveryProject, chain: ChainNode[], locale: string, refs: RefPaths | null = null, fallback: Fallback | null = null) {
  const node = chain[chain.length - 1];
  if (!node) throw new Error("renderNode needs the chain down to the node");
  if (locale !== project.defaultLocale) {
    if (fallback === null) throw new Error("renderNode needs the fallback of a locale other than the default one");
    const translated = node.tr[locale] !== undefined;
    return pageOf(project, chain, locale, node.tr[locale] ?? {}, translated, fallbackText(project, node, locale, translated, refs, fallback), fallback);
  }
  // The default locale: the node's own content.
  const blocks = renderBlocks(project, node, refs, locale);
  const text = {
    language: locale,
    title: node.title,
    description: str(node.seo.description) ?? firstText(blocks),
    blocks,
    fields: renderFields(project, node, refs, locale),
    said: fallback?.none ? { missing: [] } : null,
  };
  return pageOf(project, chain, locale, {}, false, text, null);
}

/** The page around its text: path, SEO, breadcrumbs (`fallback`: breadcrumb titles follow the locale's chain). */
function pageOf(project: DeliveryProject, chain: ChainNode[], locale: string, meta: Record<string, unknown>, translated: boolean, text: PageText, fallback: Fallback | null) {
  const node = chain[chain.length - 1] as ChainNode;
  const { language, title, description, blocks, fields } = text;
  const breadcrumbs = breadcrumbsOf(project, chain, locale, fallback === null || fallback.none ? null : [locale, ...fallback.chain]);
  const path = breadcrumbs[breadcrumbs.length - 1]?.path ?? "";
  const { canonical, robots, hreflang } = pageSeo(project, chain, node, locale, language);
  const { image, view } = pageImage(project, node, meta, blocks, language);
  const isArticle = ARTICLE_TYPES.has(node.type);

  const page = {
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
  // The key only when there is something to say: a fully translated page answers as it always did.
  return text.said === null ? page : { ...page, ...text.said };
}

/**
 * A page's text in a locale with a fallback chain, or only the locale's own (?fallback=none).
 * Chain: each translatable unit (units.ts) the locale's published translation lacks comes from the
 * first chain locale whose published translation has it, else from the base content; `fallback`
 * names each of them with its locale. The page's language is the first of these locales that has
 * a translation of the node at all (a page no chain locale translates shows the base content, as a
 * locale without a chain does). None: the units the translation lacks are left out and named in
 * `missing` (the title is null; a description comes from the translation or its own first text).
 */
function fallbackText(project: DeliveryProject, node: ChainNode, locale: string, translated: boolean, refs: RefPaths | null, fallback: Fallback): PageText {
  const layers = layersOf(node, locale, translated, fallback.chain);
  const language = layers[0]?.locale ?? project.defaultLocale;
  const units = unitPaths({ title: node.title, type: node.type, seo: node.seo, fields: node.fields, blocks: node.blocks ?? [] }, fallback.model);
  const own = layers[0];
  const lacked = fallback.none ? units.filter((u) => own === undefined || !layerHas(own, u)) : [];
  const { fields, blocks } = layeredContent(project, node, layers, lacked, refs, language);
  if (fallback.none) {
    const description = str(node.tr[locale]?.description) ?? firstText(blocks);
    return { language, title: str(node.tr[locale]?.title), description, blocks, fields, said: { missing: lacked.map(pointerOf) } };
  }
  // As without a chain: a translated page without a description of its own prefers its first text over the base description.
  const given = layers.find((l) => str(l.meta.description) !== null);
  const derived = given === undefined && layers.length > 0 ? firstText(blocks) : null;
  const description = given !== undefined ? str(given.meta.description) : (derived ?? str(node.seo.description) ?? firstText(blocks));
  const named = provenance(units, layers, locale, project.defaultLocale, (u) => u[0] === "seo" && derived !== null);
  const title = chainTitle(
    node,
    layers.map((l) => l.locale),
  );
  return { language, title, description, blocks, fields, said: Object.keys(named).length === 0 ? null : { fallback: named } };
}

/** The published translations a read with fallbacks uses, in order: the locale's own, then each chain locale's that exists. */
function layersOf(node: ChainNode, locale: string, translated: boolean, chain: readonly string[]): Layer[] {
  const layers: Layer[] = [];
  if (translated) layers.push({ locale, meta: node.tr[locale] ?? {}, fields: node.field_overrides, blocks: node.overrides });
  for (const l of chain) {
    const meta = node.tr[l];
    if (meta !== undefined) layers.push({ locale: l, meta, fields: node.chain_fields?.[l], blocks: node.chain_blocks?.[l] });
  }
  return layers;
}

/** The node's fields and blocks with the layers merged over them (the first wins), the `lacked` units left out, references expanded. */
function layeredContent(project: DeliveryProject, node: ChainNode, layers: readonly Layer[], lacked: readonly Path[], refs: RefPaths | null, language: string) {
  const targets = node.refs ?? {};
  const expand = (value: Record<string, unknown>, at: readonly (readonly string[])[] | undefined): Record<string, unknown> =>
    refs === null ? value : expandRefs(value, at, targets, { project, locale: language });
  const strip = (value: Record<string, unknown>, under: (u: Path) => boolean, from: number): Record<string, unknown> => lacked.reduce((v, u) => (under(u) ? withoutUnit(v, u.slice(from)) : v), value);
  const merged = mergeLayers(
    isPlainObject(node.fields) ? node.fields : {},
    layers.map((l) => l.fields),
  );
  const fields = expand(
    strip(merged, (u) => u[0] === "fields", 1),
    refs?.nodes.get(node.type),
  );
  const overridesById = layers.map((l) => (isPlainObject(l.blocks) ? l.blocks : null));
  const blocks = (node.blocks ?? []).map((b) => {
    const overrides = overridesById.map((o) => (o !== null && Object.hasOwn(o, b.id) ? o[b.id] : undefined));
    const data = strip(mergeLayers(b.data, overrides), (u) => u[0] === "blocks" && u[1] === b.id, 3);
    return { id: b.id, type: b.type, order: b.order, data: expand(data, refs?.blocks.get(b.type)) };
  });
  return { fields, blocks };
}

/** The node's own blocks, references expanded. */
function renderBlocks(project: DeliveryProject, node: ChainNode, refs: RefPaths | null, language: string): BlockRow[] {
  const targets = node.refs ?? {};
  return (node.blocks ?? []).map((b) => ({
    id: b.id,
    type: b.type,
    order: b.order,
    data: refs === null ? b.data : expandRefs(b.data, refs.blocks.get(b.type), targets, { project, locale: language }),
  }));
}

/** The node's own fields, references expanded. */
function renderFields(project: DeliveryProject, node: ChainNode, refs: RefPaths | null, language: string): Record<string, unknown> {
  const own = isPlainObject(node.fields) ? node.fields : {};
  return refs === null ? own : expandRefs(own, refs.nodes.get(node.type), node.refs ?? {}, { project, locale: language });
}

/** One breadcrumb per member of the chain, root first, with its localised path; the last one is the node's. `titles`: the locales a title is taken from, in order (a fallback chain). */
function breadcrumbsOf(project: DeliveryProject, chain: ChainNode[], locale: string, titles: readonly string[] | null): Breadcrumb[] {
  const breadcrumbs: Breadcrumb[] = [];
  let path = "";
  for (const c of chain) {
    path = path === "" ? local(project, c, locale, "slug") : `${path}/${local(project, c, locale, "slug")}`;
    breadcrumbs.push({ title: titles === null ? local(project, c, locale, "title") : chainTitle(c, titles), path, href: publicUrl(project, locale, path) });
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
    ? [page, { "@type": "Article", "@id": id.article, headline: f.title?.slice(0, 110) ?? null, name: f.title, url: f.canonical, ...common, mainEntityOfPage: { "@id": id.page } }]
    : [page];
  return { "@context": "https://schema.org", "@graph": graph };
}
