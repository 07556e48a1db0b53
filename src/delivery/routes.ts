import { Elysia } from "elysia";
import type { Db } from "../../db/client";
import type { AppDeps } from "../core/deps";
import { AppError, notFound } from "../errors";
import { parseFieldFilters } from "../model/field-filters";
import { searchPlan, suggestPlan } from "../search/delivery";
import { SearchDocs } from "../search/model";
import { getTheme } from "../theme/service";
import { type DeliveryProject, LIST_SCOPE, normaliseRef } from "./cache";
import { DeliveryEngine, type Plan } from "./engine";
import { fallbackNone } from "./fallback";
import { CORS_HEADERS, JSON_TYPE, jsonText, methodNotAllowed, type Outcome, preflight, type Reply, TEXT_TYPE, XML_TYPE } from "./http";
import { DeliveryDocs, queryOf, queryParam } from "./model";
import type { RenderableNode } from "./render";
import { basePathOf, deliveryLocale, dependenciesOf, entriesQuery, getNodeById, getNodeByPath, listEntries, listPublishedNodes, pathSegments } from "./service";
import { robotsTxt, shardXml, sitemapXml } from "./sitemap";
import { type AnswerDeps, forgetStored, markedAnswers } from "./stored";

type HookSet = { headers: Record<string, string | number>; status?: number | string };
type MakePlan = (p: DeliveryProject) => Plan;
/** Sends an outcome the routed way; `response`: a 200 reply as a Response (the hot read's). */
type Send = ((set: HookSet, out: Outcome) => Response | string | ArrayBuffer) & { response: (out: Reply) => Response };
type Params = Record<string, string | null | undefined>;
/** A read route: its path under /api/p/{ref}, its OpenAPI detail, and the plan of a request (`preview`: a preview read). */
type ReadRoute = [string, object, (request: Request, params: Params, preview: boolean) => MakePlan];

/** The plans of the reads a fast read may answer, which the routed reads use too. */
interface Plans {
  byPath: (request: Request, raw: string, preview?: boolean) => MakePlan;
  byId: (request: Request, id: string | null, preview?: boolean) => MakePlan;
  entries: (request: Request, preview?: boolean) => MakePlan;
}

const SHARD_RE = /^sitemap-([1-9][0-9]{0,5})\.xml$/;

/**
 * Public read API under /api/p/{ref}: anonymous, GET/HEAD/OPTIONS, open CORS (set here rather
 * than by @elysiajs/cors, whose onRequest hook and `/*` OPTIONS route would apply to every route
 * of the app, admin and OAuth included).
 */
export function createDelivery(deps: AppDeps) {
  const engine = new DeliveryEngine(deps);
  const send = createSend();
  const plans = createPlans(deps.db);
  const routes = new Elysia({ prefix: "/api/p/:ref" });
  for (const [path, detail, make] of readRoutes(deps.db, plans))
    routes.get(
      path,
      ({ request, set, params }) => {
        const token = previewToken(request);
        if (token === null) return serve(engine, send, request, set, params.ref, make(request, params, false));
        return engine.preview(params.ref ?? "", token, make(request, params, true)).then(
          (o) => send(set, o),
          (err: unknown) => failed(set, err),
        );
      },
      { detail },
    );
  routes
    .options("/", ({ request }) => preflight(request), { detail: { hide: true } })
    .options("/*", ({ request }) => preflight(request), { detail: { hide: true } })
    .all("/", ({ request, set, params }) => other(engine, send, request, set, params.ref), { detail: { hide: true } })
    .all("/*", ({ request, set, params }) => other(engine, send, request, set, params.ref), { detail: { hide: true } });
  // The project as delivery knows it (fresh for its content version): media delivery keeps its answers in memory for as long as it stays the same.
  const project = (ref: string): DeliveryProject | null | Promise<DeliveryProject | null> => engine.project(ref);
  return { routes, fastRead: createFastRead(engine, plans, send), project, refresh: (limit: number) => refreshMarked(deps.db, engine, plans, limit), stored: () => engine.stored() };
}

/**
 * Renders marked stored answers again (stored.ts), up to `limit`, one at a time: each from a
 * request made from its key, as a reader's would be. Answers the number rendered (or forgotten).
 */
