import { eq, inArray, sql } from "drizzle-orm";
import type { z } from "zod";
import type { Db } from "../../db/client";
import { type Project, projects } from "../../db/schema";
import { AppError, isUniqueViolation } from "../errors";
import type { AdminCaller } from "../lib/caller";
import { commitNotice, contentCommitted, type PathChanges } from "../lib/commits";
import { isSlug, isUuid, uuidv7 } from "../lib/ids";
import { canonicalLocale } from "../lib/locales";
import { oneRow } from "../lib/rows";
import { dropFieldIndexes } from "../model/indexes";
import type { WriteContext } from "../write/context";
import { lockEndpointsForDelete } from "../write/outbox";
import { contentWrite, notifyContent } from "../write/unit";
import type { ProjectIn, ProjectOut } from "./model";

export const projectToWire = (p: Project): z.output<typeof ProjectOut> => ({
  id: p.id,
  slug: p.slug,
  name: p.name,
  default_locale: p.defaultLocale,
  locales: p.locales,
  public_base_url: p.publicBaseUrl,
  preview_url: p.previewUrl,
  fallbacks: p.fallbacks,
  auto_translate: p.autoTranslate,
  ai_monthly_token_cap: p.aiMonthlyTokenCap,
  media_quota_bytes: p.mediaQuotaBytes,
  created_at: p.createdAt.toISOString(),
  updated_at: p.updatedAt.toISOString(),
});

export async function findProject(db: Db, ref: string): Promise<Project | null> {
  if (!isUuid(ref) && !isSlug(ref)) return null;
  return (await db.query.projects.findFirst({ where: isUuid(ref) ? eq(projects.id, ref.toLowerCase()) : eq(projects.slug, ref) })) ?? null;
}

export async function listProjects(db: Db, caller: AdminCaller): Promise<Project[]> {
  const where = caller.projectIds === null ? undefined : inArray(projects.id, [...caller.projectIds]);
  return db.select().from(projects).where(where).orderBy(projects.createdAt, projects.id);
}

function normaliseLocales(defaultLocale: string, locales: readonly string[]): { def: string; list: string[] } {
  const def = canonicalTag(defaultLocale, "default_locale", "default_locale");
  return { def, list: [...new Set([def, ...locales.map((l) => canonicalTag(l, "locales", "locale"))])] };
}

function canonicalTag(tag: string, field: string, what: string): string {
  const c = canonicalLocale(tag);
  if (!c) throw new AppError("invalid_locale", `${what} "${tag}" is not a BCP 47 tag`, { field });
  return c;
}

export function normaliseBaseUrl(value: string | null | undefined, field = "public_base_url"): string | null {
  if (value === null || value === undefined || value === "") return null;
  const u = URL.parse(value);
  if (!u) throw new AppError("invalid_request", `${field} must be an absolute http(s) URL`, { field });
  if (u.protocol !== "http:" && u.protocol !== "https:") throw new AppError("invalid_request", `${field} must be http(s)`, { field });
  if (u.username || u.password || u.search || u.hash) throw new AppError("invalid_request", `${field} must not carry credentials, query or fragment`, { field });
  return u.toString().replace(/\/+$/, "");
}

/** The preview template: an absolute http(s) URL holding {token}, and no placeholder but {token}, {path} and {locale}. */
function normalisePreviewUrl(value: string | null | undefined): string | null {
  if (value === null || value === undefined || value === "") return null;
  const placeholders = [...value.matchAll(/\{([^{}]*)\}/g)].map((m) => m[1]);
  const unknown = placeholders.find((p) => p !== "token" && p !== "path" && p !== "locale");
  if (unknown !== undefined) throw new AppError("invalid_request", `preview_url may hold {token}, {path} and {locale}, not {${unknown}}`, { field: "preview_url" });
  if (!placeholders.includes("token")) throw new AppError("invalid_request", "preview_url must hold {token}, where the preview token goes", { field: "preview_url" });
  const u = URL.parse(value.replaceAll("{token}", "t").replaceAll("{path}", "p").replaceAll("{locale}", "l"));
  if (!u || (u.protocol !== "http:" && u.protocol !== "https:")) throw new AppError("invalid_request", "preview_url must be an absolute http(s) URL", { field: "preview_url" });
  return value;
}

/** A slug shaped like a UUID would make `{ref}` ambiguous. */
function checkSlug(slug: string | undefined): void {
  if (slug !== undefined && isUuid(slug)) throw new AppError("invalid_request", "slug must not look like an id (UUID)", { field: "slug" });
}

