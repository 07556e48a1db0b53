// Creates the HTTP server for an app: Bun.serve with the app's front (hot delivery reads answered
// before Elysia sees the request, src/delivery/front.ts) and Elysia's own handler for the rest.
// Used instead of app.listen(), which always serves app.fetch; app.server and app.stop() work as
// after app.listen().
import type { Serve, Server } from "bun";
import type { App } from "./app";
import { frontOf } from "./delivery/front";

export type ListenOptions = Omit<Serve.Options<undefined>, "fetch" | "routes" | "websocket"> & { port: number; hostname: string };

export function listen(app: App, options: ListenOptions): App {
  // Elysia finds the path at the first "/" after a fixed offset: 11 by default, which assumes
  // "https://" or a host of at least 4 characters; this server speaks plain http, so the path
  // starts after "http://" + host (7). Without it `Host: x` or a compose service named `cms` got
  // 404 on every route (tests/delivery-fast.test.ts). app.handle() keeps the default.
  if (!("tls" in options && options.tls)) app.config.handler = { ...app.config.handler, standardHostname: false };
  app.compile(); // composes app.fetch once, before the server exists (compile() reloads a running server)
  const handle = app.fetch as (request: Request) => Response | Promise<Response>;
  const front = frontOf(app);
  const fetch =
    front === undefined
      ? handle
      : (request: Request) => {
          let hot: Response | null = null;
          try {
            hot = front.answer(request);
          } catch {
            // Never answered here: the app answers it (and reports what is wrong) the routed way.
          }
          return hot ?? handle(request);
        };
  // Elysia's listen() defaults, then the caller's options.
  const server: Server<undefined> = Bun.serve({ development: process.env.NODE_ENV !== "production", reusePort: true, idleTimeout: 30, ...options, fetch } as Serve.Options<undefined>);
  (app as { server: Server<undefined> | null }).server = server;
  return app;
}