async function refreshMarked(db: Db, engine: DeliveryEngine, plans: Plans, limit: number): Promise<number> {
  // Marked rows are found by a scan (no index on `stale`, db/schema/delivery.ts): only after a write was announced.
  if (!engine.takeMarks()) return 0;
  let done = 0;
  const marked = await markedAnswers(db, limit).catch((err: unknown) => {
    engine.takeMarks(true);
    throw err;
  });
  // A full batch: more may be left for the next look.
  if (marked.length === limit) engine.takeMarks(true);
  for (const { project_id: projectId, key } of marked) {
    const make = planOfKey(db, plans, key);
    if (make === null) await forgetStored(db, projectId, key);
    else if (await engine.refresh(projectId, key, make)) done += 1;
  }
  return done;
}

/** The reads whose answers are stored (stored.ts): a node by path, by id, and its translation. */
type PageRead = "path" | "id" | "tr";

/** A node read's key, in the answer cache and the stored answers ("path fr a/b", "id-none en <id>", "tr de <id>"); read back by planOfKey. */
const pageKey = (read: PageRead, none: boolean, locale: string, rest: string): string => `${read}${none ? "-none" : ""} ${locale} ${rest}`;

/** The plan a stored answer's key names (pageKey), as a request would make it; null for any other key. */
function planOfKey(db: Db, plans: Plans, key: string): MakePlan | null {
  const [kind = "", locale = "", rest = ""] = key.split(" ", 3);
  const none = kind.endsWith("-none");
  const read = none ? kind.slice(0, -5) : kind;
  const query = `?locale=${encodeURIComponent(locale)}${none ? "&fallback=none" : ""}`;
  const at = (path: string): Request => new Request(`http://refresh${path}${query}`);
  if (read === "path") {
    const raw = rest.split("/").map(encodeURIComponent).join("/");
    return plans.byPath(at(`/${raw}`), raw);
  }
  if (read === "id") return plans.byId(at(`/${rest}`), rest);
  if (read === "tr") return translationPlan(db, at(`/${rest}`), rest, false);
  return null;
}

/**
 * The engine answers with plain parts or, for streams and 304s, a Response. Plain parts become a
 * Response built from a Headers object made once per cached answer (3× cheaper than from a
 * record), carrying what earlier hooks put in set.headers (the request id); with set.headers
 * then empty and status 200, Elysia passes the Response through instead of re-wrapping its body
 * in a stream.
 */
function createSend(): Send {
  const templates = new WeakMap<object, Headers>();
  /** A 200's Response, its headers copied from the answer's template. */
  const response = (out: Reply): Response => {
    let template = templates.get(out);
    if (!template) templates.set(out, (template = new Headers(out.headers)));
    return new Response(out.body, { status: out.status, headers: template });
  };
  const send = (set: HookSet, out: Outcome): Response | string | ArrayBuffer => {
    if (out instanceof Response) return out;
    if (out.status !== 200) {
      // Errors and 405s: Elysia builds the Response from the body, set.status and set.headers.
      Object.assign(set.headers, out.headers);
      set.status = out.status;
      return out.body;
    }
    const res = response(out);
    for (const k in set.headers) {
      if (!res.headers.has(k)) res.headers.set(k, String(set.headers[k]));
      delete set.headers[k];
    }
    return res;
  };
  return Object.assign(send, { response });
}

/** Unexpected failure: the global handler answers 500; a browser must still be able to read it. */
function failed(set: HookSet, err: unknown): never {
  Object.assign(set.headers, CORS_HEADERS, { "cache-control": "no-store" });
  throw err;
}

/** A routed read: synchronous for a cache hit, a promise otherwise. */
function serve(engine: DeliveryEngine, send: Send, request: Request, set: HookSet, ref: string, make: MakePlan) {
  let out: Outcome | Promise<Outcome>;
  try {
    out = engine.serve(request, ref ?? "", make);
  } catch (err) {
    return failed(set, err);
  }
  if (out instanceof Promise)
    return out.then(
      (o) => send(set, o),
      (err: unknown) => failed(set, err),
    );
  return send(set, out);
}

/** Any other method or path under /api/p/{ref}: 405 for a method other than GET and HEAD, else 404 (no such project, or no such route). */
function other(engine: DeliveryEngine, send: Send, request: Request, set: HookSet, ref: string) {
  if (request.method !== "GET" && request.method !== "HEAD") return send(set, methodNotAllowed(request.method));
  return serve(engine, send, request, set, ref, () => {
    throw notFound("route");
  });
}

function json(key: string, load: () => Promise<unknown>, scope?: string): Plan {
  return { key, type: JSON_TYPE, scope: () => scope, body: async () => jsonText(await load()) };
}

