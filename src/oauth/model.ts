import { t } from "elysia";
import { z } from "zod";
import { Id, Timestamp } from "../lib/schemas";

export const AUTH_METHODS: readonly string[] = ["none", "client_secret_post", "client_secret_basic"];
export const GRANT_TYPES: readonly string[] = ["authorization_code", "refresh_token"];

// Wire shapes of the OAuth endpoints, for the OpenAPI document. The token, register and revoke
// bodies are parsed by hand so that every failure answers in the RFC error form.

export const OAuthErrorSchema = t.Object({ error: t.String(), error_description: t.Optional(t.String()) }, { description: "RFC 6749 §5.2 / RFC 7591 §3.2.2 error" });

export const ProtectedResourceMetadata = t.Object({
  resource: t.String(),
  authorization_servers: t.Array(t.String()),
  scopes_supported: t.Array(t.String()),
  bearer_methods_supported: t.Array(t.String()),
  resource_name: t.String(),
});

export const AuthorizationServerMetadata = t.Object({
  issuer: t.String(),
  authorization_endpoint: t.String(),
  token_endpoint: t.String(),
  registration_endpoint: t.String(),
  revocation_endpoint: t.String(),
  scopes_supported: t.Array(t.String()),
  response_types_supported: t.Array(t.String()),
  grant_types_supported: t.Array(t.String()),
  token_endpoint_auth_methods_supported: t.Array(t.String()),
  code_challenge_methods_supported: t.Array(t.String()),
  authorization_response_iss_parameter_supported: t.Boolean(),
});

const requestBody = (mediaType: string, properties: Record<string, object>, required: string[]) => ({
  required: true,
  content: { [mediaType]: { schema: { type: "object", properties, required } } },
});
const formBody = (properties: Record<string, object>, required: string[]) => requestBody("application/x-www-form-urlencoded", properties, required);

export const TokenRequestDoc = formBody(
  {
    grant_type: { type: "string", enum: ["authorization_code", "refresh_token"], description: "grant" },
    code: { type: "string", description: "authorization_code: the code" },
    redirect_uri: { type: "string", description: "authorization_code: the redirect URI of the authorization request" },
    code_verifier: { type: "string", description: "authorization_code: PKCE verifier (S256)" },
    refresh_token: { type: "string", description: "refresh_token: the current refresh token (rotated on use)" },
    resource: { type: "string", description: "RFC 8707 resource; must be {PUBLIC_URL}/mcp" },
    scope: { type: "string", description: "refresh_token: narrower scope" },
    client_id: { type: "string", description: "public clients, or client_secret_post" },
    client_secret: { type: "string", description: "client_secret_post" },
  },
  ["grant_type"],
);

export const RevokeRequestDoc = formBody(
  {
    token: { type: "string", description: "access or refresh token" },
    token_type_hint: { type: "string", description: "access_token or refresh_token (ignored)" },
    client_id: { type: "string", description: "public clients, or client_secret_post" },
    client_secret: { type: "string", description: "client_secret_post" },
  },
  ["token"],
);

export const RegisterRequestDoc = requestBody(
  "application/json",
  {
    redirect_uris: { type: "array", items: { type: "string" }, description: "https, http on loopback, or a private-use scheme" },
    token_endpoint_auth_method: { type: "string", enum: [...AUTH_METHODS] },
    grant_types: { type: "array", items: { type: "string", enum: [...GRANT_TYPES] } },
    response_types: { type: "array", items: { type: "string", enum: ["code"] } },
    client_name: { type: "string" },
    scope: { type: "string" },
  },
  ["redirect_uris"],
);

export const TokenResponse = t.Object({
  access_token: t.String(),
  token_type: t.Literal("Bearer"),
  expires_in: t.Integer(),
  refresh_token: t.Optional(t.String()),
  scope: t.String(),
});
export const GrantOut = z.object({
  id: Id,
  client_id: z.string(),
  client_name: z.string().nullable(),
  user_id: Id,
  user_email: z.string().nullable().describe("null for a project-limited key when the user is no member of its projects (left them, or an instance owner)"),
  project_id: Id,
  scopes: z.array(z.string()),
  resource: z.string(),
  created_at: Timestamp,
  revoked_at: Timestamp.nullable(),
});
export const ClientOut = z.object({
  client_id: z.string(),
  client_name: z.string().nullable(),
  redirect_uris: z.array(z.string()),
  token_endpoint_auth_method: z.string(),
  grant_types: z.array(z.string()),
  scope: z.string().nullable(),
  created_at: Timestamp,
});
