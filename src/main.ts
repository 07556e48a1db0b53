// The only composition root: loadConfig → openDb → migrate → createApp → listen.
import { createApp } from "./app";
import { bootstrap } from "./bootstrap";
import { ConfigError, loadConfig } from "./config";
import { MAX_BODY_BYTES } from "./lib/json";
import { openRuntime } from "./runtime";

async function main(): Promise<void> {
  let config;
  try {
    config = loadConfig(process.env);
  } catch (err) {
    if (err instanceof ConfigError) {
      console.error(err.message);
      process.exit(2);
    }
    throw err;
  }
  const deps = await openRuntime(config);
  const { log } = deps;
  const first = await bootstrap(deps.db, config, deps.now());
  if (first) {
    // Printed once, on the first start of an empty database; never logged as JSON.
    console.log(
      [
        "",
        "  First start: owner account and root admin key created.",
        `    email:     ${first.email}`,
        first.password ? `    password:  ${first.password}` : "    password:  (from ADMIN_PASSWORD)",
        first.rootKey ? `    admin key: ${first.rootKey}` : "    admin key: (from ADMIN_TOKEN)",
        "  Store them now: they are not shown again.",
        "",
      ].join("\n"),
    );
  }
  const app = createApp(deps).listen({ port: config.port, hostname: config.host, maxRequestBodySize: MAX_BODY_BYTES + 64 * 1024 });
  log.info("listening", { url: `http://${config.host}:${app.server?.port}`, public_url: config.publicUrl, database: deps.dbHandle.driver });

  let stopping = false;
  const shutdown = async (signal: string): Promise<void> => {
    if (stopping) return;
    stopping = true;
    log.info("shutting down", { signal });
    const force = setTimeout(() => {
      log.warn("grace period over, closing remaining connections");
      void app.stop(true);
    }, config.shutdownGraceMs);
    try {
      await app.stop(false); // stop accepting, let in-flight requests finish
    } finally {
      clearTimeout(force);
      await deps.dbHandle.close().catch(() => {});
      log.info("stopped");
      process.exit(0);
    }
  };
  process.on("SIGTERM", () => void shutdown("SIGTERM"));
  process.on("SIGINT", () => void shutdown("SIGINT"));
}

await main();
