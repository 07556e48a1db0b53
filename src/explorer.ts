// The API explorer at /swagger, where administrators paste their keys. Its script is a pinned
// dependency served from this service (offline, and inside the single binary); the page runs under
// a CSP that allows scripts from this origin only and lets it talk to this origin only.
import { Elysia } from "elysia";
import { acceptsGzip } from "./lib/accept";
import { explorerAsset, fileBody, gzip, readBytes } from "./platform/files";

const SCRIPT_PATH = `/swagger/assets/scalar-api-reference-${explorerAsset.version}.js`;
const INIT_PATH = "/swagger/assets/explorer.js";

// Inline styles stay allowed: the explorer injects its stylesheet and positions popovers with them.
// No inline or remote script, no eval, no fonts or images from elsewhere, no framing, no outbound calls.
const EXPLORER_CSP = [
  "default-src 'none'",
  "script-src 'self'",
  "style-src 'self' 'unsafe-inline'",
  "img-src 'self' data:",
  "font-src 'self' data:",
  "connect-src 'self'",
  "base-uri 'none'",
  "form-action 'none'",
  "frame-ancestors 'none'",
].join("; ");

const PAGE_HEADERS = {
  "content-type": "text/html; charset=utf-8",
  "content-security-policy": EXPLORER_CSP,
  "x-frame-options": "DENY",
  "x-content-type-options": "nosniff",
  "referrer-policy": "no-referrer",
  "cache-control": "no-cache",
};

const PAGE = `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>Content Service API</title>
</head>
<body>
<div id="app"></div>
<script src="${SCRIPT_PATH.slice(1)}"></script>
<script src="${INIT_PATH.slice(1)}"></script>
</body>
</html>
`;

// Relative URLs, as the page is: the service may sit under a path prefix behind a proxy.
// No telemetry, no web fonts, no hosted AI agent; the key typed in is kept in memory only.
const INIT = `Scalar.createApiReference("#app", ${JSON.stringify({
  url: "swagger/json",
  theme: "elysiajs",
  withDefaultFonts: false,
  telemetry: false,
  persistAuth: false,
  showDeveloperTools: "never",
  agent: { disabled: true },
})});
`;

// The bundle's file name carries the pinned version (a new version is a new URL); the small init
// script changes with this service, so it is revalidated.
const scriptHeaders = (immutable: boolean): Record<string, string> => ({
  "content-type": "text/javascript; charset=utf-8",
  "x-content-type-options": "nosniff",
  "cache-control": immutable ? "public, max-age=31536000, immutable" : "no-cache",
  "cross-origin-resource-policy": "same-origin",
});

let gzipped: Promise<Uint8Array<ArrayBuffer>> | null = null;
const gzippedScript = (): Promise<Uint8Array<ArrayBuffer>> =>
  (gzipped ??= explorerAsset
    .path()
    .then(readBytes)
    .then(gzip)
    .catch((err: unknown) => {
      gzipped = null; // a failed read is tried again by the next request, not remembered
      throw err;
    }));

/** GET /swagger and its assets; the OpenAPI document stays at /swagger/json (the swagger plugin). */
export function explorerRoutes() {
  const hide = { detail: { hide: true } };
  return new Elysia()
    .get("/swagger", () => new Response(PAGE, { headers: PAGE_HEADERS }), hide)
    .get(INIT_PATH, () => new Response(INIT, { headers: scriptHeaders(false) }), hide)
    .get(
      SCRIPT_PATH,
      async ({ request }) => {
        // 4.3 MB as shipped, about a quarter gzipped; compressed once, on first request.
        if (acceptsGzip(request)) return new Response(await gzippedScript(), { headers: { ...scriptHeaders(true), "content-encoding": "gzip", vary: "accept-encoding" } });
        return new Response(await fileBody(await explorerAsset.path()), { headers: { ...scriptHeaders(true), vary: "accept-encoding" } });
      },
      hide,
    );
}
