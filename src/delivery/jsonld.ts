// schema.org JSON-LD of a delivered page: a @graph of the WebPage and, for article-like types, the
// Article it is about. `breadcrumb` is a WebPage property (schema.org), so it sits there, never on
// the Article; the two are linked by mainEntity / mainEntityOfPage.

export interface JsonLdInput {
  article: boolean;
  /** The page's canonical URL (absolute when the project has a public_base_url). */
  url: string;
  title: string;
  language: string;
  description: string | null;
  image: string | null;
  publishedAt: string | null;
  modifiedAt: string;
  site: { name: string; url: string };
  breadcrumbs: readonly { title: string; href: string }[];
}

export function pageJsonLd(p: JsonLdInput): Record<string, unknown> {
  // Node identifiers: fragments of the canonical URL, or blank nodes when it is not absolute.
  const absolute = /^https?:\/\//i.test(p.url) && !p.url.includes("#");
  const id = absolute ? { page: `${p.url}#webpage`, article: `${p.url}#article` } : { page: "_:webpage", article: "_:article" };
  const common = {
    inLanguage: p.language,
    ...(p.description ? { description: p.description } : {}),
    ...(p.image ? { image: p.image } : {}),
    ...(p.publishedAt ? { datePublished: p.publishedAt } : {}),
    dateModified: p.modifiedAt,
  };
  const page = {
    "@type": "WebPage",
    "@id": id.page,
    url: p.url,
    name: p.title,
    ...common,
    isPartOf: { "@type": "WebSite", name: p.site.name, url: p.site.url },
    breadcrumb: {
      "@type": "BreadcrumbList",
      itemListElement: p.breadcrumbs.map((b, i) => ({ "@type": "ListItem", position: i + 1, name: b.title, item: b.href })),
    },
    ...(p.article ? { mainEntity: { "@id": id.article } } : {}),
  };
  if (!p.article) return { "@context": "https://schema.org", "@graph": [page] };
  const article = { "@type": "Article", "@id": id.article, headline: p.title.slice(0, 110), name: p.title, url: p.url, ...common, mainEntityOfPage: { "@id": id.page } };
  return { "@context": "https://schema.org", "@graph": [page, article] };
}
