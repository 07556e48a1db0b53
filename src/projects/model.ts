import { t } from "elysia";
import { Slug, Timestamp, Uuid } from "../lib/model";

const Locale = t.String({ minLength: 2, maxLength: 35, description: "BCP 47 tag" });
const BaseUrl = t.Nullable(t.String({ maxLength: 2048, description: "public origin of the website, e.g. https://example.com" }));

export const ProjectModel = {
  project: t.Object({
    id: Uuid,
    slug: t.String(),
    name: t.String(),
    default_locale: t.String(),
    locales: t.Array(t.String()),
    public_base_url: t.Nullable(t.String()),
    created_at: Timestamp,
    updated_at: Timestamp,
  }),
  create: t.Object({
    slug: Slug,
    name: t.String({ minLength: 1, maxLength: 200 }),
    default_locale: t.Optional(Locale),
    locales: t.Optional(t.Array(Locale, { maxItems: 100 })),
    public_base_url: t.Optional(BaseUrl),
  }),
  update: t.Object({
    slug: t.Optional(Slug),
    name: t.Optional(t.String({ minLength: 1, maxLength: 200 })),
    default_locale: t.Optional(Locale),
    locales: t.Optional(t.Array(Locale, { maxItems: 100 })),
    public_base_url: t.Optional(BaseUrl),
  }),
};
