// The only composition root: loadConfig → openDb → migrate → createApp → listen.
import { createApp, type Service } from "./app";
import { bootstrap } from "./bootstrap";
import { type Config, ConfigError, loadConfig } from "./config";
import type { AppDeps } from "./core/deps";
import { purgeExpired } from "./housekeeping";
import { stdoutSink } from "./lib/log-sink";
import { periodic } from "./lib/periodic";
import { explainStartupError } from "./lib/startup-errors";
import { compiledAssets } from "./platform/files";
import { openRuntime } from "./runtime";
import { startScheduler } from "./schedule/scheduler";
import { startEmbedder } from "./search/embedder";
import { startSearchIndexer } from "./search/indexer";
import { assertPortFree, type HttpServer, serve } from "./server/serve";

/** Marked stored answers rendered again per look of the refresher (one look a second at most). */
const REFRESH_BATCH = 50;

import { startTranslationWorker } from "./translations/jobs-worker";
import { startDispatcher } from "./webhooks/dispatcher";

function configOrExit(): Config {
  try {
    return loadConfig(process.env);
  } catch (err) {
    if (!(err instanceof ConfigError)) throw err;
    console.error(err.message);
    process.exit(2);
  }
}

async function main(): Promise<void> {
  const config = configOrExit();
  let deps: AppDeps | undefined;
  let server: HttpServer;
  let service: Service;
  try {
    deps = await openRuntime(config, await compiledAssets(), { holder: `the service (port ${config.port})` });
    // Before a first start creates the owner and prints keys that would then be lost.
    await assertPortFree(config);
    const first = await bootstrap(deps.db, config, deps.now());
    if (first) {
      stdoutSink().flush(); // log lines so far first
      // Printed once, on the first start of an empty database; never logged as JSON.
      console.log(`
  First start: owner account and root admin key created.
    studio:    ${config.publicUrl}/studio/  (sign in with this email and password)
    email:     ${first.email}
    password:  ${first.password ?? "(from ADMIN_PASSWORD)"}
    admin key: ${first.rootKey ?? "(from ADMIN_TOKEN)"}
  Store them now: they are not shown again.
`);
    }
    service = createApp(deps);
    server = await serve(service, config);
  } catch (err) {
    await deps?.dbHandle.close().catch(() => {});
    // Known start-up failures end in one line and exit code 2; anything else in one line and 1.
    const line = explainStartupError(err, { databaseUrl: config.databaseUrl, port: config.port, who: "service" });
    if (line) {
      console.error(`error: ${line}`);
      process.exit(2);
    }
    console.error(`error: the service could not start: ${err instanceof Error ? err.message : String(err)}`);
    if (config.logLevel === "debug" && err instanceof Error) console.error(err.stack);
    process.exit(1);
  }
  const { log } = deps;
  log.info("listening", { url: `http://${config.host}:${server.port}`, public_url: config.publicUrl, database: deps.dbHandle.driver });

  // The housekeeping (expired OAuth codes and tokens, old rate-limit windows, webhook logs and
  // approvals, revisions past the retention settings; idempotent across instances): at start, so
  // that instances restarted more often than hourly still run it, then hourly.
  const housekeeping = (): void => {
    purgeExpired(deps.db, deps.now(), config).then(
      (n) => log.info("purged expired rows", n),
      () => log.warn("purge failed; will retry next hour"),
    );
  };
  housekeeping();
  setInterval(housekeeping, 3_600_000).unref();
  // Scheduled publishing: every instance looks; each schedule is carried out by one.
  const scheduler = config.schedulerIntervalMs > 0 ? startScheduler(deps, config.schedulerIntervalMs) : null;

  // Webhooks: sends what the outbox holds (several instances share it).
  const dispatcher = config.webhooksDispatch ? startDispatcher(deps) : null;

  // Translation jobs: every instance works on them, one job at a time each, under a lease.
  const translator = startTranslationWorker(deps, { leaseMs: config.translationJobLeaseSeconds * 1000 });

  // The search index's working copies and whole-project rebuilds (src/search/indexer.ts): every instance takes batches of the queue.
  const indexer = startSearchIndexer(deps);
  // Stored delivery answers marked by writes, rendered again before a reader asks (src/delivery/stored.ts).
  const refresher = config.deliveryStoredAnswers ? periodic(1000, () => service.refreshAnswers(REFRESH_BATCH).catch(() => 0)) : null;
  // Semantic search's vectors (src/search/embedder.ts): embeds the published pages of projects that named an embeddings provider.
  const embedder = startEmbedder(deps);

  let stopping = false;
  const shutdown = async (signal: string): Promise<void> => {
    if (stopping) return;
    stopping = true;
    log.info("shutting down", { signal });
    scheduler?.stop();
    void translator.stop();
    void indexer.stop();
    void refresher?.stop();
    void embedder.stop();
    const finish = async (): Promise<never> => {
      await dispatcher?.stop().catch(() => {});
      // The stores of answers just rendered, briefly (a database that went away must not hold the exit).
      await Promise.race([service.answersStored().catch(() => {}), new Promise((r) => setTimeout(r, 2000))]);
      await deps.dbHandle.close().catch(() => {});
      log.info("stopped");
      process.exit(0);
    };
    const force = setTimeout(() => {
      log.warn("grace period over, closing remaining connections");
      // Deno cannot cut open connections: there the process ends here.
      void server.stop(true).finally(finish);
    }, config.shutdownGraceMs);
    try {
      await server.stop(false); // stop accepting, let in-flight requests finish
    } finally {
      clearTimeout(force);
      await finish();
    }
  };
  for (const signal of ["SIGTERM", "SIGINT"]) process.on(signal, () => void shutdown(signal));
}

/** `content-service healthcheck`: for container HEALTHCHECKs on images without curl. */
async function healthcheck(): Promise<never> {
  const port = loadConfig(process.env).port;
  const res = await fetch(`http://127.0.0.1:${port}/readyz`, { signal: AbortSignal.timeout(3000) }).catch(() => null);
  process.exit(res?.ok ? 0 : 1);
}

if (process.argv[2] === "healthcheck") await healthcheck();
else await main();
