import { AppError } from "../errors";
import { readCappedText } from "./stream";

export const MAX_BODY_BYTES = 1024 * 1024;
const MAX_JSON_DEPTH = 32;

/** 413 payload_too_large for a body whose declared length passes `limit`, before a byte of it is read. */
export function refuseDeclaredOver(request: Request, limit: number = MAX_BODY_BYTES): void {
  const declared = Number(request.headers.get("content-length") ?? "0");
  if (declared > limit) throw new AppError("payload_too_large", `request body exceeds ${limit} bytes`);
}

/** Reads a request body as text, refusing more than `limit` bytes even without Content-Length. */
export async function readBodyText(request: Request, limit: number = MAX_BODY_BYTES): Promise<string> {
  refuseDeclaredOver(request, limit);
  const text = await readCappedText(request.body, limit);
  if (text === null) throw new AppError("payload_too_large", `request body exceeds ${limit} bytes`);
  return text;
}

export function parseJsonBody(text: string): unknown {
  if (text.trim() === "") return undefined;
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    throw new AppError("invalid_request", "request body is not valid JSON");
  }
  if (depthOf(value, 0) > MAX_JSON_DEPTH) throw new AppError("invalid_request", `JSON nesting deeper than ${MAX_JSON_DEPTH}`);
  return value;
}

/** PostgreSQL text and jsonb cannot hold NUL or unpaired surrogates: refuse them at the door. */
export function isStorableText(s: string): boolean {
  return !s.includes("\u0000") && s.isWellFormed();
}

export function assertStorableStrings(v: unknown, path: readonly string[] = []): void {
  const bad = (): AppError => new AppError("invalid_request", "text must not contain NUL characters or unpaired surrogates", path.length > 0 ? { field: path.join(".") } : undefined);
  if (typeof v === "string") {
    if (!isStorableText(v)) throw bad();
  } else if (Array.isArray(v)) {
    for (const [i, x] of v.entries()) assertStorableStrings(x, [...path, String(i)]);
  } else if (v !== null && typeof v === "object") {
    for (const [k, x] of Object.entries(v)) {
      if (!isStorableText(k)) throw bad();
      assertStorableStrings(x, [...path, k]);
    }
  }
}

/**
 * A JSON or form body, read up to MAX_BODY_BYTES: bounded size and depth, storable text only;
 * undefined, nothing read, for other types (each caller decides what those get).
 */
export async function parseBody(request: Request, contentType: string | undefined): Promise<unknown> {
  const type = (contentType ?? "").split(";")[0]?.trim().toLowerCase() ?? "";
  if (type === "application/json" || type.endsWith("+json")) {
    const body = parseJsonBody(await readBodyText(request));
    assertStorableStrings(body);
    return body ?? null;
  }
  if (type === "application/x-www-form-urlencoded") return parseForm(await readBodyText(request));
  return undefined;
}

function parseForm(text: string): Record<string, string | string[]> {
  const out: Record<string, string | string[]> = {};
  for (const [k, v] of new URLSearchParams(text)) {
    if (!isStorableText(k) || !isStorableText(v)) throw new AppError("invalid_request", "form fields must not contain NUL characters or unpaired surrogates");
    const prev = Object.hasOwn(out, k) ? out[k] : undefined;
    // Duplicated parameters become arrays so that string schemas reject them (RFC 6749 §3.1).
    Object.defineProperty(out, k, { value: prev === undefined ? v : Array.isArray(prev) ? [...prev, v] : [prev, v], enumerable: true, writable: true, configurable: true });
  }
  return out;
}

function depthOf(v: unknown, d: number): number {
  if (d > MAX_JSON_DEPTH || v === null || typeof v !== "object") return d;
  let max = d + 1;
  for (const child of Array.isArray(v) ? v : Object.values(v)) {
    max = Math.max(max, depthOf(child, d + 1));
    if (max > MAX_JSON_DEPTH) break;
  }
  return max;
}

export function rows<T>(result: unknown): T[] {
  // postgres.js returns the rows array, PGlite an object with .rows.
  return Array.isArray(result) ? result : ((result as { rows?: T[] }).rows ?? []);
}
