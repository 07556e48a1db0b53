// Upload from a URL: the URL passes the outbound guard the AI vendors' calls pass (lib/ssrf: https
// only, private and loopback addresses refused unless MEDIA_ALLOW_PRIVATE_URLS, its own setting, so
// opening the AI vendors to a self-hosted model does not open this; cloud metadata never), the
// connection is pinned to the checked address, redirects are refused (a redirect could lead
// anywhere the guard never saw), and the answer and its whole body must come within
// MEDIA_FETCH_TIMEOUT_MS, up to MEDIA_MAX_BYTES. A refusal never repeats the upstream status: with
// private addresses allowed, it would tell a caller what answers where inside the network.
import type { AppDeps } from "../core/deps";
import { AppError } from "../errors";
import { checkOutboundUrl, systemResolver } from "../lib/ssrf";
import { readCappedBytes } from "../lib/stream";
import { pinnedFetch } from "../platform/fetch";

const notFetched = (cause?: unknown): AppError => new AppError("invalid_request", "the url could not be fetched", { field: "url" }, undefined, { cause });

export async function fetchUpload(deps: AppDeps, url: string): Promise<{ bytes: Uint8Array; filename: string }> {
  const { media } = deps.config;
  const check = await checkOutboundUrl(url, {
    allowPrivate: media.allowPrivateUrls,
    setting: "MEDIA_ALLOW_PRIVATE_URLS",
    resolve: deps.resolveHost ?? systemResolver,
    unresolvable: "refuse",
    timeoutMs: 5000,
  });
  if (!check.ok) throw new AppError("invalid_request", `url ${check.reason}`, { field: "url" });
  const deadline = AbortSignal.timeout(media.fetchTimeoutMs);
  const late = (): AppError => new AppError("invalid_request", `the url did not send the file within ${media.fetchTimeoutMs} ms (MEDIA_FETCH_TIMEOUT_MS)`, { field: "url" });
  const res = await pinnedFetch(check.url, check.addresses[0] ?? null, { redirect: "manual", signal: deadline }, deps.fetch).catch((err: unknown) => {
    throw deadline.aborted ? late() : notFetched(err);
  });
  if (res.status !== 200) {
    await res.body?.cancel().catch(() => {});
    if (res.status >= 300 && res.status < 400) throw new AppError("invalid_request", "the url answered with a redirect; redirects are not followed: give the final URL", { field: "url" });
    throw new AppError("invalid_request", "the url did not answer with a file", { field: "url" });
  }
  const declared = Number(res.headers.get("content-length") ?? "0");
  const bytes = declared > media.maxBytes ? null : await readWithin(res.body, media.maxBytes, deadline).catch((err: unknown) => Promise.reject(deadline.aborted ? late() : notFetched(err)));
  if (bytes === null) {
    await res.body?.cancel().catch(() => {});
    throw new AppError("payload_too_large", `the file is larger than ${media.maxBytes} bytes (MEDIA_MAX_BYTES)`, { max_bytes: media.maxBytes });
  }
  return { bytes, filename: lastSegment(check.url) || "file" };
}

/** The body up to `limit` bytes (null past it), given up when `signal` aborts, whether or not the runtime ends the stream then. */
async function readWithin(body: ReadableStream<Uint8Array> | null, limit: number, signal: AbortSignal): Promise<Uint8Array | null> {
  let stop = (): void => {};
  const aborted = new Promise<never>((_, reject) => {
    stop = () => reject(signal.reason);
    if (signal.aborted) stop();
    else signal.addEventListener("abort", stop, { once: true });
  });
  const reading = readCappedBytes(body, limit);
  // The losing side's rejection is expected (the stream fails once the fetch is aborted).
  reading.catch(() => {});
  aborted.catch(() => {});
  try {
    return await Promise.race([reading, aborted]);
  } finally {
    signal.removeEventListener("abort", stop);
  }
}

/** The URL's last path segment, decoded; as written when it is not valid percent-encoded UTF-8 (`%ff`). */
function lastSegment(url: URL): string {
  const last = url.pathname.split("/").pop() ?? "";
  try {
    return decodeURIComponent(last).trim();
  } catch {
    return last.trim();
  }
}
