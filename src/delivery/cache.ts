import { eq } from "drizzle-orm";
import type { Db } from "../../db/client";
import { projects, themes } from "../../db/schema";
import { isSlug, isUuid } from "../lib/ids";

/** What delivery needs to know about a project; reloaded whenever its content version moves. */
export interface DeliveryProject {
  readonly id: string;
  readonly slug: string;
  readonly name: string;
  readonly defaultLocale: string;
  readonly locales: readonly string[];
  readonly publicBaseUrl: string | null;
  /** theme name_override, else the project name (og:site_name, JSON-LD WebSite). */
  readonly siteName: string;
  readonly version: number;
}

/** One rendered answer, kept as bytes-ready text with its precomputed headers. */
export interface CachedAnswer {
  readonly version: number;
  readonly status: number;
  readonly body: string;
  readonly etag: string;
  readonly headers: Readonly<Record<string, string>>;
  /** The gzip representation, made on the first request that accepts it… */
  gzip?: Promise<GzipAnswer>;
  /** …and the same once made, so later gzip hits are answered synchronously (before routing). */
  gzipped?: GzipAnswer;
}

export interface GzipAnswer {
  readonly status: 200;
  readonly body: ArrayBuffer;
  readonly etag: string;
  readonly headers: Readonly<Record<string, string>>;
}

export interface CacheOptions {
  maxEntries: number;
  maxBytes: number;
  /** Safety net: a project's version is re-read at least this often even when no NOTIFY arrives. */
  checkIntervalMs: number;
  /** Called when a re-validation failed and the known project is served as it was. */
  onStale?: (err: unknown) => void;
}

const STALE_RETRY_MS = 1000;

interface ProjectState {
  project: DeliveryProject;
  checkedAt: number;
  /** False when a write was announced while the row was being read: re-read before use. */
  trusted: boolean;
}

/**
 * Per-instance delivery cache: project rows by ref (re-validated every checkIntervalMs, dropped on
 * NOTIFY) and rendered answers keyed by (project, route), valid only for the content version they
 * were rendered at. Bounded by entry count and total size (LRU).
 */
export class DeliveryCache {
  private readonly states = new Map<string, ProjectState>();
  private readonly loading = new Map<string, { epoch: number; promise: Promise<DeliveryProject | null> }>();
  private readonly entries = new Map<string, CachedAnswer>();
  private readonly inflight = new Map<string, Promise<CachedAnswer>>();
  /** Bytes of each cached answer's gzip representation, once made; counted in `bytes` too. */
  private readonly extra = new WeakMap<CachedAnswer, number>();
  private readonly keyOf = new WeakMap<CachedAnswer, string>();
  private bytes = 0;
  /** Bumped by every invalidation: a load that raced one must not be trusted for long. */
  private epoch = 0;
  readonly maxEntryBytes: number;

  constructor(
    private readonly db: Db,
    private readonly opts: CacheOptions,
  ) {
    this.maxEntryBytes = Math.floor(opts.maxBytes / 8);
  }

  /**
   * The project behind an id or slug, or null. A known project is answered at once: past the
   * check interval it is re-validated in the background (a hot read never waits for the
   * database; a write whose NOTIFY was lost shows after the interval plus one query). After a
   * NOTIFY, or a write committed by this instance, the next read waits for the fresh row.
   */
  project(ref: string): DeliveryProject | null | Promise<DeliveryProject | null> {
    const key = normaliseRef(ref);
    if (key === null) return null;
    const st = this.states.get(key);
    if (st?.trusted) {
      if (performance.now() - st.checkedAt >= this.opts.checkIntervalMs && !this.loading.has(key)) this.startLoad(key).catch(() => {});
      return st.project;
    }
    const pending = this.loading.get(key);
    // A load begun before the last announced write may have read the row before it: start another.
    if (pending && pending.epoch === this.epoch) return pending.promise;
    return this.startLoad(key);
  }

  private startLoad(key: string): Promise<DeliveryProject | null> {
    // The callback runs once the load settles, after entry exists.
    const entry = {
      epoch: this.epoch,
      promise: this.load(key).finally(() => {
        if (this.loading.get(key) === entry) this.loading.delete(key);
      }),
    };
    this.loading.set(key, entry);
    return entry.promise;
  }

