// Runtime edge: the listening socket. Elysia's Bun adapter defaults to `reusePort: true`, which
// lets a second process bind the same port and the kernel spread connections over both (two
// embedded databases over one directory lost acknowledged writes that way): this service binds
// its port alone, so a double start fails with EADDRINUSE.
import type { Config } from "./config";
import { MAX_BODY_BYTES } from "./lib/json";

/** Options handed to Bun.serve through Elysia's listen. */
export function serveOptions(config: Config): { port: number; hostname: string; reusePort: false; idleTimeout: number; maxRequestBodySize: number } {
  return {
    port: config.port,
    hostname: config.host,
    reusePort: false,
    // Bounds a silent connection and a request body that trickles in (Bun does not reset it on
    // body bytes); headers have Bun's own fixed ~10 s deadline. Once the body is read, a handler
    // that is still working is not cut (tests/http-deadlines.test.ts: AI calls, a GET waiting on
    // PostgreSQL); Elysia's default here was 30 s.
    idleTimeout: config.httpIdleTimeoutSeconds,
    maxRequestBodySize: MAX_BODY_BYTES + 64 * 1024,
  };
}

/**
 * Fails early, before the database is opened (and a first start bootstraps and prints keys),
 * when the port is already taken. The real listen below still binds without port sharing.
 */
export function assertPortFree(config: Config): void {
  if (config.port === 0) return;
  const probe = Bun.serve({ port: config.port, hostname: config.host, reusePort: false, fetch: () => new Response(null, { status: 503 }) });
  probe.stop(true);
}
