import { openapi } from "@elysiajs/openapi";
import { Elysia } from "elysia";
import { ValidationError } from "elysia/error";
import { approvalRoutes } from "./approvals/routes";
import { insufficientScopeChallenge } from "./auth";
import type { AppDeps } from "./core/deps";
import { createFront, requestIdOf, setFront } from "./delivery/front";
import { DELIVERY_OPENAPI_PATHS } from "./delivery/model";
import { createDelivery } from "./delivery/routes";
import { AppError, describeError, type ErrorCode, errorBody, isDatabaseUnavailable, vanishedRow } from "./errors";
import { explorerRoutes } from "./explorer";
import { homeRoutes } from "./home/routes";
import { ownDb, ownHandle } from "./lib/commits";
import { MAX_BODY_BYTES } from "./lib/json";
import { withTimeout } from "./lib/timeout";
import { mcpRoutes } from "./mcp/routes";
import { createMediaDelivery } from "./media/delivery";
import { mediaRoutes } from "./media/routes";
import { modelFileRoutes } from "./model/routes";
import { oauthRoutes } from "./oauth/routes";
import { OPERATIONS } from "./operations";
import { operationPaths, operationRoutes } from "./rest";

// The admin routes' OpenAPI entries depend on the declarations only: built once, not per app.
const OPERATION_PATHS = operationPaths(OPERATIONS);

/** The whole HTTP surface, built over its dependencies; connects to nothing itself. */
export function createApp(given: AppDeps) {
  // Writes are announced on the Db they went through (lib/commits): one of this app's own, so
  // they reach this app's delivery cache and not that of another app built over the same Db.
  const db = ownDb(given.db);
  const deps: AppDeps = { ...given, db, dbHandle: ownHandle(given.dbHandle, db) };
  const meta = new WeakMap<Request, { id: string; start: number }>();
  const delivery = createDelivery(deps);
  const media = createMediaDelivery(deps);
  // Hot reads answered before routing: delivery pages, and media files held in memory.
  const fastRead: typeof delivery.fastRead = (request, requestId) => delivery.fastRead(request, requestId) ?? media.fastRead(request, requestId);
  const { log } = deps;
  // One info line per request, and its hook registered only when info lines are written: an
  // afterResponse hook costs several microseconds per request even when the logger drops the line
  // (a cached delivery read takes about as long).
  const logAccess = deps.config.logLevel === "debug" || deps.config.logLevel === "info";
  const accessLine = (request: Request, status: number): void => {
    const m = meta.get(request);
    if (!m) return;
    log.info("request", {
      request_id: m.id,
      method: request.method,
      path: new URL(request.url).pathname, // never the query: it may carry codes or states
      status,
      ms: Math.round((performance.now() - m.start) * 100) / 100,
    });
  };
  const accessLog = new Elysia();
  if (logAccess) {
    accessLog.onAfterResponse({ as: "global" }, ({ request, set, responseValue }) => {
      // A handler returning a Response (delivery 304s, streams) sets its status there, not in set.status.
      accessLine(request, responseValue instanceof Response ? responseValue.status : typeof set.status === "number" ? set.status : 200);
    });
  }
  // Hot reads are answered in front of Elysia where the server is created (src/server/serve.ts).
  const front = createFront({ fastRead, log: logAccess ? log : null });
  // When a request last failed for want of the database: /readyz stays 503 a moment after it, since
  // one successful ping does not mean the pool serves (terminated backends, a flapping server).
  let dbFailedAt = Number.NEGATIVE_INFINITY;

  const app = new Elysia({ normalize: "typebox" }) // exact-mirror turns arrays into objects ({"0":…}); TypeBox rejects them
    .onRequest(({ request, set }) => {
      const id = requestIdOf(request);
      meta.set(request, { id, start: performance.now() });
      // A hot delivery read (a fresh cached answer) is answered before routing: Elysia runs no
      // afterResponse hook for it, so it is logged here.
      const fast = front.declined(request) ? null : fastRead(request, id);
      if (fast !== null) {
        if (logAccess) accessLine(request, fast.status);
        return fast;
      }
      set.headers["x-request-id"] = id;
      // A NUL (%00) in the path or query can never name anything storable: refuse it up front.
      if (/%00/.test(request.url)) {
        set.status = 400;
        set.headers["content-type"] = "application/json; charset=utf-8";
        return errorBody("invalid_request", "the URL must not contain NUL characters");
      }
    })
    .onError(({ code, error: thrown, set, request }) => {
      set.headers["content-type"] = "application/json; charset=utf-8";
      // Elysia wraps what a parser throws in a ParseError; our parsers throw AppErrors (413, 400).
      const cause = code === "PARSE" ? (thrown as { cause?: unknown }).cause : undefined;
      const error = cause instanceof Error ? cause : thrown;
      // A plugin whose surface answers in another wire format (OAuth's RFC errors) throws errors that
      // render themselves; one caused by the database's absence still counts for readiness.
      if (hasResponse(error)) {
        if (isDatabaseUnavailable(error)) {
          dbFailedAt = performance.now();
          log.warn("database unavailable", { request_id: meta.get(request)?.id });
        }
        return error.toResponse();
      }
      const reply = (status: number, ...body: Parameters<typeof errorBody>) => {
        set.status = status;
        return errorBody(...body);
      };
      if (error instanceof AppError) {
        if (error.headers) Object.assign(set.headers, error.headers);
        // A 403 from a service (a key limited to projects, a scope it cannot grant) is a Bearer challenge too (RFC 6750 §3).
        if (error.code === "insufficient_scope") set.headers["www-authenticate"] ??= insufficientScopeChallenge((error.details as { required?: unknown } | undefined)?.required);
        return reply(error.status, error.code, error.message, error.details);
      }
      if (error instanceof ValidationError || code === "VALIDATION") return reply(400, "invalid_request", "request validation failed", validationDetails(error));
      const fixed = FIXED_ANSWERS.get(code);
      if (fixed) return reply(...fixed);
      if ((error as { status?: unknown }).status === 413) return reply(413, "payload_too_large", `request body exceeds ${MAX_BODY_BYTES} bytes`);
      const vanished = vanishedRow(error);
      if (vanished) return reply(vanished.status, vanished.code, vanished.message);
      if (isDatabaseUnavailable(error)) {
        // The pool reconnects by itself on the next query; tell the client to retry shortly.
        dbFailedAt = performance.now();
        log.warn("database unavailable", { request_id: meta.get(request)?.id });
        set.headers["retry-after"] = "1";
        return reply(503, "service_unavailable", "the database is not answering; retry shortly");
      }
      // Unknown failure: log it (message only, no request data) and answer a generic 500.
      log.error("unhandled error", { request_id: meta.get(request)?.id, ...describeError(error) });
      return reply(500, "internal", "internal server error");
    })
    .use(accessLog)
    .use(
      openapi({
        path: "/swagger",
        specPath: "/swagger/json",
        openapiVersion: "3.0.3",
        provider: null, // the explorer page at /swagger is ours (src/explorer.ts)
        documentation: {
          info: { title: "Content Service API", version: "0.1.0", description: "Admin, delivery, AI and MCP interface of the content service." },
          components: { securitySchemes: { bearerAuth: { type: "http", scheme: "bearer", description: "Admin key (cms_ak_…)" } } },
          paths: { ...OPERATION_PATHS, ...DELIVERY_OPENAPI_PATHS },
        },
        // sitemap.xml, robots.txt and /.well-known/* are API routes, not static files.
        exclude: { paths: ["/swagger", "/swagger/json"], staticFile: false },
      }),
    )
    // Replaces the plugin's /swagger page (remote script, no CSP) with ours: registered after it, it wins.
    .use(explorerRoutes())
    .get("/healthz", () => ({ status: "ok" }), { detail: { tags: ["ops"], summary: "Process is up" } })
    .get(
      "/readyz",
      async ({ set }) => {
        if ((await fulfilsWithin(deps.dbHandle.ping(), 2000)) && performance.now() - dbFailedAt >= READY_HOLD_AFTER_DB_FAILURE_MS) return { status: "ready" };
        set.status = 503;
        return errorBody("service_unavailable", "database is not answering");
      },
      { detail: { tags: ["ops"], summary: "Database answers" } },
    )
    .use(homeRoutes(deps))
    .use(operationRoutes(deps, OPERATIONS))
    .use(modelFileRoutes(deps))
    .use(mediaRoutes(media))
    .use(delivery.routes)
    .use(mcpRoutes(deps))
    .use(oauthRoutes(deps))
    .use(approvalRoutes(deps));
  setFront(app, front);
  return app;
}

