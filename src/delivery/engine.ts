// Serves delivery answers from the per-instance cache, rendering on a miss. Freshness: every content
// write bumps projects.content_version and NOTIFYs `cms_content` in its transaction. The writing
// instance drops the project's state as soon as the write has committed (lib/commits: the service
// announces it), so it reads its own writes; other instances drop it on the NOTIFY, and
// independently re-read each project's row at least every DELIVERY_VERSION_CHECK_MS, so a lost
// notification delays a write by that much at most. Only committed writes expire anything, and
// only their own project's answers.
import type { AppDeps } from "../core/deps";
import { AppError, describeError, errorBody, isDatabaseUnavailable, notFound } from "../errors";
import { acceptsGzip } from "../lib/accept";
import { onContentCommitted, type PathChanges } from "../lib/commits";
import { checkPreviewToken } from "../preview/service";
import { CONTENT_CHANNEL } from "../write/unit";
import { type CachedAnswer, DeliveryCache, type DeliveryProject } from "./cache";
import { answerHeaders, CORS_HEADERS, etagMatches, gzipEtag, JSON_TYPE, jsonText, makeAnswer, notModified, type Outcome, respond, sha256Base64url128 } from "./http";
import { type AnswerDeps, forgetStored, readStored, storeAnswer, storeAnswers, type ToStore } from "./stored";

/**
 * How a route answers: a rendered `body`, whole at once (cached with a hash ETag), or a `stream`
 * (sitemaps, node list): ETag from (project, version, route); cached when small. The stream's
 * generator yields its first chunk only once it has read its first page of rows: that chunk is
 * read before anything is sent, so a database that cannot give it makes the answer an error.
 */
export type Plan = { key: string; type: string; scope?: () => string | undefined; stored?: () => AnswerDeps | undefined } & (
  | { body: () => Promise<string> }
  | { stream: () => Promise<AsyncGenerator<string>> }
);

const LISTEN_RETRY_MS = 5000;
const encoder = new TextEncoder();
const PLAN_KEY_MEMO = 10_000;
/** Changes whenever rendering changes, so streamed ETags and stored answers (stored.ts) of a new release never match old bytes. */
const RENDER_REVISION = "4";
/** Readers' renders waiting to be stored, at most; and stored in one statement, at most (storeAfter). */
const STORES_WAITING = 1000;
const STORE_BATCH = 100;

export class DeliveryEngine {
  readonly cache: DeliveryCache;
  private listening: Promise<unknown> | null = null;
  private listenRetryAt = 0;
  private readonly cacheControl: string;
  private readonly errorCacheControl: string;
  /** Of answers served from the last good copy while the database is away: kept briefly by CDNs. */
  private readonly staleCacheControl: string;
  private readonly countGzip = (answer: CachedAnswer, bytes: number): void => this.cache.grow(answer, bytes);
  /**
   * Hot reads: the cache key a request URL (path and query) resolves to, for the project state it
   * was resolved with (a plan's key depends only on the URL and the project: locales, default
   * locale). Saves parsing the query, decoding the path and building the key on every hit.
   */
  private readonly planKeys = new Map<string, { project: DeliveryProject; key: string }>();
  /** What stored answers are rendered by (stored.ts): this release's renderer, the public URL and the media widths; null when answers are not stored. */
  private readonly signature: string | null;
  /** A write was announced (on this instance or by NOTIFY) since the refresher last looked: stored answers may be marked. True at start. */
  private marks = true;
  /** Readers' renders waiting to be stored, and the storing of them under way (storeAfter). */
  private readonly toStore: ToStore[] = [];
  private storing: Promise<void> | null = null;

