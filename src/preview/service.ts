// Preview tokens: short-lived read-only bearers (cms_pv_…) for the delivery API's
// preview mode. Stored as SHA-256 hashes; checked against the table on every preview read, so a
// revoked token stops working at once on every instance.
import { and, desc, eq } from "drizzle-orm";
import type { z } from "zod";
import type { Db } from "../../db/client";
import { type Actor, type Project, previewTokens } from "../../db/schema";
import { AppError, notFound } from "../errors";
import { isUuid, uuidv7 } from "../lib/ids";
import { oneRow } from "../lib/rows";
import { generateToken, hashToken, tokenHint } from "../lib/tokens";
import type { PreviewTokenIn, PreviewTokenOut } from "./model";

const PREVIEW_PREFIX = "cms_pv_";
const DEFAULT_TTL_SECONDS = 3600;

type Row = typeof previewTokens.$inferSelect;

export const previewTokenToWire = (t: Row, now: Date): z.input<typeof PreviewTokenOut> => ({
  id: t.id,
  name: t.name,
  token_hint: t.tokenHint,
  created_by: { kind: t.createdBy.kind, id: t.createdBy.id, name: t.createdBy.name },
  created_at: t.createdAt.toISOString(),
  expires_at: t.expiresAt.toISOString(),
  expired: t.expiresAt.getTime() <= now.getTime(),
});

export async function createPreviewToken(
  db: Db,
  project: Project,
  input: z.output<typeof PreviewTokenIn>,
  createdBy: Actor,
  maxTtlSeconds: number,
  now: Date,
): Promise<{ row: Row; plaintext: string }> {
  const ttl = input.ttl_seconds ?? Math.min(DEFAULT_TTL_SECONDS, maxTtlSeconds);
  if (ttl > maxTtlSeconds) throw new AppError("invalid_request", `ttl_seconds must be at most ${maxTtlSeconds}`, { field: "ttl_seconds", max: maxTtlSeconds });
  const plaintext = generateToken(PREVIEW_PREFIX);
  const row = oneRow(
    await db
      .insert(previewTokens)
      .values({
        id: uuidv7(now.getTime()),
        projectId: project.id,
        name: input.name ?? null,
        tokenHash: hashToken(plaintext),
        tokenHint: tokenHint(plaintext),
        createdBy,
        createdAt: now,
        expiresAt: new Date(now.getTime() + ttl * 1000),
      })
      .returning(),
  );
  return { row, plaintext };
}

export const listPreviewTokens = (db: Db, project: Project): Promise<Row[]> =>
  db.select().from(previewTokens).where(eq(previewTokens.projectId, project.id)).orderBy(desc(previewTokens.createdAt), desc(previewTokens.id));

export async function deletePreviewToken(db: Db, project: Project, id: string): Promise<void> {
  if (!isUuid(id)) throw notFound("preview token");
  const removed = await db
    .delete(previewTokens)
    .where(and(eq(previewTokens.projectId, project.id), eq(previewTokens.id, id.toLowerCase())))
    .returning({ id: previewTokens.id });
  if (removed.length === 0) throw notFound("preview token");
}

/**
 * The delivery check: a token of this project that has not expired, or 401. A token of another
 * project, a revoked one and a made-up one are alike unknown (looked up by hash: no timing to learn).
 */
export async function checkPreviewToken(db: Db, projectId: string, token: string, now: Date): Promise<void> {
  const [row] = token.startsWith(PREVIEW_PREFIX)
    ? await db
        .select({ projectId: previewTokens.projectId, expiresAt: previewTokens.expiresAt })
        .from(previewTokens)
        .where(eq(previewTokens.tokenHash, hashToken(token)))
        .limit(1)
    : [];
  if (!row || row.projectId !== projectId)
    throw new AppError("preview_token_invalid", "the preview token is not valid for this project (unknown or revoked)", undefined, { "www-authenticate": 'Bearer error="invalid_token"' });
  if (row.expiresAt.getTime() <= now.getTime())
    throw new AppError(
      "preview_token_expired",
      `the preview token expired at ${row.expiresAt.toISOString()}; create a new one`,
      { expired_at: row.expiresAt.toISOString() },
      { "www-authenticate": 'Bearer error="invalid_token"' },
    );
}
