import { eq } from "drizzle-orm";
import { LRUCache } from "lru-cache";
import type { Db } from "../../db/client";
import { projects, themes } from "../../db/schema";
import { isDatabaseUnavailable } from "../errors";
import { NO_PATH_CHANGES, type PathChanges } from "../lib/commits";
import { isSlug, isUuid } from "../lib/ids";
import { fallbackChains } from "./fallback";

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
  /** The content model's version (0 or absent: none): a model write is a content write, so this moves with `version`. */
  readonly modelVersion?: number;
  /** Moved by writes that may change any answer (write/answers.ts): stored answers of another epoch are not read. */
  readonly renderEpoch?: number;
  /** How media references are answered: the service's public URL and the variant widths. */
  readonly media?: MediaLinks;
  /** The locales that fall back through another translation, and their chains (fallback.ts); absent when none does. */
  readonly fallbacks?: Readonly<Record<string, readonly string[]>>;
}

interface MediaLinks {
  readonly base: string;
  readonly widths: readonly number[];
}

/** One rendered answer, kept as bytes-ready text with its precomputed headers. */
export interface CachedAnswer {
  readonly version: number;
  readonly status: number;
  readonly body: string;
  readonly etag: string;
  readonly headers: Readonly<Record<string, string>>;
  /** When it was rendered (Date.now()): the Age of a stale answer. */
  readonly at: number;
  /**
   * What a removal must take with it: the base path of the page shown, LIST_SCOPE for lists of
   * nodes, undefined for answers about the project only (robots.txt, theme).
   */
  readonly scope?: string;
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
  /** Bounds of the stale store: answers superseded by a newer version, kept for outages. */
  staleEntries?: number;
  staleMaxBytes?: number;
  /** Called when a project could not be read for want of the database (stale answers are served). */
  onStale?: (err: unknown) => void;
  media?: MediaLinks;
}

/** The scope of an answer listing nodes (node list, entries, sitemaps): any removal takes it. */
export const LIST_SCOPE = "\u0000list";

const STALE_RETRY_MS = 1000;
/**
 * A version read before its announcement arrived is taken as unexplained (its NOTIFY lost) after
 * this long, or at once when an outage needs the project's last good answers. Until then the read
 * may simply have been quicker than the NOTIFY, or than the writer's own announcement at commit.
 */
const UNEXPLAINED_AFTER_MS = 5000;
/** Announced versions kept while an earlier one is missing; past that, the missing one is unexplained. */
const MAX_HEARD = 1024;

/** Which of a project's versions are explained by an announcement (see sawVersion). */
interface Ledger {
  /** Every version up to this one is accounted for: announced, or judged unexplained. */
  settled: number;
  /** Versions announced above `settled`. */
  readonly heard: Set<number>;
  /** Since when (performance.now()) a version above `settled` was read and not announced; null when none is. */
  owedSince: number | null;
  /** A write was announced without its version (a notice from a script or an older writer): it explains the next bump read. */
  unversioned: boolean;
}

/** A route known to answer 404: the page's base path, and the content version it was known gone at. */
interface Gone {
  readonly scope: string;
  readonly version: number;
}

interface ProjectState {
  project: DeliveryProject;
  checkedAt: number;
  /** False when a write was announced while the row was being read: re-read before use. */
  trusted: boolean;
}

/**
 * Per-instance delivery cache: project rows by ref (re-validated every checkIntervalMs, dropped on
 * NOTIFY) and rendered answers keyed by (project, route), valid only for the content version they
 * were rendered at. Bounded by entry count and total size (lru-cache; an answer's size is its body
 * plus its gzip representation once made).
 *
 * Stale store: an answer found superseded (its project moved to a newer version) is moved, not
 * copied, into a second LRU with bounds of its own, and replaced there by the next good answer
 * of its route. While the database cannot be reached, the last good answer of a route (current or
 * stale) is served marked stale. Removals announced with a write (lib/commits: a delete, an
 * unpublish, a move) drop the answers they concern from both stores at once; a version that no
 * announcement explains (a lost NOTIFY: still unannounced UNEXPLAINED_AFTER_MS after it was read,
 * or when an outage begins) drops every answer of its project rendered before it.
 *
 * The LRUs are lru-cache's, not Maps re-inserted on each hit: a Map's delete and set of one key
 * costs in proportion to the Map's size (Bun and Node alike), so a hot page hit over and over
 * cost 1.3 µs per hit with 1,000 answers cached and 11.6 µs with 5,000 (the default bound),
 * against about 20 ns with lru-cache (bench/README.md, bench/delivery/cache-hits.ts).
 */
