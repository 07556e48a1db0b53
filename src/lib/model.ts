import { t } from "elysia";

/** Shared wire schemas used by several features' models. */
export const ErrorSchema = t.Object(
  {
    error: t.Object({ code: t.String(), message: t.String(), details: t.Optional(t.Unknown()) }),
  },
  { description: "Error body: { error: { code, message, details? } }" },
);

export const errorResponses = {
  400: ErrorSchema,
  401: ErrorSchema,
  403: ErrorSchema,
  404: ErrorSchema,
} as const;

export const RefParams = t.Object({ ref: t.String({ description: "project id or slug", maxLength: 64 }) });
export const Uuid = t.String({ format: "uuid" });
export const IdParams = t.Object({ id: t.String({ format: "uuid" }) });
export const RefIdParams = t.Object({ ref: t.String({ maxLength: 64 }), id: t.String({ format: "uuid" }) });
export const Timestamp = t.String({ format: "date-time" });
export const Slug = t.String({ pattern: "^[a-z0-9](?:[a-z0-9-]{0,62}[a-z0-9])?$", description: "lowercase letters, digits and inner hyphens, 1-64 characters" });