  constructor(private readonly deps: AppDeps) {
    const c = deps.config;
    this.cache = new DeliveryCache(deps.db, {
      maxEntries: c.deliveryCacheEntries,
      maxBytes: c.deliveryCacheMaxBytes,
      checkIntervalMs: c.deliveryVersionCheckMs,
      staleEntries: c.deliveryStaleEntries,
      staleMaxBytes: c.deliveryStaleMaxBytes,
      media: { base: c.publicUrl, widths: c.media.srcsetWidths },
      onStale: (err) => deps.log.warn("delivery: the database is not answering; serving the last good answers marked stale", { err: err instanceof Error ? err.name : String(err) }),
    });
    this.cacheControl = withStaleIfError(c.deliveryCacheControl, c.deliveryStaleIfErrorSeconds);
    this.errorCacheControl = withStaleIfError(c.deliveryErrorCacheControl, c.deliveryStaleIfErrorSeconds);
    this.staleCacheControl = this.errorCacheControl;
    onContentCommitted(deps.db, (projectId, changes) => {
      this.marks = true;
      this.cache.invalidate(projectId, changes);
    });
    this.signature = c.deliveryStoredAnswers ? sha256Base64url128([RENDER_REVISION, c.publicUrl, c.media.srcsetWidths.join(",")].join("\n")) : null;
  }

  /** The project's state, fresh for its content version (what a cached answer is kept under). */
  project(ref: string): DeliveryProject | null | Promise<DeliveryProject | null> {
    this.ensureListening();
    return this.cache.project(ref);
  }

  /** Subscribes once, on first use (apps built and never used open nothing); retried after a failure. */
  private ensureListening(): void {
    if (this.listening !== null || Date.now() < this.listenRetryAt) return;
    // A write committed before the subscription takes effect is caught by the version check.
    this.listening = this.deps.dbHandle
      .listen(CONTENT_CHANNEL, (payload) => this.announced(payload))
      .catch((err: unknown) => {
        this.deps.log.warn("delivery: LISTEN failed; relying on version checks", describeError(err));
        this.listening = null;
        this.listenRetryAt = Date.now() + LISTEN_RETRY_MS;
      });
  }

  /** A NOTIFY: the project id, then the write's PathChanges as JSON (pages taken away or brought, its version) when it has some. */
  private announced(payload: string): void {
    this.marks = true;
    const space = payload.indexOf(" ");
    if (space < 0) {
      this.cache.invalidate(payload);
      return;
    }
    this.cache.invalidate(payload.slice(0, space), pathChanges(payload.slice(space + 1)));
  }

  /**
   * The answer to a delivery read. A cache hit of a fresh project is answered synchronously (no
   * promise, no query); everything else goes through serveAsync.
   */
  serve(request: Request, ref: string, make: (project: DeliveryProject) => Plan): Outcome | Promise<Outcome> {
    return this.cached(request, ref, make) ?? this.serveAsync(request, ref, make);
  }

  /**
   * A cache hit of a fresh project, or null when the read needs more (a miss, a stale or unknown
   * project, invalid input): synchronous apart from a first gzip, no promise, no query. `memo`
   * (the request's path and query) lets a repeated URL skip building its plan.
   */
  cached(request: Request, ref: string, make: (project: DeliveryProject) => Plan, memo?: string): Outcome | Promise<Outcome> | null {
    this.ensureListening();
    const found = this.cache.project(ref);
    if (found === null || found instanceof Promise) return null;
    let key: string;
    const known = memo === undefined ? undefined : this.planKeys.get(memo);
    if (known !== undefined && known.project === found) key = known.key;
    else {
      try {
        key = make(found).key;
      } catch {
        return null; // invalid input: answered (with its error) by serveAsync
      }
      if (memo !== undefined) {
        if (this.planKeys.size >= PLAN_KEY_MEMO) this.planKeys.clear();
        this.planKeys.set(memo, { project: found, key });
      }
    }
    const hit = this.cache.get(found, key);
    return hit ? respond(request, hit, this.countGzip) : null;
  }

