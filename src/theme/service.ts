import { eq } from "drizzle-orm";
import type { z } from "zod";
import type { Db } from "../../db/client";
import { type Project, themes } from "../../db/schema";
import { AppError } from "../errors";
import { normaliseBaseUrl } from "../projects/service";
import type { WriteContext } from "../write/context";
import { contentWrite } from "../write/unit";
import type { ThemeOut } from "./model";

type ThemeWire = z.output<typeof ThemeOut>;

export async function getTheme(db: Db, projectId: string): Promise<ThemeWire> {
  const [th] = await db.select().from(themes).where(eq(themes.projectId, projectId)).limit(1);
  return { logo_url: th?.logoUrl ?? null, favicon_url: th?.faviconUrl ?? null, accent_color: th?.accentColor ?? null, name_override: th?.nameOverride ?? null };
}

function assetUrl(value: string | null, field: string): string | null {
  if (value === null) return null;
  // Site-relative asset; browsers read "/\\" like "//" (another host), so backslashes and controls are refused.
  if (value.startsWith("/") && !value.startsWith("//")) {
    if (/[\\\u0000-\u001f\u007f]/.test(value)) throw new AppError("invalid_request", `${field} must not contain backslashes or control characters`, { field });
    return value;
  }
  return normaliseBaseUrl(value, field) === null ? null : new URL(value).toString();
}

/** Partial update: omitted fields are kept, null clears (accent_color is checked as #rrggbb by the operation's schema). */
// contentWrite locks the project first, so concurrent partial updates cannot lose each other's fields.
export const updateTheme = (db: Db, ctx: WriteContext, project: Project, input: Partial<ThemeWire>, now: Date): Promise<ThemeWire> =>
  contentWrite(db, ctx, project.id, async (tx) => {
    const current = await getTheme(tx, project.id);
    const next: ThemeWire = {
      logo_url: input.logo_url === undefined ? current.logo_url : assetUrl(input.logo_url, "logo_url"),
      favicon_url: input.favicon_url === undefined ? current.favicon_url : assetUrl(input.favicon_url, "favicon_url"),
      accent_color: input.accent_color === undefined ? current.accent_color : (input.accent_color?.toLowerCase() ?? null),
      name_override: input.name_override === undefined ? current.name_override : input.name_override,
    };
    const row = { logoUrl: next.logo_url, faviconUrl: next.favicon_url, accentColor: next.accent_color, nameOverride: next.name_override, updatedAt: now };
    await tx
      .insert(themes)
      .values({ projectId: project.id, ...row })
      .onConflictDoUpdate({ target: themes.projectId, set: row });
    return next;
  });