/** One node's answer: its scope (for removals) is the base path it was found at; stored with what it shows (stored.ts). */
function page(key: string, load: () => Promise<RenderableNode>): Plan {
  let scope: string | undefined;
  let deps: AnswerDeps | undefined;
  return {
    key,
    type: JSON_TYPE,
    scope: () => scope,
    stored: () => deps,
    body: async () => {
      const node = await load();
      scope = basePathOf(node);
      deps = dependenciesOf(node);
      return jsonText({ data: node });
    },
  };
}

/**
 * The plans of node and entries reads. `preview`: the latest content, never cached (engine.preview).
 * A null id (not valid percent-encoding) is no such node.
 */
function createPlans(db: Db): Plans {
  return {
    byPath:
      (request, raw, preview = false) =>
      (p) => {
        const query = queryOf(request);
        const locale = deliveryLocale(p, queryParam(query, "locale"));
        const none = fallbackNone(query);
        const segs = pathSegments(raw);
        if (!segs) throw notFound("node");
        return page(pageKey("path", none, locale, segs.join("/")), () => getNodeByPath(db, p, segs, locale, preview, none));
      },
    byId:
      (request, id, preview = false) =>
      (p) => {
        const query = queryOf(request);
        const locale = deliveryLocale(p, queryParam(query, "locale"));
        const none = fallbackNone(query);
        const key = (id ?? "").toLowerCase();
        return page(pageKey("id", none, locale, key), () => getNodeById(db, p, id ?? "", locale, preview, none));
      },
    entries:
      (request, preview = false) =>
      (p) => {
        const query = queryOf(request);
        const q = entriesQuery({
          collection: queryParam(query, "collection"),
          page: queryParam(query, "page"),
          per_page: queryParam(query, "per_page"),
          q: queryParam(query, "q"),
          sort: queryParam(query, "sort"),
          filters: parseFieldFilters(query),
        });
        const load = preview ? async () => ({ ...(await listEntries(db, p, q, true)), preview: true }) : () => listEntries(db, p, q);
        return json(`entries ${JSON.stringify([q.collection, q.page, q.perPage, q.q, q.sort, q.filters.map((f) => [f.param, f.value])])}`, load, LIST_SCOPE);
      },
  };
}

/**
 * Hot reads answered before routing (called from the app's onRequest): a GET of a node by path or
 * id, or an entries page, whose answer is cached for the project's current version. Anything else
 * (a miss, HEAD, percent-encoded paths, errors) returns null and takes the routed way.
 * `requestId` may be a function, called only when there is an answer.
 */
function createFastRead(engine: DeliveryEngine, plans: Plans, send: Send) {
  return (request: Request, requestId: string | ((request: Request) => string)): Response | null => {
    if (request.method !== "GET") return null;
    const url = request.url;
    const pathStart = url.indexOf("/", url.indexOf("//") + 2);
    if (!url.startsWith("/api/p/", pathStart)) return null;
    const q = url.indexOf("?", pathStart);
    const path = url.slice(pathStart + 7, q < 0 ? undefined : q);
    const slash = path.indexOf("/");
    if (slash <= 0 || path.includes("%") || url.includes("#")) return null;
    // A preview (Authorization or ?preview=) is never a cached answer: the routed way serves it.
    if ((q >= 0 && url.includes("preview=", q)) || request.headers.has("authorization")) return null;
    const make = fastPlan(plans, request, path.slice(slash + 1));
    if (make === null) return null;
    const out = engine.cached(request, path.slice(0, slash), make, url.slice(pathStart));
    if (out === null || out instanceof Promise || (!(out instanceof Response) && out.status !== 200)) return null;
    // The request id is made only for an answer (a miss gets its id on the routed way).
    const id = typeof requestId === "string" ? requestId : requestId(request);
    const res = out instanceof Response ? out : send.response(out);
    res.headers.set("x-request-id", id);
    return res;
  };
}

/** The plan of a read a fast read may answer (`rest`: the path after the project ref), or null. */
function fastPlan(plans: Plans, request: Request, rest: string): MakePlan | null {
  if (rest.startsWith("nodes/by-path/")) return plans.byPath(request, rest.slice(14));
  if (rest === "entries") return plans.entries(request);
  if (rest.startsWith("nodes/") && rest.length > 6 && !rest.includes("/", 6)) return plans.byId(request, rest.slice(6));
  return null;
}

