import { openapi } from "@elysiajs/openapi";
import { Elysia } from "elysia";
import { approvalRoutes } from "./approvals/routes";
import { adminAuthenticator, insufficientScopeChallenge } from "./auth";
import type { AppDeps } from "./core/deps";
import { createFront, requestIdOf } from "./delivery/front";
import { DELIVERY_OPENAPI_PATHS } from "./delivery/model";
import { createDelivery } from "./delivery/routes";
import { appErrorHandler, errorBody } from "./errors";
import { explorerRoutes } from "./explorer";
import { homeRoutes } from "./home/routes";
import { ownDb, ownHandle } from "./lib/commits";
import { MAX_BODY_BYTES } from "./lib/json";
import { Slots } from "./lib/slots";
import { withTimeout } from "./lib/timeout";
import { WorkQueue } from "./lib/work-queue";
import { mcpRoutes } from "./mcp/routes";
import { createMediaDelivery } from "./media/delivery";
import { mediaRoutes } from "./media/routes";
import { createMediaStorage } from "./media/store";
import { modelFileRoutes } from "./model/routes";
import { oauthRoutes } from "./oauth/routes";
import { OPERATIONS } from "./operations";
import { operationPaths, operationRoutes } from "./rest";
import { registerSemanticDeps } from "./search/semantic";
import { studioSessionAuthenticator } from "./studio/auth";
import { studioRoutes } from "./studio/routes";

// The admin routes' OpenAPI entries depend on the declarations only: built once, not per app.
const OPERATION_PATHS = operationPaths(OPERATIONS);

/**
 * The whole HTTP surface, built over its dependencies; connects to nothing itself. Answers the app
 * and its front (hot reads answered before the app sees them), which the server puts before it.
 */
