// A media reference as delivery answers it: { id, url, width, height, alt, srcset, placeholder },
// alt in the request's locale (else the default locale's), so a frontend writes <img srcset>
// without another call. Pure: the row comes from the delivery statement.

import { isRaster } from "../media/sniff";
import { versionTag } from "../media/variants";
import type { DeliveryProject } from "./cache";

/** A media row as the delivery statement gives it (delivery/fields.ts). */
export interface MediaRef {
  readonly media: true;
  readonly id: string;
  readonly filename: string;
  readonly hash: string;
  readonly type: string;
  readonly width: number | null;
  readonly height: number | null;
  readonly alt: Record<string, string>;
  readonly placeholder: string | null;
  readonly fx: number | null;
  readonly fy: number | null;
}

export interface MediaView {
  id: string;
  url: string;
  type: string;
  width: number | null;
  height: number | null;
  alt: string;
  srcset: string | null;
  placeholder: string | null;
}

export function mediaView(m: MediaRef, project: DeliveryProject, locale: string): MediaView {
  const v = versionTag(m.hash, m.fx, m.fy);
  const base = project.media?.base ?? "";
  const url = `${base}/api/p/${project.slug}/media/${m.id}/${encodeURIComponent(m.filename)}?v=${v}`;
  const widths = (project.media?.widths ?? []).filter((w) => m.width === null || w <= m.width);
  const srcset = isRaster(m.type) && widths.length > 0 ? widths.map((w) => `${url}&w=${w}&fm=auto ${w}w`).join(", ") : null;
  return {
    id: m.id,
    url,
    type: m.type,
    width: m.width,
    height: m.height,
    alt: m.alt[locale === "" ? project.defaultLocale : locale] ?? m.alt[project.defaultLocale] ?? "",
    srcset,
    placeholder: m.placeholder,
  };
}
