// Who calls an operation, as the transports resolve it (src/auth.ts): the types only, so that the
// operation layer (core/operation.ts) and the services name a caller without importing the resolvers.
import type { Project } from "../../db/schema";

/** Who calls the admin API: an admin key, or a person signed in to the studio. */
export type AdminCaller = KeyCaller | PersonCaller;

interface KeyCaller {
  readonly kind: "admin_key";
  readonly keyId: string;
  /** The key's name, read with the key (recorded as the actor of its writes). */
  readonly keyName?: string;
  readonly scopes: readonly string[];
  /** null = may act on every project. */
  readonly projectIds: readonly string[] | null;
}

/**
 * A person signed in to the studio (src/studio/): the scopes their role holds in the project the
 * request names, read from the database on every request.
 */
export interface PersonCaller {
  readonly kind: "studio";
  readonly sessionId: string;
  readonly userId: string;
  readonly userEmail: string;
  readonly scopes: readonly string[];
  /** null = an instance owner (every project); else the projects the request may reach. */
  readonly projectIds: readonly string[] | null;
}

/** Who is calling /mcp: an MCP token or an OAuth access token, bound to one project. */
export interface McpCaller {
  readonly kind: "mcp_token" | "oauth";
  readonly credentialId: string;
  /** Names read with the credential, for the actor of its writes: the MCP token's name; OAuth: the user's email and the client's name. */
  readonly credentialName?: string | null;
  readonly userEmail?: string | null;
  readonly clientName?: string | null;
  readonly projectId: string;
  /** The project, read with the credential (one query per call). */
  readonly project: Project;
  readonly scopes: readonly string[];
  /** OAuth only: the user and client the grant belongs to. */
  readonly userId: string | null;
  readonly clientId: string | null;
  /** OAuth only: the scopes the user's role holds now (a grant never outlives a narrowed role). */
  readonly roleScopes: readonly string[] | null;
}
