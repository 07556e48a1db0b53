// Delivery's search reads, GET /api/p/{ref}/search and /search/suggest (routes in
// src/delivery/routes.ts): plans for the delivery engine, so their answers are cached and ETagged
// under the project's content version, dropped by any removal, and served from the last good copy
// while the database is away, as every other delivery read.
import type { Db } from "../../db/client";
import { type DeliveryProject, LIST_SCOPE } from "../delivery/cache";
import type { Plan } from "../delivery/engine";
import { JSON_TYPE, jsonText } from "../delivery/http";
import { queryOf, queryParam } from "../delivery/model";
import { deliveryLocale, deliveryModel } from "../delivery/service";
import { AppError, notFound } from "../errors";
import { readPaging } from "../lib/paging";
import { modeFields, modeSearch, type SearchMode } from "./hybrid";
import { cleanQuery } from "./query";
import { parseFacets, SUGGEST_LIMIT, searchDriver, searchRequest } from "./service";

/** The plan of a search: `{ data: [{ id, path, title, type, locale, snippet, score }], total, page, per_page, fuzzy, facets? }`. */
export function searchPlan(db: Db, request: Request): (p: DeliveryProject) => Plan {
  return (p) => {
    const query = queryOf(request);
    const locale = deliveryLocale(p, queryParam(query, "locale"));
    // The paging rule of the entries list: per_page above 100 is clamped.
    const { page, perPage } = readPaging({ page: queryParam(query, "page"), per_page: queryParam(query, "per_page") }, { defaultPerPage: 20, clampPerPage: true });
    const facetsRaw = queryParam(query, "facets") ?? null;
    const input = {
      q: cleanQuery(queryParam(query, "q") ?? ""),
      locale,
      isDefault: locale === p.defaultLocale,
      collection: queryParam(query, "collection") ?? null,
      type: queryParam(query, "type") ?? null,
      page,
      perPage,
      facets: [],
    };
    // Semantic search (./hybrid.ts): `mode` absent answers as before, without a `mode` field.
    const modeRaw = queryParam(query, "mode") ?? null;
    if (modeRaw !== null && modeRaw !== "keyword" && modeRaw !== "hybrid") throw new AppError("invalid_request", "mode is keyword or hybrid", { field: "mode" });
    const mode: SearchMode | null = modeRaw;
    const key = `search ${JSON.stringify([locale, input.q, input.collection, input.type, page, perPage, facetsRaw, ...(mode === null ? [] : [mode])])}`;
    return {
      key,
      type: JSON_TYPE,
      scope: () => LIST_SCOPE,
      body: async () => {
        const facets = parseFacets(facetsRaw, await deliveryModel(db, p));
        const request = searchRequest(p.id, "published", { ...input, facets });
        const found = mode === null ? await searchDriver(db).search(request) : await modeSearch(db, searchDriver(db), request, p.version, mode);
        if (found.noCollection) throw notFound("collection");
        return jsonText({
          data: found.hits,
          total: found.total,
          total_exact: found.totalExact,
          page,
          per_page: perPage,
          fuzzy: found.fuzzy,
          ...(found.facets === null ? {} : { facets: found.facets }),
          ...modeFields(found),
        });
      },
    };
  };
}

/** The plan of a suggest: `{ data: [{ id, title, path, type }] }`, up to 8 titles for a search box as the reader types. */
export function suggestPlan(db: Db, request: Request): (p: DeliveryProject) => Plan {
  return (p) => {
    const query = queryOf(request);
    const locale = deliveryLocale(p, queryParam(query, "locale"));
    const q = cleanQuery(queryParam(query, "q") ?? "");
    return {
      key: `suggest ${JSON.stringify([locale, q])}`,
      type: JSON_TYPE,
      scope: () => LIST_SCOPE,
      body: async () => {
        const data = q.trim() === "" ? [] : await searchDriver(db).suggest({ projectId: p.id, version: "published", locale, isDefault: locale === p.defaultLocale, q }, SUGGEST_LIMIT);
        return jsonText({ data });
      },
    };
  };
}
