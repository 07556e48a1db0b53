import { z } from "zod";
import { Id, Timestamp } from "../lib/schemas";
import { MCP_SCOPES } from "../lib/scopes";

export const McpTokenOut = z.object({
  id: Id,
  name: z.string(),
  token_hint: z.string().describe("prefix and last 4 characters, e.g. cms_mcp_…a1b2"),
  scopes: z.array(z.string()),
  created_at: Timestamp,
  last_used_at: Timestamp.nullable(),
  expires_at: Timestamp.nullable(),
});
export const McpTokenIn = z.object({
  name: z.string().min(1).max(200),
  scopes: z
    .array(z.enum(MCP_SCOPES))
    .min(1)
    .max(MCP_SCOPES.length * 2)
    .optional()
    .describe("defaults to content:read, content:write and ai:read, those the calling key holds; model:write only when named"),
  expires_at: z.string().nullable().optional().describe("RFC 3339; omitted or null = never expires"),
});