export class DeliveryCache {
  private readonly states = new Map<string, ProjectState>();
  private readonly loading = new Map<string, { epoch: number; promise: Promise<DeliveryProject | null> }>();
  private readonly entries: LRUCache<string, CachedAnswer>;
  private readonly inflight = new Map<string, Promise<CachedAnswer>>();
  /** Bytes of each answer's gzip representation, once made: counted in the size of the store holding the answer. */
  private readonly gzipBytes = new WeakMap<CachedAnswer, number>();
  private readonly keyOf = new WeakMap<CachedAnswer, string>();
  /** Superseded answers kept for outages; null when DELIVERY_STALE_ENTRIES is 0. */
  private readonly stale: LRUCache<string, CachedAnswer> | null;
  private readonly staleMaxBytes: number;
  /** Routes known to answer 404 now (their page was removed, or answered 404 after being served), with the page's base path; as many as the stale store holds. */
  private readonly gone: LRUCache<string, Gone> | null;
  /** The last project read per ref, and the newest version seen per project: for outages and unexplained bumps. */
  private readonly known = new Map<string, DeliveryProject>();
  private readonly knownVersion = new Map<string, number>();
  /** Per project: which versions an announcement explained (sawVersion). */
  private readonly ledgers = new Map<string, Ledger>();
  /** Until then (performance.now()), project reads fail at once with downErr: the database just did not answer. */
  private downUntil = 0;
  /** Rejected with the database's error, and already handled: callers that drop it (a hot-path miss) leave no unhandled rejection. */
  private downPromise: Promise<never> | null = null;
  /** Bumped by every invalidation: a load that raced one must not be trusted for long. */
  private epoch = 0;
  readonly maxEntryBytes: number;
  /** Given with every answer served from here: counts its gzip representation once made. */
  private readonly countGzip = (answer: CachedAnswer, bytes: number): void => this.grow(answer, bytes);

  constructor(
    private readonly db: Db,
    private readonly opts: CacheOptions,
  ) {
    this.maxEntryBytes = Math.floor(opts.maxBytes / 8);
    // lru-cache takes sizes of 1 and more: an empty body counts as 1 byte. Bounds of 0 are kept
    // by put and retire (nothing is stored); lru-cache itself needs positive ones.
    const sizeCalculation = (a: CachedAnswer): number => Math.max(1, this.bytesOf(a));
    this.entries = new LRUCache({ max: Math.max(1, opts.maxEntries), maxSize: Math.max(1, opts.maxBytes), sizeCalculation });
    const staleEntries = opts.staleEntries ?? 0;
    this.staleMaxBytes = opts.staleMaxBytes ?? 0;
    this.stale = staleEntries === 0 ? null : new LRUCache({ max: staleEntries, maxSize: Math.max(1, this.staleMaxBytes), sizeCalculation });
    this.gone = staleEntries === 0 ? null : new LRUCache({ max: staleEntries });
  }