  private async serveAsync(request: Request, ref: string, make: (project: DeliveryProject) => Plan): Promise<Outcome> {
    let project: DeliveryProject | null = null;
    let key: string | null = null;
    try {
      const found = this.cache.project(ref);
      project = found instanceof Promise ? await found : found;
      if (!project) throw notFound("project");
      const plan = make(project);
      key = plan.key;
      const hit = this.cache.get(project, plan.key);
      if (hit) return await respond(request, hit, this.countGzip);
      if ("body" in plan) {
        const p = project;
        const answer = await this.cache.getOrRender(project, plan.key, () => this.render(p, plan));
        return await respond(request, answer, this.countGzip);
      }
      return await this.streamed(request, project, plan);
    } catch (err) {
      if (isDatabaseUnavailable(err)) {
        this.cache.unavailable(err);
        const stale = this.stale(request, ref, make, project, key);
        if (stale !== null) return await stale;
      }
      if (err instanceof AppError) {
        // What is known to be gone: the route's last good answer must not come back in an outage.
        if (err.status === 404 && project !== null && key !== null) this.cache.forget(project, key);
        return await this.errorAnswer(request, err);
      }
      throw err;
    }
  }

  /**
   * A reader's answer to a plan: its stored bytes when they are valid (stored.ts), else rendered,
   * and stored when the plan says what it shows, after the answer (storeAfter). Storing is best
   * effort: an answer that cannot be stored is still served (the next miss renders it again).
   */
  private async render(project: DeliveryProject, plan: Extract<Plan, { body: unknown }>): Promise<CachedAnswer> {
    if (this.signature !== null && plan.stored !== undefined) {
      const row = await readStored(this.deps.db, project, plan.key, this.signature);
      if (row !== null) return { ...makeAnswer(project.version, 200, row.body, plan.type, this.cacheControl, row.etag), scope: row.scope ?? undefined };
    }
    const answer = await this.rendered(project, plan);
    this.storeAfter(project, plan, answer);
    return answer;
  }

  /**
   * Stores a reader's render once its answer is on its way (the reader does not wait for the
   * store). Renders are stored together: one statement at a time, with every render that came
   * while the one before ran (at most STORE_BATCH). Past STORES_WAITING waiting, a render is not
   * stored (a flood of misses never queues without bound; the next miss renders it again).
   */
  private storeAfter(project: DeliveryProject, plan: Plan, answer: CachedAnswer): void {
    const deps = this.signature === null ? undefined : plan.stored?.();
    if (deps === undefined || this.toStore.length >= STORES_WAITING) return;
    this.toStore.push({ project, key: plan.key, answer, deps });
    this.storing ??= this.storeWaiting();
  }

  private async storeWaiting(): Promise<void> {
    try {
      while (this.toStore.length > 0 && this.signature !== null) {
        const batch = this.toStore.splice(0, STORE_BATCH);
        await storeAnswers(this.deps.db, this.signature, batch).catch((err: unknown) => {
          this.deps.log.warn("delivery: rendered answers could not be stored", { answers: batch.length, ...describeError(err) });
        });
      }
    } finally {
      this.storing = null;
    }
  }

  /** Resolves once the renders waiting to be stored are (shutdown waits for them before closing the database). */
  async stored(): Promise<void> {
    while (this.storing !== null) await this.storing;
  }

  /** A plan rendered from the database, whatever is stored. */
  private async rendered(project: DeliveryProject, plan: Extract<Plan, { body: unknown }>): Promise<CachedAnswer> {
    return { ...makeAnswer(project.version, 200, await plan.body(), plan.type, this.cacheControl), scope: plan.scope?.() };
  }

  /** Stores a rendered answer for every instance, when answers are stored and the plan says what it shows: true when stored. */
  private async store(project: DeliveryProject, plan: Plan, answer: CachedAnswer): Promise<boolean> {
    const deps = this.signature === null ? undefined : plan.stored?.();
    if (deps === undefined || this.signature === null) return false;
    return storeAnswer(this.deps.db, project, plan.key, this.signature, answer, deps).catch((err: unknown) => {
      this.deps.log.warn("delivery: a rendered answer could not be stored", { key: plan.key, ...describeError(err) });
      return false;
    });
  }

  /** Whether stored answers may have been marked since the last call (see `marks`); `again`: the last look left some, look anyway next time. */
  takeMarks(again = false): boolean {
    const was = this.marks;
    this.marks = again;
    return was;
  }

