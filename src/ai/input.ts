// Validation of provider input: one place for the rules the admin API and any other caller share.
import type { AppDeps } from "../core/deps";
import { AppError } from "../errors";
import { assertStorableStrings } from "../lib/json";
import { isPlainObject } from "../lib/merge";
import { checkOutboundUrl, systemResolver, type UrlPolicy } from "../lib/ssrf";
import { KINDS } from "./kinds";

const MAX_CAPABILITIES_BYTES = 8 * 1024;
const MAX_BASE_URL_CHARS = 2048;

// PostgreSQL stores neither NUL in text nor \u0000 or a lone surrogate in jsonb: such input is
// a 400 here, not a failed insert (500).
const printable = (s: string): boolean => !/[\u0000-\u001f\u007f]/.test(s) && s.isWellFormed();

function checkText(value: string, field: "name" | "model"): string {
  const v = value.trim();
  if (v === "" || v.length > 200 || !printable(v)) throw new AppError("invalid_request", `${field} must be 1 to 200 printable characters`, { field });
  return v;
}

export const checkName = (name: string): string => checkText(name, "name");
export const checkModel = (model: string | null | undefined): string | null => (model === null || model === undefined ? null : checkText(model, "model"));

/** The stored kind for an input kind or alias (case-insensitive). */
export function checkKind(kind: string): string {
  const k = kind.trim().toLowerCase();
  const hit = KINDS.find((i) => i.kind === k || (i.aliases as readonly string[]).includes(k));
  if (!hit) throw new AppError("invalid_request", `kind must be one of openai, anthropic (or claude), gemini, mistral, groq, openrouter`, { field: "kind" });
  return hit.kind;
}

export function checkApiKey(key: string | null | undefined): string | null {
  if (key === null || key === undefined) return null;
  const k = key.trim();
  // The key travels in an HTTP header: vendors' keys are visible ASCII, and anything else (a
  // space, a control or non-ASCII character) is a paste error that would only fail at call time.
  if (k === "" || k.length > 4096 || !/^[\x21-\x7e]+$/.test(k)) throw new AppError("invalid_request", "api_key must be 1 to 4096 visible ASCII characters (no spaces)", { field: "api_key" });
  return k;
}

export function checkCapabilities(c: unknown): Record<string, unknown> {
  if (c === undefined) return {};
  if (!isPlainObject(c)) throw new AppError("invalid_request", "capabilities must be an object", { field: "capabilities" });
  if (JSON.stringify(c).length > MAX_CAPABILITIES_BYTES) throw new AppError("invalid_request", `capabilities must be at most ${MAX_CAPABILITIES_BYTES} bytes of JSON`, { field: "capabilities" });
  try {
    assertStorableStrings(c);
  } catch {
    throw new AppError("invalid_request", "capabilities must not contain NUL characters or unpaired surrogates", { field: "capabilities" });
  }
  return c;
}

export function urlPolicy(deps: AppDeps, unresolvable: UrlPolicy["unresolvable"]): UrlPolicy {
  return { allowPrivate: deps.config.aiAllowPrivateUrls, resolve: deps.resolveHost ?? systemResolver, unresolvable, timeoutMs: Math.min(5000, deps.config.aiTimeoutMs) };
}

/** Normalised base_url (no trailing slash) that passes the outbound guard, or 400. */
export async function checkBaseUrl(deps: AppDeps, value: string | null | undefined): Promise<string | null> {
  if (value === null || value === undefined) return null;
  const u = URL.parse(value.trim());
  if (!u) throw new AppError("invalid_request", "base_url must be an absolute URL", { field: "base_url" });
  if (u.search || u.hash) throw new AppError("invalid_request", "base_url must not carry a query or fragment", { field: "base_url" });
  const normalised = u.toString().replace(/\/+$/, "");
  // Percent-encoding can grow the input several times over; the stored form has the limit.
  if (normalised.length > MAX_BASE_URL_CHARS) throw new AppError("invalid_request", `base_url must be at most ${MAX_BASE_URL_CHARS} characters once normalised`, { field: "base_url" });
  // Unresolvable names are accepted here and refused at call time, where the check runs again.
  const check = await checkOutboundUrl(normalised, urlPolicy(deps, "accept"));
  if (!check.ok) throw new AppError("invalid_request", `base_url ${check.reason}`, { field: "base_url" });
  return normalised;
}
