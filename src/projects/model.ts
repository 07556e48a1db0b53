import { z } from "zod";
import { Id, Slug, Timestamp } from "../lib/schemas";

export const ProjectOut = z.object({
  id: Id,
  slug: z.string(),
  name: z.string(),
  default_locale: z.string(),
  locales: z.array(z.string()),
  public_base_url: z.string().nullable(),
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
});