export function createApp(given: AppDeps) {
  // Writes are announced on the Db they went through (lib/commits): one of this app's own, so
  // they reach this app's delivery cache and not that of another app built over the same Db.
  const db = ownDb(given.db);
  // The app's own services, made once and handed down: where media bytes live, the AI calls in
  // flight per project, the image renders, and one count of failed admin authentications per
  // client address.
  const mediaStorage = given.mediaStorage ?? createMediaStorage(given.config, given.fetch);
  const renderQueue = given.renderQueue ?? new WorkQueue(given.config.media.renderConcurrency, given.config.media.renderQueue);
  const deps: AppDeps = { ...given, db, dbHandle: ownHandle(given.dbHandle, db), mediaStorage, aiSlots: given.aiSlots ?? new Slots(), renderQueue };
  // Admin keys, and a person's studio session on requests without one.
  const authenticate = adminAuthenticator(deps, studioSessionAuthenticator(db, deps.config));
  // Hybrid search's vendor calls from delivery, whose read routes are built over the database alone.
  registerSemanticDeps(deps);
  const delivery = createDelivery(deps);
  const media = createMediaDelivery(deps, delivery.project);
  // Hot reads answered before routing: delivery pages, and media files held in memory.
  const fastRead: typeof delivery.fastRead = (request, requestId) => delivery.fastRead(request, requestId) ?? media.fastRead(request, requestId);
  const access = accessLog(deps);
  // Hot reads are answered in front of Elysia where the server is created (src/server/serve.ts).
  const front = createFront({ fastRead, log: access.enabled ? deps.log : null });
  const readiness = readinessProbe(deps);
  const app = new Elysia({ normalize: "typebox" }) // exact-mirror turns arrays into objects ({"0":…}); TypeBox rejects them
    .onRequest(({ request, set }) => {
      const id = requestIdOf(request);
      access.begin(request, id);
      // A hot delivery read (a fresh cached answer) is answered before routing: Elysia runs no
      // afterResponse hook for it, so it is logged here.
      const fast = front.declined(request) ? null : fastRead(request, id);
      if (fast !== null) {
        access.line(request, fast.status);
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
    .onError(
      appErrorHandler({
        log: deps.log,
        requestId: access.requestId,
        databaseUnavailable: readiness.failed,
        scopeChallenge: insufficientScopeChallenge,
        maxBodyBytes: MAX_BODY_BYTES,
      }),
    )
    .use(access.plugin)
    .use(apiDocs())
    // Replaces the plugin's /swagger page (remote script, no CSP) with ours: registered after it, it wins.
    .use(explorerRoutes())
    .use(readiness.routes)
    .use(homeRoutes(deps))
    .use(operationRoutes(deps, OPERATIONS, authenticate))
    .use(modelFileRoutes(deps, authenticate))
    .use(mediaRoutes(deps, media))
    .use(delivery.routes)
    .use(mcpRoutes(deps))
    .use(oauthRoutes(deps))
    .use(approvalRoutes(deps))
    .use(studioRoutes(deps));
  // Marked stored delivery answers rendered again in the background (src/main.ts runs it); the stores of readers' renders in flight.
  return { app, front, refreshAnswers: delivery.refresh, answersStored: delivery.stored };
}

/** The service as the server runs it. */
export type Service = ReturnType<typeof createApp>;
export type App = Service["app"];

/**
 * One info line per request, its hook registered only when info lines are written: an
 * afterResponse hook costs several microseconds per request even when the logger drops the line
 * (a cached delivery read takes about as long).
 */
function accessLog({ config, log }: AppDeps) {
  const enabled = config.logLevel === "debug" || config.logLevel === "info";
  const meta = new WeakMap<Request, { id: string; start: number }>();
  const line = (request: Request, status: number): void => {
    const m = enabled ? meta.get(request) : undefined;
    if (!m) return;
    log.info("request", {
      request_id: m.id,
      method: request.method,
      path: new URL(request.url).pathname, // never the query: it may carry codes or states
      status,
      ms: Math.round((performance.now() - m.start) * 100) / 100,
    });
  };
  const plugin = new Elysia();
  if (enabled) {
    plugin.onAfterResponse({ as: "global" }, ({ request, set, responseValue }) => {
      // A handler returning a Response (delivery 304s, streams) sets its status there, not in set.status.
      line(request, responseValue instanceof Response ? responseValue.status : typeof set.status === "number" ? set.status : 200);
    });
  }
  return {
    enabled,
    plugin,
    line,
    begin: (request: Request, id: string): void => void meta.set(request, { id, start: performance.now() }),
    requestId: (request: Request): string | undefined => meta.get(request)?.id,
  };
}

/** The OpenAPI document at /swagger/json: the declared operations and the delivery API. */
const apiDocs = () =>
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
  });

const READY_HOLD_AFTER_DB_FAILURE_MS = 1000;

/**
 * /healthz and /readyz. When a request last failed for want of the database, /readyz stays 503 a
 * moment after it, since one successful ping does not mean the pool serves (terminated backends, a
 * flapping server).
 */
function readinessProbe(deps: AppDeps) {
  let dbFailedAt = Number.NEGATIVE_INFINITY;
  const routes = new Elysia()
    .get("/healthz", () => ({ status: "ok" }), { detail: { tags: ["ops"], summary: "Process is up" } })
    .get(
      "/readyz",
      async ({ set }) => {
        if ((await fulfilsWithin(deps.dbHandle.ping(), 2000)) && performance.now() - dbFailedAt >= READY_HOLD_AFTER_DB_FAILURE_MS) return { status: "ready" };
        set.status = 503;
        return errorBody("service_unavailable", "database is not answering");
      },
      { detail: { tags: ["ops"], summary: "Database answers" } },
    );
  return { routes, failed: (): void => void (dbFailedAt = performance.now()) };
}

/** True when the promise fulfils within ms; false when it rejects or takes longer. */
const fulfilsWithin = (p: Promise<unknown>, ms: number): Promise<boolean> =>
  withTimeout(() => p, ms).then(
    () => true,
    () => false,
  );
