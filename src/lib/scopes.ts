export const ADMIN_SCOPES = [
  "projects:read",
  "projects:write",
  "content:read",
  "content:write",
  "ai:read",
  "ai:write",
  "keys:write",
] as const;
export type Scope = (typeof ADMIN_SCOPES)[number];

/** Scopes an MCP credential (token or OAuth grant) may carry. */
export const MCP_SCOPES = ["content:read", "content:write", "ai:read"] as const;
export type McpScope = (typeof MCP_SCOPES)[number];

export const ROLE_SCOPES: Record<"owner" | "editor" | "viewer", readonly Scope[]> = {
  owner: ADMIN_SCOPES,
  editor: ["projects:read", "content:read", "content:write", "ai:read"],
  viewer: ["projects:read", "content:read", "ai:read"],
};

export const isScope = (s: string): s is Scope => (ADMIN_SCOPES as readonly string[]).includes(s);

/** The one authorization check, asked by every transport: the scopes needed that the caller does not hold. */
export function missingScopes<S extends string>(needed: readonly S[], held: readonly string[]): S[] {
  return needed.filter((s) => !held.includes(s));
}
