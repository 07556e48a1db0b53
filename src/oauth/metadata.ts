import type { Config } from "../config";
import { MCP_SCOPES } from "../lib/scopes";
import { AUTH_METHODS, GRANT_TYPES } from "./model";

/** The one protected resource this server issues tokens for (RFC 8707 audience). */
const mcpResource = (config: Config): string => `${config.publicUrl}/mcp`;

/**
 * The resource an RFC 8707 `resource` parameter names, or null when it names another server.
 * This server protects exactly one resource, so what clients really send is accepted as it:
 * the canonical URI, the same with a trailing slash (URL libraries add one), the bare origin
 * (clients deriving the resource from the server's origin), in any spelling a URL parser
 * normalises (scheme and host case, default port). A query or fragment, another origin or another
 * path is another resource. Absent, it is the default resource (RFC 8707 §2: the authorization
 * server may assume one; some MCP clients, e.g. older Claude Code and Codex, omit it).
 */
export function resolveResource(config: Config, raw: string | null | undefined): string | null {
  const canonical = mcpResource(config);
  if (raw === null || raw === undefined || raw === "" || raw === canonical) return canonical;
  const asked = URL.parse(raw);
  const ours = URL.parse(canonical);
  if (!asked || !ours || asked.origin !== ours.origin || /[?#]/.test(raw) || asked.username !== "" || asked.password !== "") return null;
  const base = new URL(config.publicUrl).pathname.replace(/\/+$/, "");
  const path = asked.pathname.replace(/\/$/, "");
  return path === `${base}/mcp` || path === base ? canonical : null;
}

/** RFC 9728 protected resource metadata for /mcp. */
export const protectedResourceMetadata = (config: Config): Record<string, unknown> => ({
  resource: mcpResource(config),
  authorization_servers: [config.publicUrl],
  scopes_supported: [...MCP_SCOPES],
  bearer_methods_supported: ["header"],
  resource_name: "Content Service MCP",
});

/** RFC 8414 authorization server metadata; the issuer is PUBLIC_URL exactly. */
export const authorizationServerMetadata = ({ publicUrl: base, oauthClientMetadataDocuments }: Config): Record<string, unknown> => ({
  issuer: base,
  authorization_endpoint: `${base}/oauth/authorize`,
  token_endpoint: `${base}/oauth/token`,
  registration_endpoint: `${base}/oauth/register`,
  revocation_endpoint: `${base}/oauth/revoke`,
  scopes_supported: [...MCP_SCOPES],
  response_types_supported: ["code"],
  response_modes_supported: ["query"],
  grant_types_supported: GRANT_TYPES,
  token_endpoint_auth_methods_supported: AUTH_METHODS,
  revocation_endpoint_auth_methods_supported: AUTH_METHODS,
  code_challenge_methods_supported: ["S256"],
  authorization_response_iss_parameter_supported: true,
  client_id_metadata_document_supported: oauthClientMetadataDocuments,
  service_documentation: `${base}/swagger`,
});