  /**
   * Renders a marked stored answer again (the refresher, routes.ts): from the database, never from
   * memory, and stores it; a route that no longer answers a page (gone, or its locale) loses its
   * row. True when the row was written or deleted (false: a write came between, or this instance does not know the
   * project's newest version yet; the row stays marked for a later look).
   */
  async refresh(projectId: string, key: string, make: (project: DeliveryProject) => Plan): Promise<boolean> {
    const found = this.cache.project(projectId);
    const project = found instanceof Promise ? await found : found;
    if (project === null || this.signature === null) return false;
    try {
      const plan = make(project);
      if (!("body" in plan)) return false;
      return await this.store(project, plan, await this.rendered(project, plan));
    } catch (err) {
      // 404 (its page gone), 400 (its locale no longer the project's): the key answers no page now.
      if (!(err instanceof AppError)) throw err;
      await forgetStored(this.deps.db, project.id, key);
      return true;
    }
  }

  /**
   * A preview read: the token is checked against the table (revocation is immediate on
   * every instance), the plan is rendered from the latest content, and the answer is never put in
   * the answer cache, nor kept by any other cache (private, no-store, Vary: Authorization).
   * An unknown, revoked or expired token is 401, never the published content.
   */
  async preview(ref: string, token: string, make: (project: DeliveryProject) => Plan): Promise<Outcome> {
    try {
      const found = this.cache.project(ref);
      const project = found instanceof Promise ? await found : found;
      if (!project) throw notFound("project");
      await checkPreviewToken(this.deps.db, project.id, token, this.deps.now());
      const plan = make(project);
      let body: string;
      if ("body" in plan) body = await plan.body();
      else {
        const parts: string[] = [];
        for await (const chunk of await plan.stream()) parts.push(chunk);
        body = parts.join("");
      }
      return { status: 200, headers: { "content-type": plan.type, ...PREVIEW_HEADERS }, body };
    } catch (err) {
      if (!(err instanceof AppError)) throw err;
      return { status: err.status, headers: { "content-type": JSON_TYPE, ...PREVIEW_HEADERS, ...err.headers }, body: jsonText(errorBody(err.code, err.message, err.details)) };
    }
  }

  private async errorAnswer(request: Request, err: AppError, extra: Record<string, string> = {}): Promise<Outcome> {
    const answer = makeAnswer(0, err.status, jsonText(errorBody(err.code, err.message, err.details)), JSON_TYPE, this.errorCacheControl);
    return respond(request, { ...answer, headers: { ...answer.headers, ...extra } });
  }

  /**
   * The database is away: the route's last good answer (never one for a route that was never
   * answered 200, nor one a removal dropped), with Age, X-Cache: stale and a short Cache-Control;
   * null when there is none (the read is 503).
   */
  private stale(request: Request, ref: string, make: (project: DeliveryProject) => Plan, project: DeliveryProject | null, key: string | null): Outcome | Promise<Outcome> | null {
    const p = project ?? this.cache.lastKnown(ref);
    if (p === null) return null;
    let k = key;
    if (k === null) {
      try {
        k = make(p).key;
      } catch (err) {
        // Bad input (a locale the project does not have) is told as such, from the last known project.
        return err instanceof AppError ? this.errorAnswer(request, err) : null;
      }
    }
    const found = this.cache.lastGood(p, k);
    if (found === null) return null;
    if (found === "gone") return this.errorAnswer(request, notFound("node"), { "x-cache": "stale" });
    const extra = { age: String(Math.max(0, Math.floor((Date.now() - found.answer.at) / 1000))), "x-cache": "stale", "cache-control": this.staleCacheControl };
    const mark = (out: Outcome): Outcome => {
      if (!(out instanceof Response)) return { status: out.status, body: out.body, headers: { ...out.headers, ...extra } };
      for (const [name, value] of Object.entries(extra)) out.headers.set(name, value);
      return out;
    };
    const out = respond(request, found.answer, found.grow);
    return out instanceof Promise ? out.then(mark) : mark(out);
  }

