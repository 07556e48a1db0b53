import { and, desc, eq } from "drizzle-orm";
import type { z } from "zod";
import type { Db } from "../../db/client";
import { mcpTokens, type Project } from "../../db/schema/index";
import { AppError, notFound } from "../errors";
import type { AdminCaller } from "../lib/caller";
import { isUuid, uuidv7 } from "../lib/ids";
import { oneRow } from "../lib/rows";
import { DEFAULT_MCP_SCOPES, MCP_SCOPES } from "../lib/scopes";
import { generateToken, hashToken, tokenHint } from "../lib/tokens";
import type { McpTokenIn, McpTokenOut } from "./model";

export const tokenToWire = (t: typeof mcpTokens.$inferSelect): z.output<typeof McpTokenOut> => ({
  id: t.id,
  name: t.name,
  token_hint: t.tokenHint,
  scopes: t.scopes,
  created_at: t.createdAt.toISOString(),
  last_used_at: t.lastUsedAt?.toISOString() ?? null,
  expires_at: t.expiresAt?.toISOString() ?? null,
});

/**
 * Mints a token for one project; the plaintext is returned once and only its SHA-256 is stored.
 * Like admin keys, a caller can only hand out scopes it holds itself.
 */
export async function createMcpToken(db: Db, project: Project, input: z.output<typeof McpTokenIn>, caller: AdminCaller, now: Date) {
  const scopes = [...new Set(input.scopes ?? DEFAULT_MCP_SCOPES.filter((s) => caller.scopes.includes(s)))];
  // The input schema admits MCP scopes only; a caller can still name one it does not hold.
  const denied = scopes.find((s) => !caller.scopes.includes(s));
  if (denied) throw new AppError("insufficient_scope", `cannot grant ${denied}: this key does not hold it`, { required: denied });
  // Only the default can be empty (the input schema wants at least one scope when they are named).
  if (scopes.length === 0) throw new AppError("insufficient_scope", `an MCP token needs at least one of the scopes ${MCP_SCOPES.join(", ")}`, { field: "scopes" });
  const expiresAt = input.expires_at ? new Date(input.expires_at) : null;
  if (expiresAt && Number.isNaN(expiresAt.getTime())) throw new AppError("invalid_request", "expires_at must be an RFC 3339 date-time", { field: "expires_at" });
  if (expiresAt && expiresAt.getTime() <= now.getTime()) throw new AppError("invalid_request", "expires_at must be in the future", { field: "expires_at" });
  const plaintext = generateToken("cms_mcp_");
  const token = oneRow(
    await db
      .insert(mcpTokens)
      .values({
        id: uuidv7(now.getTime()),
        projectId: project.id,
        name: input.name,
        tokenHash: hashToken(plaintext),
        tokenHint: tokenHint(plaintext),
        scopes,
        createdAt: now,
        expiresAt,
      })
      .returning(),
  );
  return { token, plaintext };
}

export const listMcpTokens = (db: Db, project: Project) => db.select().from(mcpTokens).where(eq(mcpTokens.projectId, project.id)).orderBy(desc(mcpTokens.createdAt), desc(mcpTokens.id));

/** Deletes the row: the bearer check reads the table on every call, so the token stops working at once everywhere. */
export async function deleteMcpToken(db: Db, project: Project, id: string): Promise<void> {
  if (!isUuid(id)) throw notFound("MCP token");
  const removed = await db
    .delete(mcpTokens)
    .where(and(eq(mcpTokens.projectId, project.id), eq(mcpTokens.id, id.toLowerCase())))
    .returning({ id: mcpTokens.id });
  if (removed.length === 0) throw notFound("MCP token");
}
