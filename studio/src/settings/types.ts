// The settings screen's wire shapes, taken from the server's zod declarations (types only: nothing
// of the server is bundled into the studio).
import type { z } from "zod";
import type { KindOut, ProviderOut } from "../../../src/ai/model";
import type { MCP_SCOPES } from "../../../src/lib/scopes";
import type { McpTokenOut } from "../../../src/mcp-tokens/model";
import type { SemanticOut } from "../../../src/search/model";
import type { ThemeOut } from "../../../src/theme/model";
import type { MemberOut } from "../../../src/users/model";

export type Theme = z.output<typeof ThemeOut>;
export type Member = z.output<typeof MemberOut>;
export type Provider = z.output<typeof ProviderOut>;
/** A provider as its edit form reads it: with the plain key (GET /admin/ai/providers/{id}). */
export type ProviderWithKey = Provider & { api_key: string | null };
export type Kind = z.output<typeof KindOut>;
export type McpToken = z.output<typeof McpTokenOut>;
/** A token as its creation answers it, the plaintext included (this answer only). */
export type CreatedToken = Omit<McpToken, "last_used_at"> & { token: string };
export type McpScope = (typeof MCP_SCOPES)[number];
export type MemberRole = Member["role"];
/** The project's semantic search as GET/PUT /admin/p/{ref}/search/semantic answer it. */
export type SemanticState = z.output<typeof SemanticOut>;
