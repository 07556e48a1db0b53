import { t } from "elysia";
import { Timestamp, Uuid } from "../lib/model";

const Meta = t.Object(
  {
    title: t.Optional(t.String({ maxLength: 500 })),
    slug: t.Optional(t.String({ pattern: "^[a-z0-9](?:[a-z0-9-]{0,62}[a-z0-9])?$" })),
    description: t.Optional(t.String({ maxLength: 1000 })),
    og_image: t.Optional(t.String({ maxLength: 2048 })),
    canonical: t.Optional(t.Nullable(t.String({ maxLength: 2048, description: "overrides the canonical URL in this locale" }))),
    robots: t.Optional(t.Nullable(t.String({ maxLength: 200 }))),
    noindex: t.Optional(t.Boolean({ description: "robots noindex in this locale; also leaves it out of the sitemap" })),
  },
  { description: "localised title, slug and SEO fields (other fields are ignored)" },
);

export const TranslationModel = {
  translation: t.Object({
    id: Uuid,
    node_id: Uuid,
    locale: t.String(),
    meta: t.Record(t.String(), t.Unknown()),
    blocks: t.Record(t.String(), t.Record(t.String(), t.Unknown())),
    status: t.Union([t.Literal("draft"), t.Literal("published")]),
    created_at: Timestamp,
    updated_at: Timestamp,
  }),
  upsert: t.Object({
    meta: t.Optional(Meta),
    blocks: t.Optional(t.Record(t.String({ format: "uuid" }), t.Record(t.String(), t.Unknown()), { description: "block id → partial data, deep-merged over the block on read" })),
    status: t.Optional(t.Union([t.Literal("draft"), t.Literal("published")], { default: "published" })),
  }),
  params: t.Object({ ref: t.String({ maxLength: 64 }), id: t.String({ format: "uuid" }), locale: t.String({ maxLength: 35 }) }),
};
