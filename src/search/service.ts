// Search requests from their transports' inputs: the checks every search answers alike (delivery,
// the admin search, the MCP tool), then the driver (./driver.ts; PostgreSQL by default).
import { type Db, isEmbeddedDb } from "../../db/client";
import { AppError } from "../errors";
import { canonicalLocale } from "../lib/locales";
import type { CompiledModel } from "../model/compile";
import { indexedFields } from "../model/indexes";
import type { Facet, SearchDriver, SearchRequest, SearchVersion } from "./driver";
import { pacedDriver } from "./pace";
import { postgresDriver } from "./postgres";
import { cleanQuery } from "./query";

/** Titles a suggest answers. */
export const SUGGEST_LIMIT = 8;
/** Facets one search may count. */
const MAX_FACETS = 5;

const drivers = new WeakMap<Db, SearchDriver>();
/** The project's search driver: PostgreSQL over the index in `db` (one per database), paced on the embedded one (./pace.ts). */
export function searchDriver(db: Db): SearchDriver {
  let d = drivers.get(db);
  if (!d) drivers.set(db, (d = isEmbeddedDb(db) ? pacedDriver(postgresDriver(db)) : postgresDriver(db)));
  return d;
}

interface ProjectLocales {
  readonly defaultLocale: string;
  readonly locales: readonly string[];
}

/** The project's spelling of `locale` (omitted: the default), or 400 invalid_locale. */
export function searchLocale(project: ProjectLocales, locale: string | undefined | null): string {
  if (locale === undefined || locale === null || locale === "") return project.defaultLocale;
  if (project.locales.includes(locale)) return locale;
  const c = canonicalLocale(locale);
  const match = c ? project.locales.find((l) => l.toLowerCase() === c.toLowerCase()) : undefined;
  if (!match) throw new AppError("invalid_locale", `locale "${locale.slice(0, 40)}" is not one of this project's locales (${project.locales.join(", ")})`, { field: "locale" });
  return match;
}

/** `facets=type,field.category`: "type" and fields the content model marks `index: true`; anything else is 400 naming it. */
export function parseFacets(raw: string | undefined | null, model: CompiledModel | null): Facet[] {
  if (raw === undefined || raw === null || raw.trim() === "") return [];
  const names = [
    ...new Set(
      raw
        .split(",")
        .map((s) => s.trim())
        .filter((s) => s !== ""),
    ),
  ];
  if (names.length > MAX_FACETS) throw new AppError("invalid_request", `facets takes at most ${MAX_FACETS} names`, { field: "facets" });
  const indexed = model === null ? null : indexedFields(model);
  return names.map((name): Facet => {
    if (name === "type") return { name: "type" };
    const field = name.startsWith("field.") ? name.slice(6) : null;
    const found = field === null ? undefined : indexed?.get(field);
    if (field === null || found === undefined || found === "conflict") {
      throw new AppError("invalid_request", `facets: "${name.slice(0, 70)}" is neither type nor field.<name> of a field the content model marks index: true`, { field: "facets" });
    }
    return { name: field, expression: field };
  });
}

export interface SearchInput {
  q: string | undefined | null;
  locale: string;
  isDefault: boolean;
  collection: string | undefined | null;
  type: string | undefined | null;
  page: number;
  perPage: number;
  facets: Facet[];
}

/** The driver's request: the query cleaned (never an error), a collection as a slug path, a type as given. */
export function searchRequest(projectId: string, version: SearchVersion, input: SearchInput): SearchRequest {
  const collection = input.collection?.trim().replace(/^\/+|\/+$/g, "") ?? "";
  const type = input.type?.trim() ?? "";
  if (type.length > 64) throw new AppError("invalid_request", "type is a node type name (at most 64 characters)", { field: "type" });
  if (collection.length > 2048) throw new AppError("invalid_request", "collection is a slug path (at most 2048 characters)", { field: "collection" });
  return {
    projectId,
    version,
    locale: input.locale,
    isDefault: input.isDefault,
    q: cleanQuery(input.q ?? ""),
    collection: collection === "" ? null : collection,
    type: type === "" ? null : type,
    page: input.page,
    perPage: input.perPage,
    facets: input.facets,
  };
}
