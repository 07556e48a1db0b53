// Client ID Metadata Documents (draft-ietf-oauth-client-id-metadata-document; MCP 2025-11-25
// "SHOULD"): a client_id that is an https URL names a JSON document holding the client's metadata.
// The document is fetched through the outbound URL guard, kept as an oauth_clients row (so every
// instance and the token endpoint see the same client) and fetched again once it is an hour old.
import { oauthClients } from "../../db/schema";
import type { AppDeps } from "../core/deps";
import { hitRateLimit } from "../lib/rate-limit";
import { oneRow } from "../lib/rows";
import { checkOutboundUrl, systemResolver } from "../lib/ssrf";
import { readCappedText } from "../lib/stream";
import { pinnedFetch } from "../platform/fetch";
import { redirectUriProblem } from "./redirect-uri";
import { findClient, knownScopes, MAX_CLIENT_ID_LENGTH, type OAuthClient } from "./service";

const MAX_DOCUMENT_BYTES = 5 * 1024;
const REFRESH_AFTER_MS = 60 * 60_000;
const FETCH_TIMEOUT_MS = 5000;

/** The draft's rules for a client_id URL: https, a path, no dot segments, fragment or credentials. */
export function isMetadataClientId(id: string): boolean {
  const u = id.length <= MAX_CLIENT_ID_LENGTH ? URL.parse(id) : null;
  // The path as written (the parser would resolve dot segments away).
  const rawPath = /^https:\/\/[^/?#]*([^?#]*)/.exec(id)?.[1];
  if (!u || rawPath === undefined || rawPath.split("/").some((s) => s === "." || s === "..")) return false;
  return u.pathname !== "/" && u.pathname !== "" && !id.includes("#") && !u.username && !u.password;
}

/** The client a metadata-document client_id names, fetched when unknown or stale; or why it cannot be used. */
export async function metadataClient(deps: AppDeps, clientId: string, address: string): Promise<OAuthClient | string> {
  const now = deps.now();
  const known = await findClient(deps.db, clientId);
  const fetchedAt = Date.parse(String(known?.metadata.fetched_at ?? ""));
  if (known && known.metadata.cimd === true && now.getTime() - fetchedAt < REFRESH_AFTER_MS) return known;

  // Each fetch is an outbound request on a stranger's behalf: counted like a registration.
  const limit = await hitRateLimit(deps.db, `oauth_register:${address}`, deps.config.oauthRegisterRateLimit, 3600, now);
  if (!limit.allowed) return "too many client registrations from this address; try again later";
  const check = await checkOutboundUrl(clientId, { allowPrivate: false, resolve: deps.resolveHost ?? systemResolver, unresolvable: "refuse", timeoutMs: FETCH_TIMEOUT_MS });
  // The guard's own reasons speak of AI settings; the page only needs to say it is refused.
  if (!check.ok) return "the client's metadata document is not at a public https address";

  const doc = await fetchDocument(deps, clientId, check.addresses[0] ?? null);
  if (typeof doc === "string") return doc;
  const parsed = parseDocument(doc.json, clientId);
  if (typeof parsed === "string") return `the client's metadata document is not usable: ${parsed}`;

  const { extra, ...columns } = parsed;
  const row = { ...columns, id: clientId, secretHash: null, tokenEndpointAuthMethod: "none", responseTypes: ["code"], metadata: { cimd: true, fetched_at: now.toISOString(), ...extra } };
  const client = await deps.db
    .insert(oauthClients)
    .values({ ...row, createdAt: now })
    .onConflictDoUpdate({ target: oauthClients.id, set: row })
    .returning();
  return oneRow(client);
}

/** The parsed document, or why there is none (a document that is itself a JSON string is a document, never a reason shown on our page). */
async function fetchDocument(deps: AppDeps, url: string, address: string | null): Promise<{ json: unknown } | string> {
  // Connect to the address the guard checked (no second DNS lookup to rebind); no redirects (the
  // document must live at the client_id itself), a short timeout, a small cap.
  // Any failure, thrown or rejected, is the same reason on the page (never a 500).
  const res = await (async () =>
    pinnedFetch(new URL(url), address, { redirect: "manual", headers: { accept: "application/json" }, signal: AbortSignal.timeout(FETCH_TIMEOUT_MS) }, deps.fetch))().catch(() => null);
  if (!res) return "the client's metadata document could not be fetched";
  if (res.status !== 200) {
    await res.body?.cancel().catch(() => {});
    return `the client's metadata document answered HTTP ${res.status}`;
  }
  const text = await readCappedText(res.body, MAX_DOCUMENT_BYTES);
  if (text === null) return `the client's metadata document is larger than ${MAX_DOCUMENT_BYTES} bytes`;
  if (text === "") return "the client's metadata document is empty";
  try {
    return { json: JSON.parse(text) };
  } catch {
    return "the client's metadata document is not JSON";
  }
}

function parseDocument(doc: unknown, clientId: string) {
  if (doc === null || typeof doc !== "object" || Array.isArray(doc)) return "not a JSON object";
  const d = doc as Record<string, unknown>;
  if (d.client_id !== clientId) return "its client_id is not the document's own URL";
  const uris = d.redirect_uris;
  if (!Array.isArray(uris) || uris.length === 0 || uris.length > 10 || !uris.every((u) => typeof u === "string")) return "redirect_uris must be 1 to 10 strings";
  const problem = (uris as string[]).map(redirectUriProblem).find((p) => p !== null);
  if (problem) return problem;
  // Shared secrets are meaningless for a document anyone can read (draft §4.1).
  if ((d.token_endpoint_auth_method ?? "none") !== "none") return "token_endpoint_auth_method must be none";
  const grants = d.grant_types ?? ["authorization_code", "refresh_token"];
  if (!Array.isArray(grants) || !grants.includes("authorization_code") || grants.some((g) => g !== "authorization_code" && g !== "refresh_token")) {
    return "grant_types may contain only authorization_code and refresh_token, and must contain authorization_code";
  }
  const name = typeof d.client_name === "string" ? d.client_name.replace(/[\u0000-\u001f\u007f]/g, "").slice(0, 200) : null;
  const extra: Record<string, string> = {};
  for (const f of ["client_uri", "logo_uri"]) {
    const v = d[f];
    if (typeof v === "string" && v.startsWith("https://") && v.length <= 2000 && URL.canParse(v)) extra[f] = v;
  }
  const scope = typeof d.scope === "string" ? knownScopes(d.scope).join(" ") || null : null;
  return { clientName: name, redirectUris: [...new Set(uris as string[])], grantTypes: [...new Set(grants as string[])], scope, extra };
}
