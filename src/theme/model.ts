import { t } from "elysia";

const Url = t.Nullable(t.String({ maxLength: 2048, description: "absolute http(s) URL or a site-relative path" }));

export const ThemeModel = {
  theme: t.Object({
    logo_url: t.Nullable(t.String()),
    favicon_url: t.Nullable(t.String()),
    accent_color: t.Nullable(t.String()),
    name_override: t.Nullable(t.String()),
  }),
  update: t.Object({
    logo_url: t.Optional(Url),
    favicon_url: t.Optional(Url),
    accent_color: t.Optional(t.Nullable(t.String({ pattern: "^#[0-9a-fA-F]{6}$", description: "#rrggbb" }))),
    name_override: t.Optional(t.Nullable(t.String({ maxLength: 200 }))),
  }),
};