  private async streamed(request: Request, project: DeliveryProject, plan: Extract<Plan, { stream: unknown }>): Promise<Response> {
    const etag = versionEtag(project, plan.key, this.deps.config.publicUrl);
    // Planned first: a shard past the end or a sitemap without base URL is 404 even to a client
    // sending `If-None-Match: *` or a guessed tag (RFC 9110 §13.1.2: 304 stands for a 200 only).
    // The generators are lazy, so a 304 still reads no page of rows.
    const chunks = await plan.stream();
    const inm = request.headers.get("if-none-match");
    const tag = inm === null ? null : etagMatches(inm, etag) ? etag : acceptsGzip(request) && etagMatches(inm, gzipEtag(etag)) ? gzipEtag(etag) : null;
    if (tag !== null) {
      await chunks.return(undefined);
      return notModified(tag, this.cacheControl, "Accept-Encoding");
    }
    // Nothing is sent before the first page has been read: when it cannot be (the database is
    // gone), the answer is 503 without a validator, not a 200 whose ETag names a body never made.
    let next: IteratorResult<string> | null;
    try {
      next = await chunks.next();
    } catch (err) {
      await chunks.return(undefined).catch(() => {});
      throw err; // answered by the app's error handler: 503 when the database is unavailable
    }
    // Sent as is: gzip output depends on how the stream is pulled, and one strong ETag must
    // always mean the same bytes. Once cached, the answer is compressed in one deterministic pass.
    const headers = answerHeaders(plan.type, etag, this.cacheControl, true);
    const keep: string[] = [];
    let kept = 0;
    const limit = this.cache.maxEntryBytes;
    const body = new ReadableStream<Uint8Array>({
      pull: async (controller) => {
        try {
          const { value, done } = next ?? (await chunks.next());
          next = null;
          if (done) {
            controller.close();
            if (kept <= limit) this.cache.put(project, plan.key, { version: project.version, status: 200, body: keep.join(""), etag, headers, at: Date.now(), scope: plan.scope?.() });
            return;
          }
          if (kept <= limit) {
            kept += value.length;
            if (kept <= limit) keep.push(value);
            else keep.length = 0;
          }
          controller.enqueue(encoder.encode(value));
        } catch (err) {
          this.deps.log.error("delivery: stream failed", describeError(err));
          controller.error(err);
        }
      },
      cancel: async () => void (await chunks.return(undefined)),
    });
    return new Response(body, { status: 200, headers });
  }
}

/** Of every preview answer, errors included: for this reader only, never stored, never indexed. */
const PREVIEW_HEADERS: Readonly<Record<string, string>> = { ...CORS_HEADERS, "cache-control": "private, no-store", vary: "Authorization", "x-robots-tag": "noindex" };

/** A NOTIFY's PathChanges; when unreadable, anything may be gone and anything may be back. */
function pathChanges(json: string): PathChanges {
  const strings = (v: unknown): v is string[] => Array.isArray(v) && v.every((x) => typeof x === "string");
  try {
    const v = JSON.parse(json) as { gone?: unknown; added?: unknown; version?: unknown };
    const version = Number.isSafeInteger(v.version) ? (v.version as number) : undefined;
    if (strings(v.gone) && strings(v.added)) return version === undefined ? { gone: v.gone, added: v.added } : { gone: v.gone, added: v.added, version };
  } catch {}
  return { gone: [""], added: [""] };
}

/** `cacheControl` with `stale-if-error=<seconds>` (RFC 5861) unless 0 or already there. */
function withStaleIfError(cacheControl: string, seconds: number): string {
  if (seconds === 0 || /(^|,)\s*stale-if-error\s*=/i.test(cacheControl)) return cacheControl;
  return cacheControl.trim() === "" ? `stale-if-error=${seconds}` : `${cacheControl}, stale-if-error=${seconds}`;
}

function versionEtag(project: DeliveryProject, key: string, publicUrl: string): string {
  return `"v${sha256Base64url128([RENDER_REVISION, project.id, project.version, publicUrl, key].join("\n"))}"`;
}