/**
 * The read routes. Cached answers are expired by committed writes only (see engine.ts), never by
 * requests. Elysia gives null for a parameter that is not valid percent-encoding.
 */
function readRoutes(db: Db, plans: Plans): ReadRoute[] {
  return [
    ["/nodes/by-path", { ...DeliveryDocs.byPath, hide: true }, (request, _, preview) => plans.byPath(request, "", preview)],
    ["/nodes/by-path/*", DeliveryDocs.byPath, (request, params, preview) => plans.byPath(request, params["*"] ?? "", preview)],
    ["/nodes/:id", DeliveryDocs.byId, (request, params, preview) => plans.byId(request, params.id ?? null, preview)],
    ["/nodes", DeliveryDocs.list, (_, __, preview) => (p) => ({ key: "nodes", type: JSON_TYPE, scope: () => LIST_SCOPE, stream: async () => nodesJson(listPublishedNodes(db, p, 500, preview)) })],
    ["/entries", DeliveryDocs.entries, (request, _, preview) => plans.entries(request, preview)],
    ["/translations/nodes/:nodeId", DeliveryDocs.translation, (request, params, preview) => translationPlan(db, request, params.nodeId ?? "", preview)],
    ["/sitemap.xml", DeliveryDocs.sitemap, (_, params) => (p) => ({ key: `sitemap ${normaliseRef(params.ref ?? "")}`, type: XML_TYPE, scope: () => LIST_SCOPE, stream: () => sitemapXml(db, p) })],
    ["/search", SearchDocs.search, (request) => searchPlan(db, request)],
    ["/search/suggest", SearchDocs.suggest, (request) => suggestPlan(db, request)],
    ["/robots.txt", DeliveryDocs.robots, () => (p) => ({ key: "robots", type: TEXT_TYPE, body: async () => robotsTxt(p) })],
    ["/theme", DeliveryDocs.theme, () => (p) => json("theme", () => getTheme(db, p.id))],
    ["/:file", DeliveryDocs.shard, (_, params) => (p) => shardPlan(db, p, params.file ?? "")],
  ];
}

/** The published node merged with a published translation; 404 when the locale has none. */
function translationPlan(db: Db, request: Request, id: string, preview: boolean): MakePlan {
  return (p) => {
    const query = queryOf(request);
    const raw = queryParam(query, "locale");
    if (raw === undefined || raw === "") throw new AppError("missing_parameter", "locale is required", { field: "locale" });
    const locale = deliveryLocale(p, raw);
    const none = fallbackNone(query);
    return page(pageKey("tr", none, locale, id.toLowerCase()), async () => {
      const node = await getNodeById(db, p, id, locale, preview, none);
      if (!node.translated) throw notFound("translation");
      return node;
    });
  };
}

/** A sitemap shard, `sitemap-{n}.xml`; any other file is no route. */
function shardPlan(db: Db, p: DeliveryProject, file: string): Plan {
  const m = SHARD_RE.exec(file);
  if (!m) throw notFound("route");
  const n = Number(m[1]);
  return { key: `shard ${n}`, type: XML_TYPE, scope: () => LIST_SCOPE, stream: () => shardXml(db, p, n) };
}

/**
 * The preview token of a delivery read: `Authorization: Bearer cms_pv_…`, or the
 * `preview` query parameter (iframes cannot send headers); null for an ordinary read. Another
 * Bearer is not ours to judge (delivery is anonymous): the read is an ordinary one. A `preview`
 * parameter, even empty, asks for a preview: a bad one is 401, never the published content.
 */
function previewToken(request: Request): string | null {
  const auth = request.headers.get("authorization");
  if (auth !== null) {
    const m = /^bearer\s+(cms_pv_\S*)\s*$/i.exec(auth);
    if (m?.[1]) return m[1];
  }
  const url = request.url;
  const q = url.indexOf("?");
  if (q < 0 || !url.includes("preview=", q)) return null;
  return new URL(url).searchParams.get("preview");
}

/** The first chunk goes out with the first page of rows (see StreamPlan). */
async function* nodesJson(pages: AsyncGenerator<unknown[]>): AsyncGenerator<string> {
  let head = '{"data":[';
  for await (const page of pages) {
    if (page.length === 0) continue;
    yield head + page.map((row) => jsonText(row)).join(",");
    head = ",";
  }
  yield head === "," ? "]}" : `${head}]}`;
}
