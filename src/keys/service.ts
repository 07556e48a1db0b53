import { and, desc, eq, isNull } from "drizzle-orm";
import type { z } from "zod";
import type { Db } from "../../db/client";
import { adminKeys } from "../../db/schema";
import { AppError, notFound } from "../errors";
import type { AdminCaller } from "../lib/caller";
import { isUuid, uuidv7 } from "../lib/ids";
import { oneRow } from "../lib/rows";
import { ADMIN_SCOPES, isScope } from "../lib/scopes";
import { generateToken, hashToken, tokenHint } from "../lib/tokens";
import type { KeyOut } from "./model";

export type AdminKey = typeof adminKeys.$inferSelect;

export const keyToWire = (k: AdminKey): z.output<typeof KeyOut> => ({
  id: k.id,
  name: k.name,
  key_hint: k.keyHint,
  scopes: k.scopes,
  project_ids: k.projectIds ?? null,
  created_at: k.createdAt.toISOString(),
  last_used_at: k.lastUsedAt?.toISOString() ?? null,
  revoked_at: k.revokedAt?.toISOString() ?? null,
});

type KeyInput = { name: string; scopes?: string[]; project_ids?: string[] | null };

/** Inserts a key; the plaintext is returned once and never stored. `caller` null = CLI/bootstrap. */
export async function createAdminKey(db: Db, input: KeyInput, caller: AdminCaller | null, now: Date, plaintext: string = generateToken("cms_ak_")): Promise<{ key: AdminKey; plaintext: string }> {
  const scopes = [...new Set(input.scopes ?? (caller ? [...caller.scopes] : [...ADMIN_SCOPES]))];
  for (const s of scopes) {
    if (!isScope(s)) throw new AppError("invalid_request", `unknown scope "${s}"`, { field: "scopes", allowed: ADMIN_SCOPES });
    // A key can only mint keys with scopes it holds itself.
    if (caller && !caller.scopes.includes(s)) throw new AppError("insufficient_scope", `cannot grant ${s}: this key does not hold it`, { required: s });
  }
  let projectIds = input.project_ids ?? null;
  if (projectIds) {
    // An empty list would be a key for no project, visible to every project-limited key manager.
    if (projectIds.length === 0) throw new AppError("invalid_request", "project_ids must list at least one project (or be null for all)", { field: "project_ids" });
    projectIds = [...new Set(projectIds.map((p) => p.toLowerCase()))];
    if (projectIds.some((p) => !isUuid(p))) throw new AppError("invalid_request", "project_ids must be project ids", { field: "project_ids" });
  }
  const limit = caller?.projectIds;
  if (limit) {
    if (!projectIds) throw new AppError("insufficient_scope", "a key limited to projects can only mint keys limited to them");
    if (projectIds.some((p) => !limit.includes(p))) throw new AppError("not_found", "project not found");
  }
  const key = oneRow(
    await db
      .insert(adminKeys)
      .values({
        id: uuidv7(now.getTime()),
        name: input.name,
        keyHash: hashToken(plaintext),
        keyHint: tokenHint(plaintext),
        scopes,
        projectIds,
        createdBy: caller?.kind === "admin_key" ? caller.keyId : null,
        createdAt: now,
      })
      .returning(),
  );
  return { key, plaintext };
}

const visibleTo = (k: AdminKey, caller: AdminCaller | null): boolean => !caller?.projectIds || (k.projectIds?.every((p) => caller.projectIds?.includes(p)) ?? false);

export const listAdminKeys = async (db: Db, caller: AdminCaller | null): Promise<AdminKey[]> =>
  (await db.select().from(adminKeys).orderBy(desc(adminKeys.createdAt), desc(adminKeys.id))).filter((k) => visibleTo(k, caller));

export async function revokeAdminKey(db: Db, id: string, caller: AdminCaller | null, now: Date): Promise<void> {
  if (!isUuid(id)) throw notFound("key");
  const [k] = await db.select().from(adminKeys).where(eq(adminKeys.id, id)).limit(1);
  if (!k || !visibleTo(k, caller)) throw notFound("key");
  await db
    .update(adminKeys)
    .set({ revokedAt: now })
    .where(and(eq(adminKeys.id, id), isNull(adminKeys.revokedAt)));
}
