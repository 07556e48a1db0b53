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

/** Node identifiers: fragments of the canonical URL, or blank nodes when it is not absolute. */
function ids(url: string): { page: string; article: string } {
  const absolute = /^https?:\/\//i.test(url) && !url.includes("#");
  return absolute ? { page: `${url}#webpage`, article: `${url}#article` } : { page: "_:webpage", article: "_:article" };
}

export function pageJsonLd(p: JsonLdInput): Record<string, unknown> {
  const id = ids(p.url);
  const common = {
    inLanguage: p.language,
    ...(p.description ? { description: p.description } : {}),
    ...(p.image ? { image: p.image } : {}),
    ...(p.publishedAt ? { datePublished: p.publishedAt } : {}),
    dateModified: p.modifiedAt,
  };
  const page: Record<string, unknown> = {
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
  const graph: Record<string, unknown>[] = [page];
  if (p.article) {
    graph.push({
      "@type": "Article",
      "@id": id.article,
      headline: p.title.slice(0, 110),
      name: p.title,
      url: p.url,
      ...common,
      mainEntityOfPage: { "@id": id.page },
    });
  }
  return { "@context": "https://schema.org", "@graph": graph };
}