export type App = ReturnType<typeof createApp>;

const FIXED_ANSWERS = new Map<unknown, [number, ErrorCode, string]>([
  ["NOT_FOUND", [404, "not_found", "no such route"]],
  ["PARSE", [400, "invalid_request", "request body could not be parsed"]],
  ["INVALID_COOKIE_SIGNATURE", [400, "invalid_request", "invalid request"]],
  ["INVALID_FILE_TYPE", [400, "invalid_request", "invalid request"]],
]);

function validationDetails(error: unknown): unknown {
  if (!(error instanceof ValidationError)) return undefined;
  const all = error.all.slice(0, 10).map((e) => {
    const path = "path" in e && typeof e.path === "string" ? e.path : "";
    return { in: error.type, field: path.replace(/^\//, "").replace(/\//g, ".") || null, message: "summary" in e && e.summary ? e.summary : e.message };
  });
  return { errors: all, field: all[0]?.field ?? null };
}

const hasResponse = (e: unknown): e is { toResponse(): Response } => typeof (e as { toResponse?: unknown } | null)?.toResponse === "function";

const READY_HOLD_AFTER_DB_FAILURE_MS = 1000;

/** True when the promise fulfils within ms; false when it rejects or takes longer. */
const fulfilsWithin = (p: Promise<unknown>, ms: number): Promise<boolean> =>
  withTimeout(() => p, ms).then(
    () => true,
    () => false,
  );
