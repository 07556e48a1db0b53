// One webhook attempt on the wire: a signed POST of the event to the endpoint's URL, and what its
// answer means for the event (delivered, retried, given up).
import type { AppDeps } from "../core/deps";
import { describeError } from "../errors";
import { checkOutboundUrl } from "../lib/ssrf";
import { readCappedText } from "../lib/stream";
import { pinnedFetch } from "../platform/fetch";
import { webhookUrlPolicy } from "./service";
import { signedHeaders } from "./sign";

export type Outcome = { statusCode: number | null; error: string | null; retry: boolean; retryAfterMs: number | null };

const USER_AGENT = "content-service-webhooks/1";

/** One POST of the event to the URL, checked again by the outbound guard and pinned to the addresses it checked. */
export async function sendEvent(deps: AppDeps, url: string, row: { event_id: string; payload: string }, secrets: string[]): Promise<Outcome> {
  const { config } = deps;
  const check = await checkOutboundUrl(url, webhookUrlPolicy(deps, "refuse"));
  if (!check.ok) return { statusCode: null, error: `url ${check.reason}`, retry: true, retryAfterMs: null };
  const headers = {
    "content-type": "application/json",
    "user-agent": USER_AGENT,
    ...signedHeaders(row.event_id, Math.floor(Date.now() / 1000), row.payload, secrets),
  };
  const signal = AbortSignal.timeout(config.webhooksTimeoutMs);
  let res: Response | null = null;
  let failure = "connection failed";
  for (const address of check.addresses.length ? check.addresses : [null]) {
    try {
      res = await pinnedFetch(check.url, address, { method: "POST", headers, body: row.payload, redirect: "manual", signal }, deps.fetch);
      break;
    } catch (err) {
      if (signal.aborted) return { statusCode: null, error: `timed out after ${config.webhooksTimeoutMs} ms`, retry: true, retryAfterMs: null };
      failure = `connection failed (${describeError(err).name})`;
    }
  }
  if (!res) return { statusCode: null, error: failure, retry: true, retryAfterMs: null };
  // The body is read (bounded) so that the connection can be reused; its content is not kept.
  const read = await readCappedText(res.body, config.webhooksMaxResponseBytes).then(
    () => null,
    () => (signal.aborted ? `timed out after ${config.webhooksTimeoutMs} ms reading the response` : null),
  );
  const code = res.status;
  if (read) return { statusCode: code, error: read, retry: true, retryAfterMs: null };
  if (code >= 200 && code < 300) return { statusCode: code, error: null, retry: false, retryAfterMs: null };
  if (code >= 300 && code < 400) return { statusCode: code, error: `redirect (HTTP ${code}) not followed`, retry: false, retryAfterMs: null };
  const retry = code === 429 || code === 408 || code >= 500;
  return { statusCode: code, error: `HTTP ${code}`, retry, retryAfterMs: retry ? retryAfterMs(res.headers) : null };
}

/** Retry-After as ms (delta seconds or an HTTP date); null when absent or unreadable. */
function retryAfterMs(headers: Headers): number | null {
  const raw = headers.get("retry-after")?.trim();
  if (!raw) return null;
  const ms = /^\d+$/.test(raw) ? Number(raw) * 1000 : Date.parse(raw) - Date.now();
  return Number.isFinite(ms) ? Math.max(0, ms) : null;
}
