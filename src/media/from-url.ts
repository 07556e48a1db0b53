// Upload from a URL: the URL passes the outbound guard the AI vendors' calls pass
// (lib/ssrf: https only, private and loopback addresses refused unless AI_ALLOW_PRIVATE_URLS, cloud
// metadata never), the connection is pinned to the checked address, redirects are refused (a
// redirect could lead anywhere the guard never saw) and the body is read up to MEDIA_MAX_BYTES.
import type { AppDeps } from "../core/deps";
import { AppError } from "../errors";
import { checkOutboundUrl, systemResolver } from "../lib/ssrf";
import { readCappedBytes } from "../lib/stream";
import { pinnedFetch } from "../platform/fetch";

const FETCH_TIMEOUT_MS = 30_000;

export async function fetchUpload(deps: AppDeps, url: string): Promise<{ bytes: Uint8Array; filename: string }> {
  const { config } = deps;
  const check = await checkOutboundUrl(url, { allowPrivate: config.aiAllowPrivateUrls, resolve: deps.resolveHost ?? systemResolver, unresolvable: "refuse", timeoutMs: 5000 });
  if (!check.ok) throw new AppError("invalid_request", `url ${check.reason}`, { field: "url" });
  const res = await pinnedFetch(check.url, check.addresses[0] ?? null, { redirect: "manual", signal: AbortSignal.timeout(FETCH_TIMEOUT_MS) }, deps.fetch).catch((err: unknown) => {
    throw new AppError("invalid_request", "the url could not be fetched", { field: "url" }, undefined, { cause: err });
  });
  if (res.status >= 300 && res.status < 400) {
    await res.body?.cancel().catch(() => {});
    throw new AppError("invalid_request", `the url answered a redirect (HTTP ${res.status}); redirects are not followed: give the final URL`, { field: "url", status: res.status });
  }
  if (res.status !== 200) {
    await res.body?.cancel().catch(() => {});
    throw new AppError("invalid_request", `the url answered HTTP ${res.status}`, { field: "url", status: res.status });
  }
  const declared = Number(res.headers.get("content-length") ?? "0");
  const bytes = declared > config.media.maxBytes ? null : await readCappedBytes(res.body, config.media.maxBytes);
  if (bytes === null) {
    await res.body?.cancel().catch(() => {});
    throw new AppError("payload_too_large", `the file is larger than ${config.media.maxBytes} bytes (MEDIA_MAX_BYTES)`, { max_bytes: config.media.maxBytes });
  }
  const last = decodeURIComponent(check.url.pathname.split("/").pop() ?? "").trim();
  return { bytes, filename: last || "file" };
}
