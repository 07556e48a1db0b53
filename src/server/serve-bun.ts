// Bun only (loaded by serve.ts on Bun). Creates the HTTP server for an app: Bun.serve with the app's front (hot delivery reads answered
// before Elysia sees the request, src/delivery/front.ts) and Elysia's own handler for the rest.
// Used instead of app.listen(), which always serves app.fetch; app.server and app.stop() work as
// after app.listen(). Elysia's Bun adapter defaults to `reusePort: true`, which lets a second
// process bind the same port and the kernel spread connections over both (two embedded databases
// over one directory lost acknowledged writes that way): this service binds its port alone, so a
// double start fails with EADDRINUSE.
import type { Serve, Server } from "bun";
import type { App } from "../app";
import type { Config } from "../config";
import type { Front } from "../delivery/front";
import { MAX_BODY_BYTES } from "../lib/json";

type ListenOptions = Omit<Serve.Options<undefined>, "fetch" | "routes" | "websocket"> & { port: number; hostname: string };

/** Serves `app` behind `front` (absent: every request goes to the app). */
export function listen({ app, front }: { app: App; front?: Front }, options: ListenOptions): App {
  // Elysia finds the path at the first "/" after a fixed offset: 11 by default, which assumes
  // "https://" or a host of at least 4 characters; this server speaks plain http, so the path
  // starts after "http://" + host (7). Without it `Host: x` or a compose service named `cms` got
  // 404 on every route (tests/delivery-fast.test.ts). app.handle() keeps the default.
  if (!("tls" in options && options.tls)) app.config.handler = { ...app.config.handler, standardHostname: false };
  app.compile(); // composes app.fetch once, before the server exists (compile() reloads a running server)
  const handle = app.fetch as (request: Request) => Response | Promise<Response>;
  // Elysia's listen() defaults, then the caller's options.
  const idle = options.idleTimeout ?? 30;
  // Bun resets a connection whose bodiless request (a GET) is still being handled once the idle
  // deadline has passed (measured: at ~8 s with a 2 s deadline; a request whose body has been read
  // is not cut). So for those the deadline is lifted while the handler works and put back when it
  // returns (Bun keeps it for the kept-alive connection): a silent client is still closed.
  const routed = async (request: Request): Promise<Response> => {
    if (request.body !== null) return handle(request);
    server.timeout(request, 0);
    try {
      return await handle(request);
    } finally {
      server.timeout(request, idle);
    }
  };
  const fetch =
    front === undefined
      ? routed
      : (request: Request) => {
          try {
            const hot = front.answer(request);
            if (hot !== null) return hot;
          } catch {
            // Never answered here: the app answers it (and reports what is wrong) the routed way.
          }
          return routed(request);
        };
  const server: Server<undefined> = Bun.serve({ development: process.env.NODE_ENV !== "production", reusePort: true, ...options, idleTimeout: idle, fetch } as Serve.Options<undefined>);
  (app as { server: Server<undefined> | null }).server = server;
  return app;
}

/** The service's options for listen(). */
export function serveOptions(config: Config): ListenOptions {
  return {
    port: config.port,
    hostname: config.host,
    reusePort: false,
    // Bounds a silent connection and a request body that trickles in (Bun does not reset it on
    // body bytes); headers have Bun's own fixed ~10 s deadline. A handler still working is not cut
    // (listen() lifts it for bodiless requests until they are answered; tests/http-deadlines.test.ts:
    // AI calls over REST and MCP, a GET waiting on PostgreSQL, 10 s each); Elysia's default here was 30 s.
    idleTimeout: config.httpIdleTimeoutSeconds,
    // The upload's body (MEDIA_MAX_BYTES and 1 MiB of fields) is the largest any route takes; every
    // other route reads at most MAX_BODY_BYTES, and an admin route reads none before it knows the caller (src/rest-body.ts).
    maxRequestBodySize: Math.max(MAX_BODY_BYTES, config.media.maxBytes + 1024 * 1024) + 64 * 1024,
  };
}

/**
 * Fails early, before the database is opened (and a first start bootstraps and prints keys),
 * when the port is already taken. listen() above still binds without port sharing.
 */
export function assertPortFree(config: Config): void {
  if (config.port === 0) return;
  const probe = Bun.serve({ port: config.port, hostname: config.host, reusePort: false, fetch: () => new Response(null, { status: 503 }) });
  probe.stop(true);
}
