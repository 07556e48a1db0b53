// What the signed-in person may do on the settings screen, from their scopes in the project
// (GET /studio/api/p/{ref}/me). The server refuses anything else (403) whatever the screen shows.
import type { Me } from "../app/types";
import type { McpScope, MemberRole } from "./types";

export interface SettingsRights {
  /** projects:read: the project's own settings, semantic search's among them. */
  projectRead: boolean;
  editProject: boolean;
  theme: boolean;
  members: boolean;
  aiRead: boolean;
  aiWrite: boolean;
  /** The MCP scopes this person may put on a token (a token never holds more than its maker). */
  mcpScopes: McpScope[];
}

/** Every scope an MCP token may carry (src/lib/scopes.ts MCP_SCOPES), in the server's order. */
const MCP_SCOPE_LIST: readonly McpScope[] = ["content:read", "content:write", "content:publish", "ai:read", "model:write", "media:write", "theme:write"];
/** The scopes a new token starts with (src/lib/scopes.ts DEFAULT_MCP_SCOPES). */
export const DEFAULT_TOKEN_SCOPES: readonly McpScope[] = ["content:read", "content:write", "content:publish", "ai:read"];
export const MEMBER_ROLES: readonly MemberRole[] = ["viewer", "editor", "admin"];

export function rightsOf(me: Me | undefined): SettingsRights {
  const has = (s: string) => !!me?.scopes.includes(s);
  return {
    projectRead: has("projects:read"),
    editProject: has("projects:write"),
    theme: has("theme:write") || has("projects:write"),
    members: has("keys:write") || has("users:write"),
    aiRead: has("ai:read"),
    aiWrite: has("ai:write"),
    mcpScopes: MCP_SCOPE_LIST.filter(has),
  };
}
