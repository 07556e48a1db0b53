import { t } from "elysia";
import { Timestamp, Uuid } from "../../lib/model";
import { MCP_SCOPES } from "../../lib/scopes";

const token = t.Object({
  id: Uuid,
  name: t.String(),
  token_hint: t.String({ description: "prefix and last 4 characters, e.g. cms_mcp_…a1b2" }),
  scopes: t.Array(t.String()),
  created_at: Timestamp,
  last_used_at: t.Nullable(Timestamp),
  expires_at: t.Nullable(Timestamp),
});

export const McpTokenModel = {
  token,
  created: t.Object({
    id: Uuid,
    name: t.String(),
    token: t.String({ description: "the plaintext bearer (cms_mcp_…), shown in this response only" }),
    token_hint: t.String(),
    scopes: t.Array(t.String()),
    created_at: Timestamp,
    expires_at: t.Nullable(Timestamp),
  }),
  create: t.Object({
    name: t.String({ minLength: 1, maxLength: 200 }),
    scopes: t.Optional(
      t.Array(t.String({ enum: [...MCP_SCOPES] }), { minItems: 1, maxItems: MCP_SCOPES.length * 2, description: "defaults to the MCP scopes the calling key holds" }),
    ),
    expires_at: t.Optional(t.Nullable(t.String({ format: "date-time", description: "RFC 3339; omitted or null = never expires" }))),
  }),
  deleteQuery: t.Object({ id: t.Optional(t.String({ maxLength: 64, description: "token id (or pass { id } as a JSON body)" })) }),
  deleteBody: t.Optional(t.Nullable(t.Object({ id: t.Optional(t.String({ maxLength: 64 })) }))),
  idParams: t.Object({ ref: t.String({ maxLength: 64 }), id: t.String({ maxLength: 64 }) }),
};
