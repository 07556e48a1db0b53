// Node and Deno: srvx's server with the delivery front before the app, as on Bun (serve-bun.ts).
import type { Service } from "../app";
import type { Config } from "../config";
import { MAX_BODY_BYTES } from "../lib/json";
import { runtime } from "../platform/runtime";

/** A listening server: its port, and stop (force: close open connections now). */
export interface HttpServer {
  readonly port: number;
  stop(force: boolean): Promise<void>;
}

export async function serveWeb({ app, front }: Service, config: Config): Promise<HttpServer> {
  // See serve-bun.ts: this server speaks plain http, so the path starts after "http://" + host.
  app.config.handler = { ...app.config.handler, standardHostname: false };
  app.compile();
  const handle = app.fetch as (request: Request) => Response | Promise<Response>;
  const fetch = (request: Request) => {
    try {
      const hot = front.answer(request);
      if (hot !== null) return hot;
    } catch {
      // Never answered here: the app answers it (and reports what is wrong) the routed way.
    }
    return handle(request);
  };
  const idleMs = config.httpIdleTimeoutSeconds * 1000;
  const { serve } = runtime === "deno" ? await import("srvx/deno") : await import("srvx/node");
  const server = serve({
    fetch,
    port: config.port,
    hostname: config.host,
    reusePort: false, // a second process on the same port fails with EADDRINUSE (see serve-bun.ts)
    silent: true,
    gracefulShutdown: false, // src/main.ts owns SIGTERM
    // The upload's body (MEDIA_MAX_BYTES and 1 MiB of fields) is the largest any route takes; every
    // other route reads at most MAX_BODY_BYTES, and an admin route reads none before it knows the caller (src/rest-body.ts).
    maxRequestBodySize: Math.max(MAX_BODY_BYTES, config.media.maxBytes + 1024 * 1024) + 64 * 1024,
    // Node's deadlines: a silent kept-alive connection and a request (headers and body) that
    // trickles in are bounded by the idle deadline, as on Bun; a handler still working is not cut.
    node: { keepAliveTimeout: idleMs, requestTimeout: idleMs, headersTimeout: Math.min(idleMs, 10_000) },
  });
  await server.ready();
  const port = Number(new URL(server.url ?? `http://localhost:${config.port}`).port);
  return {
    port,
    async stop(force) {
      if (force && runtime === "deno") return; // Deno.serve has no "close open connections now"; the process exits next
      await server.close(force);
    },
  };
}