  /**
   * The project behind an id or slug, or null. A known project is answered at once: past the
   * check interval it is re-validated in the background (a hot read never waits for the
   * database; a write whose NOTIFY was lost shows after the interval plus one query). After a
   * NOTIFY, or a write committed by this instance, the next read waits for the fresh row.
   */
  project(ref: string): DeliveryProject | null | Promise<DeliveryProject | null> {
    // States are kept under normalised refs: a ref found as it is needs no normalising (a hot read's).
    let st = this.states.get(ref);
    let key: string | null = ref;
    if (st === undefined) {
      key = normaliseRef(ref);
      if (key === null) return null;
      st = this.states.get(key);
    }
    if (st?.trusted) {
      if (performance.now() - st.checkedAt >= this.opts.checkIntervalMs && !this.loading.has(key)) this.startLoad(key).catch(() => {});
      return st.project;
    }
    if (this.downPromise !== null) {
      if (performance.now() < this.downUntil) return this.downPromise;
      // Still down as far as this instance knows: one load asks the database again, and the reads
      // meanwhile are answered from memory, not held until it fails (a failing connection may take
      // the pool's reconnect delay, up to a second, or its connect timeout).
      if (!this.loading.has(key)) this.startLoad(key).catch(() => {});
      return this.downPromise;
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
    // Handled here once: a hot-path miss drops the promise, and the database may be down.
    entry.promise.catch(() => {});
    return entry.promise;
  }

  private async load(key: string): Promise<DeliveryProject | null> {
    const epoch = this.epoch;
    const started = performance.now();
    let p: DeliveryProject | null;
    try {
      p = await loadProject(this.db, key);
      if (p && this.opts.media) p = { ...p, media: this.opts.media };
    } catch (err) {
      // The project is no longer trusted: its reads take the slow way, where the engine serves the
      // last good answers marked stale; the database is asked again a second later.
      if (isDatabaseUnavailable(err)) this.unavailable(err, true);
      throw err;
    }
    // The database answered: reads wait for it again.
    this.downPromise = null;
    // A NOTIFY during the read may describe a write the read did not see: the next use waits
    // for another read.
    if (p) {
      this.states.set(key, { project: p, checkedAt: started, trusted: epoch === this.epoch });
      this.known.set(key, p);
      this.sawVersion(p);
    } else {
      this.states.delete(key);
      this.known.delete(key);
    }
    return p;
  }

  /**
   * A query failed for want of the database: no project is trusted any more, so every read takes
   * the slow way (hits are no longer answered as fresh), where the project is read again. When
   * that read fails too (`hold`), reads are answered from memory for a second without asking.
   */
  unavailable(err: unknown, hold = false): void {
    this.states.clear();
    // A load begun before this may still succeed: its row must neither be trusted nor be shared
    // with the reads that come now (they would be answered as fresh while the database is away).
    this.epoch += 1;
    if (!hold) return;
    if (performance.now() >= this.downUntil) this.opts.onStale?.(err);
    this.downUntil = performance.now() + STALE_RETRY_MS;
    this.downPromise = Promise.reject(err);
    this.downPromise.catch(() => {});
  }

  /**
   * A version read. Each content write announces the version it made (at commit to its own
   * instance, by NOTIFY to the others), and a read may see the version before the announcement
   * arrives: such a version is owed, not unexplained. It becomes unexplained (what it took away or
   * brought is unknown) when its announcement has not come UNEXPLAINED_AFTER_MS later, or when an
   * outage needs the project's last good answers first (lastGood).
   */
  private sawVersion(p: DeliveryProject): void {
    const prev = this.knownVersion.get(p.id);
    let l = this.ledgers.get(p.id);
    if (!l) this.ledgers.set(p.id, (l = { settled: p.version, heard: new Set(), owedSince: null, unversioned: false }));
    // Cleared by any read, so a version-less announcement never explains a later bump (a race only drops more).
    const unversioned = l.unversioned;
    l.unversioned = false;
    if (prev === undefined || p.version > prev) this.knownVersion.set(p.id, p.version);
    // The first version read is the starting point; a version-less announcement explains what was read since.
    this.settle(p.id, l, prev === undefined || unversioned ? p.version : l.settled);
    if (l.owedSince !== null && (performance.now() - l.owedSince >= UNEXPLAINED_AFTER_MS || l.heard.size > MAX_HEARD)) this.unexplained(p.id, l);
  }

  /** Moves `settled` to `upTo` at least, then over the announced versions that follow; notes whether a read version is still owed. */
  private settle(projectId: string, l: Ledger, upTo: number): void {
    if (upTo > l.settled) {
      for (const v of l.heard) if (v <= upTo) l.heard.delete(v);
      l.settled = upTo;
    }
    while (l.heard.delete(l.settled + 1)) l.settled += 1;
    if ((this.knownVersion.get(projectId) ?? 0) <= l.settled) l.owedSince = null;
    else l.owedSince ??= performance.now();
  }

  /**
   * The versions read and never announced are taken as lost writes: every superseded answer of the
   * project goes (the instance cannot know what they removed), and a route known gone before the
   * newest of them may be back. Marks made by announcements of later versions stand.
   */
  private unexplained(projectId: string, l: Ledger): void {
    const known = this.knownVersion.get(projectId) ?? l.settled;
    let missing = 0;
    for (let v = known; v > l.settled; v--)
      if (!l.heard.has(v)) {
        missing = v;
        break;
      }
    this.settle(projectId, l, known);
    if (missing === 0) return;
    // Answers rendered at that version or later show what it did: they stay.
    this.drop(projectId, [""], false, missing);
    this.arrived(projectId, [""], missing);
  }

  /** Whether every version of the project read so far is explained; if not, the missing ones are taken as unexplained now. */
  private reckon(projectId: string): void {
    const l = this.ledgers.get(projectId);
    if (l !== undefined && l.owedSince !== null) this.unexplained(projectId, l);
  }

  /** The project as last read through this ref (kept while the database is away), or null. */
  lastKnown(ref: string): DeliveryProject | null {
    const key = normaliseRef(ref);
    return key === null ? null : (this.known.get(key) ?? null);
  }

  /** A content write was committed in this project (NOTIFY from any instance, or this instance's own write). */
  invalidate(projectId: string, changes: PathChanges = NO_PATH_CHANGES): void {
    this.epoch += 1;
    this.heard(projectId, changes.version);
    for (const [key, st] of this.states) if (st.project.id === projectId) this.states.delete(key);
    // A mark whose version is unknown gives way to any later unexplained version.
    if (changes.gone.length > 0) this.drop(projectId, changes.gone, true, changes.version ?? 0);
    if (changes.added.length > 0) this.arrived(projectId, changes.added, changes.version);
  }

  /** An announcement: its version is explained (before or after a read sees it). */
  private heard(projectId: string, version: number | undefined): void {
    let l = this.ledgers.get(projectId);
    if (version === undefined) {
      // Of a project never read here: the first read is the starting point anyway.
      if (l) l.unversioned = true;
      return;
    }
    if (!l) {
      // Nothing read yet: the first version read is the starting point (sawVersion).
      if (!this.knownVersion.has(projectId)) return;
      this.ledgers.set(projectId, (l = { settled: this.knownVersion.get(projectId) ?? 0, heard: new Set(), owedSince: null, unversioned: false }));
    }
    if (version <= l.settled) return;
    l.heard.add(version);
    this.settle(projectId, l, l.settled);
  }

  /**
   * Forgets the answers of `projectId` under the `gone` prefixes, and every list of its nodes. When
   * `current` (a write said so, at `version`): from the cache and the stale store, and a page's
   * route is remembered as gone (404 while the database is away). Else only the answers rendered
   * before `version`, from both.
   */
  private drop(projectId: string, gone: readonly string[], current: boolean, version: number): void {
    const prefix = `${projectId} `;
    const all = gone.includes("");
    const under = (scope: string): boolean => all || gone.some((g) => scope === g || scope.startsWith(`${g}/`));
    const hits = (k: string, a: CachedAnswer): boolean => k.startsWith(prefix) && (a.scope === LIST_SCOPE || (a.scope === undefined ? all : under(a.scope))) && (current || a.version < version);
    for (const store of this.stale === null ? [this.entries] : [this.stale, this.entries]) {
      // The keys are collected first (oldest first): lru-cache's iterators do not allow deletes along the way.
      for (const k of [...store.rkeys()]) {
        const a = store.peek(k);
        if (a === undefined || !hits(k, a)) continue;
        store.delete(k);
        if (current && a.scope !== undefined && a.scope !== LIST_SCOPE) this.markGone(k, a.scope, version);
      }
    }
  }

  /**
   * Pages under these prefixes may exist again (as of `version`, when known): their routes are no
   * longer known to be gone, unless a removal of a later version said so.
   */
  private arrived(projectId: string, added: readonly string[], version?: number): void {
    if (this.gone === null) return;
    const prefix = `${projectId} `;
    const all = added.includes("");
    // <= : a write that names a page both gone and added (a translation, a settings change: what
    // it did to the page is unknown) takes back its own mark; a later write's mark stays.
    const back = [...this.gone.entries()].filter(
      ([k, { scope, version: at }]) => k.startsWith(prefix) && (version === undefined || at <= version) && (all || added.some((g) => scope === g || scope.startsWith(`${g}/`))),
    );
    for (const [k] of back) this.gone.delete(k);
  }

  private markGone(key: string, scope: string, version: number): void {
    this.gone?.set(key, { scope, version });
  }

  /** The route answered 404 at the project's current version: its last good answer is gone too. */
  forget(project: DeliveryProject, route: string): void {
    const key = `${project.id} ${route}`;
    const scope = (this.entries.peek(key) ?? this.stale?.peek(key))?.scope;
    this.entries.delete(key);
    this.stale?.delete(key);
    if (scope !== undefined && scope !== LIST_SCOPE) this.markGone(key, scope, project.version);
  }

  /**
   * While the database is away: the last good answer of a route (current or superseded), "gone"
   * when the route is known to answer 404 now, or null (never answered here: 503).
   */
  lastGood(project: DeliveryProject, route: string): { answer: CachedAnswer; grow: (answer: CachedAnswer, bytes: number) => void } | "gone" | null {
    // Versions read whose announcement has not come by now are taken as lost writes.
    this.reckon(project.id);
    const key = `${project.id} ${route}`;
    const answer = this.entries.peek(key) ?? this.stale?.get(key);
    if (answer !== undefined) return { answer, grow: this.countGzip };
    return this.gone?.has(key) ? "gone" : null;
  }

  get(project: DeliveryProject, route: string): CachedAnswer | null {
    const key = `${project.id} ${route}`;
    const hit = this.entries.get(key);
    if (hit === undefined) return null;
    if (hit.version !== project.version) {
      if (hit.version < project.version) this.retire(key, hit);
      return null;
    }
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

  /** Keeps a good answer of the project's current version: it replaces the route's superseded one and its gone mark. */
  put(project: DeliveryProject, route: string, answer: CachedAnswer): void {
    if (this.opts.maxEntries === 0 || answer.body.length > this.maxEntryBytes) return;
    const key = `${project.id} ${route}`;
    this.stale?.delete(key);
    this.gone?.delete(key);
    this.keyOf.set(answer, key);
    this.entries.set(key, answer);
  }

  /** A cached answer (current or stale) got its gzip representation: it counts against its store's byte bound from now on, once. */
  grow(answer: CachedAnswer, bytes: number): void {
    const key = this.keyOf.get(answer);
    if (key === undefined || this.gzipBytes.has(answer)) return;
    const store = this.entries.peek(key) === answer ? this.entries : this.stale?.peek(key) === answer ? this.stale : null;
    if (store === null) return;
    this.gzipBytes.set(answer, bytes);
    // lru-cache sizes an entry when it is set, and not again when the same value is set over it.
    store.delete(key);
    store.set(key, answer);
  }

  /** Moves a superseded answer (its bytes and gzip representation as they are) into the stale store. */
  private retire(key: string, answer: CachedAnswer): void {
    this.entries.delete(key);
    if (this.stale === null || this.bytesOf(answer) > this.staleMaxBytes) return;
    this.stale.set(key, answer);
  }

  private bytesOf(answer: CachedAnswer): number {
    return answer.body.length + (this.gzipBytes.get(answer) ?? 0);
  }

  stats(): { entries: number; bytes: number; projects: number; staleEntries: number; staleBytes: number } {
    return {
      entries: this.entries.size,
      bytes: this.entries.calculatedSize,
      projects: this.states.size,
      staleEntries: this.stale?.size ?? 0,
      staleBytes: this.stale?.calculatedSize ?? 0,
    };
  }
}

/** The cache key of a project ref: a lower-case id, or a slug; null when it is neither. */
export function normaliseRef(ref: string): string | null {
  if (isUuid(ref)) return ref.toLowerCase();
  return isSlug(ref) ? ref : null;
}

async function loadProject(db: Db, ref: string): Promise<DeliveryProject | null> {
  const { id, slug, name, defaultLocale, locales, publicBaseUrl, fallbacks } = projects;
  const [row] = await db
    .select({
      id,
      slug,
      name,
      defaultLocale,
      locales,
      publicBaseUrl,
      fallbacks,
      version: projects.contentVersion,
      modelVersion: projects.modelVersion,
      renderEpoch: projects.renderEpoch,
      nameOverride: themes.nameOverride,
    })
    .from(projects)
    .leftJoin(themes, eq(themes.projectId, projects.id))
    .where(isUuid(ref) ? eq(projects.id, ref) : eq(projects.slug, ref))
    .limit(1);
  if (!row) return null;
  const { nameOverride, fallbacks: configured, ...project } = row;
  const all = row.locales.includes(row.defaultLocale) ? row.locales : [row.defaultLocale, ...row.locales];
  const chains = fallbackChains(row.defaultLocale, all, configured);
  return { ...project, locales: all, siteName: nameOverride || row.name, ...(chains === undefined ? {} : { fallbacks: chains }) };
}
