import { z } from "zod";
import { Id, Slug, Timestamp } from "../lib/schemas";

export const ProjectOut = z.object({
  id: Id,
  slug: z.string(),
  name: z.string(),
  default_locale: z.string(),
  locales: z.array(z.string()),
  public_base_url: z.string().nullable(),
  preview_url: z.string().nullable().describe("the site's preview template: {token} (a fresh preview token), {path}, {locale}"),
  media_quota_bytes: z.number().int().nullable().describe("media storage quota in bytes; null: MEDIA_QUOTA_BYTES"),
  fallbacks: z
    .record(z.string(), z.array(z.string()))
    .describe('each locale\'s fallback chain, e.g. { "de-AT": ["de", "en"] }; a locale not named falls back by RFC 4647 lookup, then to the default locale'),
  auto_translate: z.object({ locales: z.array(z.string()) }).describe("the locales machine-translated (as drafts) when a source is published"),
  ai_monthly_token_cap: z.number().int().nullable().describe("tokens the project's AI calls may use per calendar month (UTC); null: no cap"),
  created_at: Timestamp,
  updated_at: Timestamp,
});
const Tag = z.string().min(2).max(35).describe("BCP 47 tag");
export const ProjectIn = z.object({
  slug: Slug,
  name: z.string().min(1).max(200),
  default_locale: Tag.optional(),
  locales: z.array(Tag).max(100).optional(),
  public_base_url: z.string().max(2048).nullable().optional().describe("public origin of the website, e.g. https://example.com"),
  preview_url: z
    .string()
    .max(2048)
    .nullable()
    .optional()
    .describe("the site's draft-mode URL as a template, e.g. https://site.example/api/draft?token={token}&path={path}: {token} is required; {path} and {locale} are optional"),
  media_quota_bytes: z
    .number()
    .int()
    .min(0)
    .max(2 ** 50)
    .nullable()
    .optional()
    .describe("media storage quota in bytes; null: the instance's MEDIA_QUOTA_BYTES"),
  fallbacks: z
    .record(z.string(), z.array(z.string()).max(10))
    .optional()
    .describe(
      'each locale\'s fallback chain on delivery, e.g. { "de-AT": ["de", "en"] } (project locales only; the default locale always ends a chain; [] = straight to the default locale); a locale not named falls back by RFC 4647 lookup',
    ),
  auto_translate: z
    .object({ locales: z.array(z.string()).max(100) })
    .optional()
    .describe("machine-translate into these locales, as drafts, when a source is published (opt-in per locale)"),
  ai_monthly_token_cap: z
    .number()
    .int()
    .min(0)
    .max(2 ** 50)
    .nullable()
    .optional()
    .describe("tokens the project's AI calls may use per calendar month (UTC); calls past it answer 429 quota_exceeded; null: no cap"),
});
