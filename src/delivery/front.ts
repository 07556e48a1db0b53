// The front of the HTTP server: hot delivery reads (a GET whose answer is cached for the
// project's current version) are answered here, before Elysia sees the request; everything else
// is handed to the app. Same answers, same X-Request-Id and access-log line as the routed way
// (tests/delivery-fast.test.ts).

import { uuidv7 } from "../lib/ids";
import type { Logger } from "../lib/log";
import { hotReadServed } from "../lib/thread-demand";

const REQUEST_ID_RE = /^[A-Za-z0-9._-]{1,64}$/;

/** The caller's X-Request-Id when it is a safe token, else a fresh UUIDv7. */
export function requestIdOf(request: Request): string {
  const incoming = request.headers.get("x-request-id");
  return incoming !== null && REQUEST_ID_RE.test(incoming) ? incoming : uuidv7();
}

/** `log`: the access log, one info line per answered request as the app writes it. */
export function createFront({ fastRead, log }: { fastRead: (request: Request, requestId: (request: Request) => string) => Response | null; log: Logger | null }) {
  const tried = new WeakSet<Request>();
  return {
    /** The answer to a hot read, or null: the request goes to the app (which knows it was tried). */
    answer(request: Request): Response | null {
      const start = performance.now();
      // Cheap pre-check before anything else: only GETs under /api/p/ can be hot reads.
      if (request.method !== "GET") return null;
      const url = request.url;
      if (url.indexOf("/api/p/") < 0) return null;
      let id = "";
      const res = fastRead(request, log === null ? requestIdOf : (r) => (id = requestIdOf(r)));
      if (res === null) {
        tried.add(request);
        return null;
      }
      // A media answer may carry the id another way: read back only then.
      if (log !== null) accessLine(log, id === "" ? (res.headers.get("x-request-id") ?? "") : id, url, res.status, start);
      hotReadServed();
      return res;
    },
    /** True when the front already tried this request and declined it. */
    declined: (request: Request): boolean => tried.has(request),
  };
}
export type Front = ReturnType<typeof createFront>;

/** The access-log line of a hot read, a GET (never the query string: it may carry codes or states). */
function accessLine(log: Logger, requestId: string, url: string, status: number, start: number): void {
  const pathStart = url.indexOf("/", url.indexOf("//") + 2);
  const q = url.indexOf("?", pathStart);
  const hash = url.indexOf("#", pathStart);
  const end = q >= 0 ? q : hash >= 0 ? hash : url.length;
  const path = pathStart < 0 ? "/" : url.slice(pathStart, end);
  const ms = Math.round((performance.now() - start) * 100) / 100;
  if (log.request) log.request(requestId, "GET", path, status, ms);
  else log.info("request", { request_id: requestId, method: "GET", path, status, ms });
}
