// The one indexability rule of delivery (decisions.md), used by the page renderer and the sitemap
// alike, so that robots, canonical, hreflang and the sitemap always tell one story.
import type { DeliveryProject } from "./cache";

/** SEO fields as stored: a node's `seo`, or a translation's `meta` (which wins field by field). */
export type SeoFields = Readonly<Record<string, unknown>>;

interface VersionSeo {
  canonical: string;
  robots: string;
  /** Listed in the sitemap and in hreflang sets. */
  indexable: boolean;
}

/** A non-blank string, else null. */
export const str = (v: unknown): string | null => (typeof v === "string" && v.trim() !== "" ? v : null);

/** `noindex` (or `none`, which means noindex,nofollow) among the comma-separated directives. */
function robotsSayNoindex(robots: string | null): boolean {
  if (robots === null) return false;
  return robots.split(",").some((d) => {
    const t = d.trim().toLowerCase();
    return t === "noindex" || t === "none";
  });
}

/** A root-relative URL made absolute under public_base_url (when there is one). */
export function absoluteUrl(project: DeliveryProject, url: string | null): string | null {
  if (url === null) return null;
  if (url.startsWith("/") && !url.startsWith("//") && project.publicBaseUrl) return project.publicBaseUrl + url;
  return url;
}

/** Same URL once parsed (host case, default port, percent-encoding of the path); else same text. */
function sameUrl(a: string, b: string): boolean {
  if (a === b) return true;
  try {
    return new URL(a).href === new URL(b).href;
  } catch {
    return false;
  }
}

/**
 * Canonical, robots and indexability of one published (node, locale) version. `meta` is the
 * locale's published translation (null for the default locale); its fields win over the node's,
 * except `canonical`: a node's `seo.canonical` naming its own default URL does not make its
 * translations canonical to that URL, while one naming another URL makes every version a duplicate
 * of it (a translation may still set its own `meta.canonical`). Indexable = not noindex (flag or
 * robots string) and canonical to itself. Fallback answers are never indexable (render.ts).
 */
export function versionSeo(project: DeliveryProject, seo: SeoFields, meta: SeoFields | null, ownUrl: string, defaultUrl: string): VersionSeo {
  const flag = (meta?.noindex ?? seo.noindex) === true;
  const given = str(meta?.robots ?? seo.robots);
  const noindex = flag || robotsSayNoindex(given);
  const robots = given === null ? (noindex ? "noindex,follow" : "index,follow") : flag && !robotsSayNoindex(given) ? withNoindex(given) : given;
  const nodeCanonical = absoluteUrl(project, str(seo.canonical));
  const canonical = meta === null ? (nodeCanonical ?? ownUrl) : (absoluteUrl(project, str(meta.canonical)) ?? (nodeCanonical !== null && !sameUrl(nodeCanonical, defaultUrl) ? nodeCanonical : ownUrl));
  return { canonical, robots, indexable: !noindex && sameUrl(canonical, ownUrl) };
}

/** The noindex flag wins over a robots string that does not say it (`index` and `all` dropped). */
function withNoindex(robots: string): string {
  const kept = robots
    .split(",")
    .map((d) => d.trim())
    .filter((d) => d !== "" && !["index", "all"].includes(d.toLowerCase()));
  return ["noindex", ...kept].join(",");
}

/**
 * The hreflang set of a node: its indexable versions, plus `x-default` (the default locale's
 * URL) when that version is indexable. Empty when no version is.
 */
export function hreflangSet(defaultLocale: string, versions: readonly { locale: string; href: string; indexable: boolean }[]): { locale: string; href: string }[] {
  const out = versions.filter((v) => v.indexable).map((v) => ({ locale: v.locale, href: v.href }));
  const def = versions.find((v) => v.locale === defaultLocale && v.indexable);
  if (def) out.push({ locale: "x-default", href: def.href });
  return out;
}
