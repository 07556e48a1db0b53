// One CORS policy per surface, declared where the surface is: delivery and the OAuth endpoints are
// open to any origin, the admin API and /mcp answer only the origins on their allow-list. Not
// @elysiajs/cors: its onRequest hook runs before routing, for every route of the app, and it adds a
// catch-all OPTIONS route, so it cannot hold one policy for one surface and none for another.
import type { Config } from "../config";

export interface CorsPolicy {
  /** "*": any origin, no credentials; a list: only these origins, each echoed back. */
  readonly origins: "*" | readonly string[];
  readonly methods: string;
  /** Request headers a preflight allows; "requested": the request's own list echoed when it is a list of header names. */
  readonly allowHeaders: string;
  readonly exposeHeaders: string;
  readonly maxAgeSeconds: number;
}

const HEADER_LIST_RE = /^[A-Za-z0-9!#$%&'*+.^_`|~-]+(?:\s*,\s*[A-Za-z0-9!#$%&'*+.^_`|~-]+)*$/;

export function originAllowed(policy: CorsPolicy, origin: string): boolean {
  if (policy.origins === "*") return true;
  const o = origin.toLowerCase();
  return policy.origins.some((a) => a === "*" || a.toLowerCase() === o);
}

/** The CORS headers of an answer to a request from `origin` (none for an origin off the list). */
export function corsHeaders(policy: CorsPolicy, origin: string | null): Record<string, string> {
  if (policy.origins === "*") return { "access-control-allow-origin": "*", "access-control-expose-headers": policy.exposeHeaders };
  if (origin === null || !originAllowed(policy, origin)) return {};
  return { "access-control-allow-origin": origin, "access-control-expose-headers": policy.exposeHeaders, vary: "Origin" };
}

/** The answer to a preflight (OPTIONS) request. */
export function corsPreflight(policy: CorsPolicy, request: Request, extra: Record<string, string> = {}): Response {
  const headers: Record<string, string> = {
    ...corsHeaders(policy, request.headers.get("origin")),
    "access-control-allow-methods": policy.methods,
    "access-control-max-age": String(policy.maxAgeSeconds),
  };
  if (policy.allowHeaders !== "requested") headers["access-control-allow-headers"] = policy.allowHeaders;
  else {
    headers.vary = headers.vary ? `${headers.vary}, Access-Control-Request-Headers` : "Access-Control-Request-Headers";
    const asked = request.headers.get("access-control-request-headers")?.trim();
    if (asked && asked.length <= 1024 && HEADER_LIST_RE.test(asked)) headers["access-control-allow-headers"] = asked;
  }
  return new Response(null, { status: 204, headers: { ...headers, ...extra } });
}

/**
 * The admin API's CORS policy: the ADMIN_ALLOWED_ORIGINS allow-list, by default this service's own
 * origin (the API explorer lives there). A browser page of any other origin gets no CORS headers: a
 * stolen-key replay from a hostile page cannot read the answers.
 */
export const adminCors = (config: Pick<Config, "adminAllowedOrigins">): CorsPolicy => ({
  origins: config.adminAllowedOrigins,
  methods: "GET, POST, PUT, PATCH, DELETE",
  allowHeaders: "authorization, content-type, x-request-id, if-match",
  exposeHeaders: "www-authenticate, retry-after, x-request-id, etag",
  maxAgeSeconds: 600,
});
