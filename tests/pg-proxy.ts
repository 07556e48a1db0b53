// A loopback TCP proxy to PostgreSQL that cuts every connection (reset mid-stream) and refuses new
// ones, then lets them through again: a database outage as a service instance sees it, without
// stopping the machine's shared server. Used by the outage tests, and, with `tap`, by the tests that
// read what a client sends on the wire.
import { createConnection, createServer, type Server, type Socket } from "node:net";
import { freePort } from "./helpers";

/**
 * A loopback TCP proxy to PostgreSQL that can cut every connection and refuse new ones (the port is
 * closed). `tap` is called for each connection and given the bytes its client sends, in order.
 */
export async function pgProxy(
  target: { host: string; port: number },
  tap?: () => (fromClient: Buffer) => void,
): Promise<{ port: number; cut(): Promise<void>; restore(): Promise<void>; close(): Promise<void> }> {
  const sockets = new Set<Socket>();
  const onConnection = (client: Socket): void => {
    const upstream = createConnection(target);
    const see = tap?.();
    if (see) client.on("data", see);
    sockets.add(client);
    sockets.add(upstream);
    client.pipe(upstream);
    upstream.pipe(client);
    const end = (): void => {
      client.destroy();
      upstream.destroy();
      sockets.delete(client);
      sockets.delete(upstream);
    };
    client.on("error", end).on("close", end);
    upstream.on("error", end).on("close", end);
  };
  let server: Server = createServer(onConnection);
  const port = freePort();
  const listen = (): Promise<void> => new Promise((resolve, reject) => server.once("error", reject).listen(port, "127.0.0.1", () => resolve()));
  await listen();
  return {
    port,
    async cut() {
      // New connects are refused (nothing listens), open ones are reset mid-stream.
      await new Promise<void>((resolve) => {
        server.close(() => resolve());
        for (const s of sockets) s.resetAndDestroy();
        sockets.clear();
      });
    },
    async restore() {
      server = createServer(onConnection);
      await listen();
    },
    async close() {
      for (const s of sockets) s.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

/** A pgProxy before the server of `url` (database `database`, default: url's), and that database's URL through it. */
export async function pgProxyFor(url: string, opts: { database?: string; tap?: () => (fromClient: Buffer) => void } = {}): Promise<Awaited<ReturnType<typeof pgProxy>> & { url: string }> {
  const direct = new URL(url);
  const proxy = await pgProxy({ host: direct.hostname, port: Number(direct.port || 5432) }, opts.tap);
  const via = new URL(url);
  via.hostname = "127.0.0.1";
  via.port = String(proxy.port);
  if (opts.database) via.pathname = `/${opts.database}`;
  return { ...proxy, url: via.toString() };
}
