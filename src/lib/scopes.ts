export const ADMIN_SCOPES = [
  "projects:read",
  "projects:write",
  "content:read",
  "content:write",
  "content:publish",
  "ai:read",
  "ai:write",
  "keys:write",
  "users:write",
  "model:write",
  "webhooks:write",
  "media:write",
  "theme:write",
] as const;
export type Scope = (typeof ADMIN_SCOPES)[number];

/** Scopes an MCP credential (token or OAuth grant) may carry. */
export const MCP_SCOPES = ["content:read", "content:write", "content:publish", "ai:read", "model:write", "media:write", "theme:write"] as const;
/**
 * What an MCP credential gets when none is named (a token minted without `scopes`, an OAuth request
 * without `scope`) and what the 401 challenge advertises: model:write changes what every other write
 * is checked against, so it is given only when asked for by name. content:publish is given: an
 * unnamed request keeps the publishing right an agent client expects; the person withholds it on
 * the consent page, or a token is minted without it.
 */
export const DEFAULT_MCP_SCOPES: readonly (typeof MCP_SCOPES)[number][] = ["content:read", "content:write", "content:publish", "ai:read"];

/**
 * What changes what the public sees (publish, unpublish, archive, restore, delete, restore
 * a revision or from the trash, scheduling) needs content:publish; content:write alone edits
 * drafts. An operation declaring this rule is also one a person can approve for an MCP caller that
 * holds content:write but not content:publish (src/approvals/).
 */
export const PUBLISH_SCOPES: readonly Scope[] = ["content:publish"];
/** The scope a person's approval stands in for. */
export const PUBLISH_SCOPE: Scope = "content:publish";

/** A user's role in one project; an instance owner holds `owner` in every project. */
export const PROJECT_ROLES = ["viewer", "editor", "admin"] as const;
export type ProjectRole = (typeof PROJECT_ROLES)[number];
export type EffectiveRole = ProjectRole | "owner";

/** What a role holds in the project it is held in (the owner: everything, everywhere). */
export const ROLE_SCOPES: Record<EffectiveRole, readonly Scope[]> = {
  owner: ADMIN_SCOPES,
  admin: ["projects:read", "content:read", "content:write", "content:publish", "ai:read", "ai:write", "keys:write", "model:write", "webhooks:write", "media:write", "theme:write"],
  editor: ["projects:read", "content:read", "content:write", "content:publish", "ai:read", "media:write"],
  viewer: ["projects:read", "content:read", "ai:read"],
};

export const isProjectRole = (s: unknown): s is ProjectRole => typeof s === "string" && (PROJECT_ROLES as readonly string[]).includes(s);

/** The role a user holds in a project: an instance owner is owner everywhere, else the membership's role (or none). */
export const effectiveRole = (instanceRole: string | null | undefined, memberRole: ProjectRole | null | undefined): EffectiveRole | null => (instanceRole === "owner" ? "owner" : (memberRole ?? null));
export const scopesOfRole = (role: EffectiveRole | null): readonly string[] => (role ? ROLE_SCOPES[role] : []);

export const isScope = (s: string): s is Scope => (ADMIN_SCOPES as readonly string[]).includes(s);

/** What an operation needs: every scope listed, or any one of the alternatives. */
export type ScopeRule = readonly Scope[] | { readonly anyOf: readonly Scope[] };

/** The one authorization check, asked by every transport: the scopes needed that the caller does not hold. */
export function missingScopes<S extends string>(needed: readonly S[], held: readonly string[]): S[] {
  return needed.filter((s) => !held.includes(s));
}

/** As missingScopes, for a rule: with alternatives, all of them when none is held. */
export function unmetScopes(rule: ScopeRule, held: readonly string[]): Scope[] {
  if ("anyOf" in rule) return rule.anyOf.some((s) => held.includes(s)) ? [] : [...rule.anyOf];
  return missingScopes(rule, held);
}