  private async load(key: string): Promise<DeliveryProject | null> {
    const epoch = this.epoch;
    const started = performance.now();
    let p: DeliveryProject | null;
    try {
      p = await loadProject(this.db, key);
    } catch (err) {
      // Stale-if-error: while the database does not answer, a project already known keeps being
      // served from the cache (no write can happen meanwhile); the next check waits a second.
      const known = this.states.get(key);
      if (!known) throw err;
      this.opts.onStale?.(err);
      known.checkedAt = performance.now() - this.opts.checkIntervalMs + STALE_RETRY_MS;
      known.trusted = true;
      return known.project;
    }
    // A NOTIFY during the read may describe a write the read did not see: the next use waits
    // for another read.
    if (p) this.states.set(key, { project: p, checkedAt: started, trusted: epoch === this.epoch });
    else this.states.delete(key);
    return p;
  }

  /** A content write was committed in this project (NOTIFY from any instance, or this instance's own write). */
  invalidate(projectId: string): void {
    this.epoch += 1;
    for (const [key, st] of this.states) if (st.project.id === projectId) this.states.delete(key);
  }

  get(project: DeliveryProject, route: string): CachedAnswer | null {
    const key = `${project.id} ${route}`;
    const hit = this.entries.get(key);
    if (!hit || hit.version !== project.version) return null;
    // LRU: re-insert so the Map's insertion order is the recency order.
    this.entries.delete(key);
    this.entries.set(key, hit);
    return hit;
  }

  /** Cached answer, or the produced one (one producer per key and version at a time). */
  async getOrRender(project: DeliveryProject, route: string, produce: () => Promise<CachedAnswer>): Promise<CachedAnswer> {
    const hit = this.get(project, route);
    if (hit) return hit;
    const flightKey = `${project.id} ${project.version} ${route}`;
    let flight = this.inflight.get(flightKey);
    if (!flight) {
      flight = produce()
        .then((answer) => {
          if (answer.status === 200) this.put(project, route, answer);
          return answer;
        })
        .finally(() => this.inflight.delete(flightKey));
      this.inflight.set(flightKey, flight);
    }
    return flight;
  }

  put(project: DeliveryProject, route: string, answer: CachedAnswer): void {
    const size = answer.body.length;
    if (this.opts.maxEntries === 0 || size > this.maxEntryBytes) return;
    const key = `${project.id} ${route}`;
    const old = this.entries.get(key);
    if (old) this.remove(key, old);
    this.entries.set(key, answer);
    this.keyOf.set(answer, key);
    this.bytes += size;
    this.evict();
  }

  /** A cached answer got its gzip representation: it counts against the byte bound from now on. */
  grow(answer: CachedAnswer, bytes: number): void {
    const key = this.keyOf.get(answer);
    if (key === undefined || this.entries.get(key) !== answer || this.extra.has(answer)) return;
    this.extra.set(answer, bytes);
    this.bytes += bytes;
    this.evict();
  }

  private remove(key: string, answer: CachedAnswer): void {
    this.entries.delete(key);
    this.bytes -= answer.body.length + (this.extra.get(answer) ?? 0);
    this.extra.delete(answer);
    this.keyOf.delete(answer);
  }

  private evict(): void {
    for (const [k, v] of this.entries) {
      if (this.entries.size <= this.opts.maxEntries && this.bytes <= this.opts.maxBytes) break;
      this.remove(k, v);
    }
  }

  stats(): { entries: number; bytes: number; projects: number } {
    return { entries: this.entries.size, bytes: this.bytes, projects: this.states.size };
  }
}

/** The cache key of a project ref: a lower-case id, or a slug; null when it is neither. */
export function normaliseRef(ref: string): string | null {
  if (isUuid(ref)) return ref.toLowerCase();
  return isSlug(ref) ? ref : null;
}

async function loadProject(db: Db, ref: string): Promise<DeliveryProject | null> {
  const { id, slug, name, defaultLocale, locales, publicBaseUrl } = projects;
  const [row] = await db
    .select({ id, slug, name, defaultLocale, locales, publicBaseUrl, version: projects.contentVersion, nameOverride: themes.nameOverride })
    .from(projects)
    .leftJoin(themes, eq(themes.projectId, projects.id))
    .where(isUuid(ref) ? eq(projects.id, ref) : eq(projects.slug, ref))
    .limit(1);
  if (!row) return null;
  const { nameOverride, ...project } = row;
  return { ...project, locales: row.locales.includes(row.defaultLocale) ? row.locales : [row.defaultLocale, ...row.locales], siteName: nameOverride || row.name };
}
