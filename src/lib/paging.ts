// One bound for every paginated list (admin, delivery, MCP tools and resources): `page` is an
// integer from 1 to MAX_PAGE, `per_page` from 1 to MAX_PER_PAGE; anything else is 400 naming the
// limit. The delivery entries list alone clamps a larger per_page to the maximum, as the
// interface decided; its page is bounded like every other.
import { AppError } from "../errors";

/** The deepest page a list serves: page × per_page stays within 10 million rows. */
export const MAX_PAGE = 100_000;
export const MAX_PER_PAGE = 100;

type Raw = string | number | undefined;

export function readPaging(input: { page?: Raw; per_page?: Raw }, opts: { defaultPerPage: number; clampPerPage?: boolean }): { page: number; perPage: number } {
  return {
    page: input.page === undefined ? 1 : bounded(input.page, "page", MAX_PAGE, false),
    perPage: input.per_page === undefined ? opts.defaultPerPage : bounded(input.per_page, "per_page", MAX_PER_PAGE, opts.clampPerPage === true),
  };
}

export const pagingMessage = (field: "page" | "per_page"): string => `${field} must be an integer from 1 to ${field === "page" ? MAX_PAGE : MAX_PER_PAGE}`;

/** A number, or decimal digits (any length, nothing else): no exponents, signs, hex or fractions. */
function bounded(value: string | number, field: "page" | "per_page", max: number, clamp: boolean): number {
  const digits = typeof value === "string" && /^\d+$/.test(value.trim()) && /[1-9]/.test(value);
  const n = typeof value === "number" ? value : digits ? Number(value.trim()) : Number.NaN;
  if (Number.isInteger(n) && n >= 1 && n <= max) return n;
  // Digits beyond 2^1024 read as Infinity: still a whole number above the maximum.
  if (clamp && (digits || Number.isInteger(n)) && n > max) return max;
  throw new AppError("invalid_request", pagingMessage(field), { field, minimum: 1, maximum: max });
}
