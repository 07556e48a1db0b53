// Fallback chains (docs/translation.md#fallback-chains). A field a locale's published translation
// lacks is answered from the first locale of the locale's chain whose published translation has
// it, else from the base content (the default locale's). The chain is the project's `fallbacks`
// setting for the locale, else RFC 4647 lookup (de-AT → de), among the project's locales; the
// default locale ends every chain. Every locale but the default one names what fell back, the
// base content's units with the default locale; a locale whose chain is the default locale alone
// keeps no chain (the statement that reads it is the one it always was). A chain costs no extra
// statement (service.ts reads the chain's translations with the locale's).
import { AppError } from "../errors";
import { deepMerge, isPlainObject } from "../lib/merge";
import type { Path } from "../model/leaves";
import { pointerOf } from "../model/units";

/** One locale's published translation as a read with fallbacks sees it (the requested locale's first, then its chain's). */
export interface Layer {
  readonly locale: string;
  readonly meta: Record<string, unknown>;
  /** Its overrides of the node's fields, and of each block's data by block id. */
  readonly fields: unknown;
  readonly blocks: unknown;
}

/**
 * The fallback locales of each project locale whose chain passes through another locale than the
 * default one (the configured chain, else RFC 4647 lookup), or undefined when no locale's does: a
 * project without chains keeps no map. A chain stops at the default locale (it has every field).
 */
export function fallbackChains(defaultLocale: string, locales: readonly string[], configured: Readonly<Record<string, readonly string[]>>): Record<string, string[]> | undefined {
  let out: Record<string, string[]> | undefined;
  for (const locale of locales) {
    if (locale === defaultLocale) continue;
    const named = Object.hasOwn(configured, locale) ? (configured[locale] ?? []) : lookupChain(locale, locales);
    const chain: string[] = [];
    for (const l of named) {
      if (l === defaultLocale) break;
      if (l !== locale && locales.includes(l) && !chain.includes(l)) chain.push(l);
    }
    if (chain.length > 0) (out ??= {})[locale] = chain;
  }
  return out;
}

/**
 * RFC 4647 §3.4 lookup: the tag's subtags dropped from the end one at a time (a singleton left
 * last goes with the subtag after it: zh-Hant-x-a → zh-Hant), keeping the project's locales.
 */
function lookupChain(locale: string, locales: readonly string[]): string[] {
  const subtags = locale.split("-");
  const out: string[] = [];
  while (subtags.length > 1) {
    subtags.pop();
    if (subtags.length > 1 && subtags[subtags.length - 1]?.length === 1) subtags.pop();
    const tag = subtags.join("-").toLowerCase();
    const found = locales.find((l) => l.toLowerCase() === tag);
    if (found !== undefined) out.push(found);
  }
  return out;
}

/** `?fallback=none` (only what the locale has); absent or empty: the chain. Anything else is 400. */
export function fallbackNone(query: URLSearchParams): boolean {
  if (!query.has("fallback")) return false;
  const all = query.getAll("fallback");
  if (all.length > 1) throw new AppError("invalid_request", "fallback must be given once", { field: "fallback" });
  if (all[0] === "" || all[0] === "none") return all[0] === "none";
  throw new AppError("invalid_request", 'fallback must be "none" (only what the locale has) or left out (its fallback chain)', { field: "fallback" });
}

/** The overrides (the first wins) merged over `base`: objects key by key, anything else replaced whole (lib/merge). */
export function mergeLayers(base: Record<string, unknown>, overrides: readonly unknown[]): Record<string, unknown> {
  let out = base;
  for (let i = overrides.length - 1; i >= 0; i--) {
    const o = overrides[i];
    if (isPlainObject(o)) out = deepMerge(out, o);
  }
  return out;
}

/** Whether `holder` (an override) gives the value at `path` from `from` on: it has the key all the way, or replaces a value above it whole. */
function covers(holder: unknown, path: Path, from: number): boolean {
  if (!isPlainObject(holder)) return false;
  let v: unknown = holder;
  for (let i = from; i < path.length; i++) {
    if (!isPlainObject(v)) return true;
    const key = String(path[i]);
    if (!Object.hasOwn(v, key)) return false;
    v = v[key];
  }
  return true;
}

const nonBlank = (v: unknown): boolean => typeof v === "string" && v.trim() !== "";
const own = (holder: unknown, key: string): unknown => (isPlainObject(holder) && Object.hasOwn(holder, key) ? holder[key] : undefined);

/** Whether a layer carries the unit at `path` (a path of units.ts: title, seo description, fields, block data). */
export function layerHas(layer: Layer, path: Path): boolean {
  const head = path[0];
  if (head === "title") return nonBlank(layer.meta.title);
  if (head === "seo") return nonBlank(layer.meta.description);
  if (head === "fields") return covers(layer.fields, path, 1);
  return covers(own(layer.blocks, String(path[1])), path, 3);
}

/**
 * Where each unit the requested locale lacks comes from: pointer → the first layer's locale that
 * has it, else `base` (the default locale). `skip(path)`: a unit not shown as the base's even so
 * (a description made from the first text block).
 */
export function provenance(units: readonly Path[], layers: readonly Layer[], locale: string, base: string, skip: (path: Path) => boolean): Record<string, string> {
  const out: Record<string, string> = {};
  for (const path of units) {
    const from = layers.find((l) => layerHas(l, path))?.locale;
    if (from === locale || (from === undefined && skip(path))) continue;
    // A pointer starts with "/": never "__proto__".
    out[pointerOf(path)] = from ?? base;
  }
  return out;
}

/**
 * `value` without the unit at `path` (relative to it): its key is left out; a unit inside an
 * array takes the array with it (a translation overrides arrays whole). A fresh object along the
 * path; `value` is not changed.
 */
export function withoutUnit(value: Record<string, unknown>, path: Path): Record<string, unknown> {
  const cut = path.findIndex((s) => typeof s === "number");
  const keys = (cut < 0 ? path : path.slice(0, cut)).map(String);
  return without(value, keys, 0);
}

function without(value: Record<string, unknown>, keys: readonly string[], i: number): Record<string, unknown> {
  const key = keys[i];
  if (key === undefined || !Object.hasOwn(value, key)) return value;
  const out = { ...value };
  if (i === keys.length - 1) {
    delete out[key];
    return out;
  }
  const child = value[key];
  if (!isPlainObject(child)) return value;
  Object.defineProperty(out, key, { value: without(child, keys, i + 1), enumerable: true, writable: true, configurable: true });
  return out;
}
