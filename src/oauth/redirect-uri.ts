// Redirect URI rules (RFC 6749 §3.1.2, RFC 8252 §7, RFC 9700 §4.1): https anywhere, http only on
// loopback, or a private-use scheme for native apps; no fragment, no credentials; exact match on use,
// except that a loopback port may vary (native apps bind an ephemeral port).

const MAX_LENGTH = 2000;
// Schemes that run code, read local data or are not navigable redirect targets.
const FORBIDDEN_SCHEMES = new Set(["javascript:", "data:", "vbscript:", "file:", "about:", "blob:", "filesystem:", "ws:", "wss:", "ftp:", "mailto:", "tel:", "sms:"]);
const SCHEME_RE = /^[a-z][a-z0-9+.-]*:$/;

export const isLoopbackHost = (hostname: string): boolean => hostname === "localhost" || hostname === "[::1]" || /^127\.\d{1,3}\.\d{1,3}\.\d{1,3}$/.test(hostname);

/** Why a redirect URI may not be registered, or null when it may. */
export function redirectUriProblem(raw: string): string | null {
  if (raw.length === 0 || raw.length > MAX_LENGTH) return `a redirect URI must be 1 to ${MAX_LENGTH} characters`;
  if (/[\s\u0000-\u001f\u007f]/.test(raw)) return "a redirect URI must not contain whitespace or control characters";
  if (raw.includes("#")) return "a redirect URI must not contain a fragment";
  const u = URL.parse(raw);
  if (!u) return "a redirect URI must be an absolute URI";
  if (u.username || u.password) return "a redirect URI must not carry credentials";
  if (u.protocol === "https:") return u.hostname ? null : "an https redirect URI needs a host";
  if (u.protocol === "http:") return isLoopbackHost(u.hostname) ? null : "http redirect URIs are allowed only on loopback (127.0.0.1, [::1], localhost); use https";
  if (FORBIDDEN_SCHEMES.has(u.protocol) || !SCHEME_RE.test(u.protocol)) return `the ${u.protocol} scheme is not allowed for redirect URIs`;
  return null;
}

// A loopback http URI split into its authority up to the port, and everything after the port, as written.
const LOOPBACK_RE = /^(http:\/\/(?:localhost|127\.\d{1,3}\.\d{1,3}\.\d{1,3}|\[::1\]))(?::\d{1,5})?([/?].*)?$/s;

/**
 * The registered URI the presented one matches, or null. The match is on the exact string
 * (OAuth 2.1 §2.3.1): no dot-segment or percent-encoding normalisation, so `/x/../callback` and
 * `/%2e%2e/callback` are other URIs. The one exception is the port of a loopback URI (RFC 8252 §7.3).
 */
export function matchRedirectUri(registered: readonly string[], presented: string): string | null {
  if (registered.includes(presented)) return presented;
  const p = LOOPBACK_RE.exec(presented);
  if (!p || redirectUriProblem(presented) !== null) return null;
  for (const r of registered) {
    const m = LOOPBACK_RE.exec(r);
    if (m && m[1] === p[1] && (m[2] ?? "") === (p[2] ?? "")) return r;
  }
  return null;
}

/** Appends response parameters to a redirect URI, keeping its own query (RFC 6749 §3.1.2). */
export function withParams(redirectUri: string, params: Record<string, string | null | undefined>): string {
  const u = new URL(redirectUri);
  for (const [k, v] of Object.entries(params)) if (v !== null && v !== undefined) u.searchParams.append(k, v);
  return u.toString();
}