export async function createProject(db: Db, input: z.output<typeof ProjectIn>, caller: AdminCaller, now: Date): Promise<Project> {
  if (caller.projectIds !== null) throw new AppError("insufficient_scope", "a key limited to some projects cannot create projects");
  checkSlug(input.slug);
  const { def, list } = normaliseLocales(input.default_locale ?? "en", input.locales ?? []);
  return withSlugConflict(input.slug, async () =>
    oneRow(
      await db
        .insert(projects)
        .values({
          id: uuidv7(now.getTime()),
          slug: input.slug,
          name: input.name,
          defaultLocale: def,
          locales: list,
          publicBaseUrl: normaliseBaseUrl(input.public_base_url),
          previewUrl: normalisePreviewUrl(input.preview_url),
          mediaQuotaBytes: input.media_quota_bytes ?? null,
          fallbacks: checkFallbacks(input.fallbacks ?? {}, def, list),
          autoTranslate: { locales: checkAutoLocales(input.auto_translate?.locales ?? [], def, list) },
          aiMonthlyTokenCap: input.ai_monthly_token_cap ?? null,
          createdAt: now,
          updatedAt: now,
        })
        .returning(),
    ),
  );
}

export async function updateProject(db: Db, ctx: WriteContext, project: Project, input: Partial<z.output<typeof ProjectIn>>, now: Date): Promise<Project> {
  checkSlug(input.slug);
  return withSlugConflict(input.slug, () =>
    // contentWrite locks the row before it is re-read: concurrent partial updates must not lose each other's fields.
    contentWrite(db, ctx, project.id, async (tx, w) => {
      const current = oneRow(await tx.select().from(projects).where(eq(projects.id, project.id)));
      // Locales, slug or base URL: any answer may change its meaning; nothing is known to be gone.
      w.gone("");
      w.added("");
      const { def, list } = normaliseLocales(input.default_locale ?? current.defaultLocale, input.locales ?? current.locales);
      const changes = {
        slug: input.slug ?? current.slug,
        name: input.name ?? current.name,
        defaultLocale: def,
        locales: list,
        publicBaseUrl: input.public_base_url === undefined ? current.publicBaseUrl : normaliseBaseUrl(input.public_base_url),
        previewUrl: input.preview_url === undefined ? current.previewUrl : normalisePreviewUrl(input.preview_url),
        mediaQuotaBytes: input.media_quota_bytes === undefined ? current.mediaQuotaBytes : input.media_quota_bytes,
        fallbacks: checkFallbacks(input.fallbacks ?? current.fallbacks, def, list),
        autoTranslate: { locales: checkAutoLocales(input.auto_translate?.locales ?? current.autoTranslate.locales, def, list) },
        aiMonthlyTokenCap: input.ai_monthly_token_cap === undefined ? current.aiMonthlyTokenCap : input.ai_monthly_token_cap,
        updatedAt: now,
      };
      return oneRow(await tx.update(projects).set(changes).where(eq(projects.id, current.id)).returning());
    }),
  );
}

const withSlugConflict = <T>(slug: string | undefined, write: () => Promise<T>): Promise<T> =>
  write().catch((err) => {
    throw isUniqueViolation(err) ? new AppError("conflict", `a project with slug "${slug}" already exists`, { field: "slug" }) : err;
  });

export async function deleteProject(db: Db, project: Project): Promise<void> {
  // The cascade deletes the project's webhook endpoints and outbox too: locked first, as a dispatcher locks them.
  await db.transaction(async (tx) => {
    await lockEndpointsForDelete(tx, sql`array(select e.id from webhook_endpoints e where e.project_id = ${project.id})`);
    await tx.delete(projects).where(eq(projects.id, project.id));
  });
  const gone: PathChanges = { gone: [""], added: [] };
  await notifyContent(db, commitNotice(db, project.id, gone));
  contentCommitted(db, project.id, gone);
  // Drops the shared field indexes that only this project's model used (model/indexes.ts).
  await dropFieldIndexes(db, project.id);
}

/** A project locale by any case, or 400 naming the field. */
function projectTag(tag: string, list: readonly string[], field: string): string {
  const found = list.find((l) => l.toLowerCase() === tag.toLowerCase());
  if (!found) throw new AppError("invalid_locale", `${field}: "${tag}" is not one of the project's locales`, { field });
  return found;
}

/** Fallback chains: each locale (not the default) names project locales other than itself, without repeats; the default locale ends every chain anyway. */
function checkFallbacks(input: Record<string, string[]>, def: string, list: readonly string[]): Record<string, string[]> {
  const out: Record<string, string[]> = {};
  for (const [locale, chain] of Object.entries(input)) {
    const from = projectTag(locale, list, `fallbacks.${locale}`);
    if (from === def) throw new AppError("invalid_request", `fallbacks.${locale}: the default locale falls back to nothing`, { field: `fallbacks.${locale}` });
    const tags = chain.map((t, i) => projectTag(t, list, `fallbacks.${locale}.${i}`));
    if (tags.includes(from) || new Set(tags).size !== tags.length)
      throw new AppError("invalid_request", `fallbacks.${locale}: a chain names each other locale once, never the locale itself`, { field: `fallbacks.${locale}` });
    out[from] = tags;
  }
  return out;
}

function checkAutoLocales(locales: readonly string[], def: string, list: readonly string[]): string[] {
  const tags = [...new Set(locales.map((t, i) => projectTag(t, list, `auto_translate.locales.${i}`)))];
  if (tags.includes(def)) throw new AppError("invalid_request", "auto_translate.locales: the default locale is the source, not a translation", { field: "auto_translate.locales" });
  return tags;
}
