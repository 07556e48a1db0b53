// Serving and the client address, on each runtime. Bun: Bun.serve with the delivery front
// (serve-bun.ts, unchanged from before). Node and Deno: srvx (the server under @elysiajs/node;
// Deno.serve on Deno) with the same front before app.fetch. @elysiajs/node's own listen() is not
// used: it always binds with reusePort (a second process on the same port is what this service
// must refuse), has no client address (its requestIP throws) and skips the front.
import type { Service } from "../app";
import type { Config } from "../config";
import { runtime } from "../platform/runtime";
import type { HttpServer } from "./serve-web";

export type { HttpServer };

/** Starts serving the app behind its front with the service's options (port, host, idle deadline, body limit). */
export async function serve(service: Service, config: Config): Promise<HttpServer> {
  if (runtime === "bun") {
    const bun = await import("./serve-bun");
    const served = bun.listen(service, bun.serveOptions(config));
    return { port: served.server?.port ?? config.port, stop: async (force) => void (await served.stop(force)) };
  }
  return (await import("./serve-web")).serveWeb(service, config);
}

/**
 * Fails early, before the database is opened (and a first start bootstraps and prints keys),
 * when the port is already taken. serve() still binds without port sharing.
 */
export async function assertPortFree(config: Config): Promise<void> {
  if (config.port === 0) return;
  if (runtime === "bun") return (await import("./serve-bun")).assertPortFree(config);
  const { createServer } = await import("node:net");
  await new Promise<void>((resolve, reject) => {
    const probe = createServer();
    probe.once("error", reject);
    probe.listen({ port: config.port, host: config.host, exclusive: true }, () => probe.close(() => resolve()));
  });
}
