// Zod primitives shared by several features' operations: one set of limits for every transport.
import { z } from "zod";
import { SLUG_RE } from "./ids";
import { MAX_PAGE, MAX_PER_PAGE, pagingMessage } from "./paging";

export const NodeId = z.uuid().describe("node id (UUID)");
export const Slug = z.string().regex(SLUG_RE, "lowercase letters, digits and inner hyphens, 1-64 characters");
export const Locale = z.string().min(2).max(35).describe("BCP 47 locale tag, one of the project's locales (see get_project)");
export const Json = z.record(z.string(), z.unknown());

// Formats the OpenAPI document shows on answers (uuid, date-time). Kept out of zod's global
// registry, from which the MCP SDK renders the tools' schemas, so those stay as they are.
const formats = new WeakMap<z.ZodType, string>();
const withFormat = <T extends z.ZodType>(schema: T, format: string): T => (formats.set(schema, format), schema);
/** The metadata of a schema for the OpenAPI document: its global metadata (descriptions) and its format. */
export const openapiMetadata = {
  get: (schema: z.ZodType) => {
    const meta = z.globalRegistry.get(schema);
    const format = formats.get(schema);
    return format === undefined ? meta : { ...meta, format };
  },
} as unknown as z.core.$ZodRegistry<Record<string, unknown>>; // toJSONSchema reads only get(); the registry type also asks for add/remove
export const Id = withFormat(z.string(), "uuid");
export const Timestamp = withFormat(z.string(), "date-time");
/** An empty answer (204 over HTTP). */
export const Empty = z.object({});

// The one paging bound (src/lib/paging.ts), with its message naming the limit.
export const Page = z.number().int(pagingMessage("page")).min(1, pagingMessage("page")).max(MAX_PAGE, pagingMessage("page")).optional().describe(`page number, from 1 to ${MAX_PAGE} (default 1)`);
export const PerPage = (byDefault: number) =>
  z.number().int(pagingMessage("per_page")).min(1, pagingMessage("per_page")).max(MAX_PER_PAGE, pagingMessage("per_page")).optional().describe(`1-${MAX_PER_PAGE}, default ${byDefault}`);
