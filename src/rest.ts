// The admin REST transport of the declared operations (src/core/operation.ts): one route per HTTP
// binding and its OpenAPI entry, both derived from the declaration. Nothing here knows a feature.

import { type Context, Elysia } from "elysia";
import { z } from "zod";
import { type AdminAuthenticator, adminDoc, requireScopes, resolveProject } from "./auth";
import type { AppDeps } from "./core/deps";
import { type HttpBinding, httpBindings, type Operation, runOperation, strippedFields, undeclaredFieldsError } from "./core/operation";
import { AppError, ErrorBody } from "./errors";
import { adminCors, corsHeaders, corsPreflight } from "./lib/cors";
import { isPlainObject } from "./lib/merge";
import { readPaging } from "./lib/paging";
import { openapiMetadata } from "./lib/schemas";
import { Slots } from "./lib/slots";
import { isMultipart, receiveBody, type UploadLimits } from "./rest-body";

type Source = "params" | "query" | "body";
type RouteContext = Pick<Context, "request" | "server" | "params" | "query" | "set">;

/** The admin routes of the operations that have an HTTP binding. */
export function operationRoutes(deps: AppDeps, operations: readonly Operation[], authenticate: AdminAuthenticator) {
  const cors = adminCors(deps.config);
  // The uploads this app is receiving (MEDIA_UPLOADS_IN_FLIGHT): each holds a file on disk and, while it is checked, its bytes in memory.
  const upload: UploadLimits = { maxFileBytes: deps.config.media.maxBytes, inFlight: deps.config.media.uploadsInFlight, slots: new Slots() };
  // No parser runs before the handler (`parse: "none"` on every route): the handler reads the body once the caller is known.
  const app = new Elysia();
  const paths = new Set<string>();
  for (const op of operations) {
    const typed = typedFields(op);
    for (const binding of httpBindings(op)) {
      const { params, fields } = routeFields(op, binding); // once per route, not per request
      const echo = echoedFields(op, binding);
      const input = (ctx: RouteContext, body: unknown) => readInput(op, binding, ctx, body, typed, params, fields, echo);
      // The operation's output as the route answers it.
      const answer = (ctx: RouteContext, out: unknown): unknown => {
        if (binding.noStore) ctx.set.headers["cache-control"] = "no-store";
        // A dry run answers 200 with what would be answered, `dry_run` and the changes: nothing was created or deleted.
        if (isPlainObject(out) && out.dry_run === true) {
          const { dry_run: _, changes, ...parsed } = op.output.parse(out);
          return { ...restBody(parsed, binding.data), dry_run: true, changes };
        }
        ctx.set.status = binding.status ?? 200;
        // A Response without a body: Elysia answers undefined with new Response(""), which Node's and
        // Deno's Response refuse for a 204 (a 500 there; Bun lets it through).
        if (binding.status === 204) return new Response(null, { status: 204 });
        // A file (CSV, XML): the output field's text with its own type.
        if (binding.raw) {
          const parsed = op.output.parse(out);
          const text = String(parsed[binding.raw.field] ?? "");
          const type = binding.raw.typeField === undefined ? undefined : parsed[binding.raw.typeField];
          return new Response(text, { status: binding.status ?? 200, headers: { ...(ctx.set.headers as Record<string, string>), "content-type": typeof type === "string" ? type : binding.raw.type } });
        }
        // Parsing drops any field the output schema does not declare.
        const body = restBody(op.output.parse(out), binding.data);
        const etag = nodeEtag(body.data);
        if (etag !== null) ctx.set.headers.etag = etag;
        return body;
      };
      // Authentication and the scope check come first, then the project, and only then is the body
      // read: a caller without a valid key or scope learns 401/403 (and a foreign project 404),
      // never how its input would have been judged, and costs no more than its headers.
      const handle = async (ctx: RouteContext): Promise<unknown> => {
        Object.assign(ctx.set.headers, corsHeaders(cors, ctx.request.headers.get("origin")));
        const caller = await authenticate(ctx.request, ctx.server, ctx.params?.ref, op.scopes);
        requireScopes(caller, op.scopes);
        const project = op.target === "project" ? await resolveProject(deps.db, ctx.params.ref ?? "", caller) : undefined;
        const received = await receiveBody(ctx.request, binding, upload, project?.id ?? null);
        try {
          const args = input(ctx, received.body);
          // After the project (404) and the fields (invalid_input): the body's kind is judged last.
          if (isMultipart(ctx.request.headers.get("content-type")) !== (binding.multipart === true) && takesBody(binding) && received.body !== undefined)
            throw new AppError("invalid_request", binding.multipart ? "the body must be multipart/form-data" : "the body must be JSON (multipart/form-data is for uploads)");
          if (op.nodeWrite) applyIfMatch(args, ctx.request.headers.get("if-match"));
          return answer(ctx, await runOperation(op, { deps, caller, project, now: deps.now() }, args));
        } finally {
          // An upload's temporary files go whatever the outcome: the operation has read what it keeps.
          await received.release();
        }
      };
      app.route(binding.method, binding.path, handle, { parse: "none", detail: { hide: true } });
      paths.add(binding.path);
    }
  }
  for (const path of paths) app.options(path, ({ request }) => corsPreflight(cors, request), { detail: { hide: true } });
  return app;
}

/**
 * A node answered carries its revision as a strong ETag, "r<revision>": it names the node's state
 * (fields, blocks, translations), whichever locale the answer shows.
 */
const nodeEtag = (data: unknown): string | null => (isPlainObject(data) && typeof data.id === "string" && typeof data.revision === "number" ? `"r${data.revision}"` : null);

const ETAG_RE = /^(?:W\/)?"r(\d{1,10})"$/;
/**
 * If-Match on a node write is its expected_revision: `*` asks only that the node exist (the write
 * answers 404 otherwise); a tag this API answered ("r<n>"; a weak W/ form is read alike) is the
 * revision expected. A stale one answers 409 conflict from the write path, as the issue asks (412
 * is HTTP's own answer to a failed If-Match; one code for REST and MCP keeps clients simple).
 */
function applyIfMatch(args: Record<string, unknown>, header: string | null): void {
  if (header === null || header.trim() === "*") return;
  const tags = header.split(",").map((t) => t.trim());
  const revisions = new Set(tags.map((t) => ETAG_RE.exec(t)?.[1]));
  if (revisions.has(undefined))
    throw new AppError("invalid_request", 'If-Match must be * or the ETag of the node as read ("r<revision>")', {
      field: "If-Match",
      errors: [{ in: "header", field: "If-Match", message: "not an ETag this API answers" }],
    });
  if (revisions.size > 1) throw new AppError("invalid_request", "If-Match names several revisions: send the one you last read", { field: "If-Match" });
  const revision = Number([...revisions][0]);
  if (args.expected_revision !== undefined && args.expected_revision !== revision)
    throw new AppError("invalid_request", `If-Match ("r${revision}") and expected_revision (${String(args.expected_revision)}) disagree: send one`, { field: "If-Match" });
  args.expected_revision = revision;
}

const restBody = (out: Record<string, unknown>, data: string | undefined): Record<string, unknown> => {
  if (data === undefined) return { data: out };
  const { [data]: main, ...rest } = out;
  return { data: main, ...rest };
};

/** The path parameters besides the project's `ref`, each with the input field it fills. */
const pathParams = (binding: HttpBinding): Array<[param: string, field: string]> =>
  [...binding.path.matchAll(/:(\w+)/g)].flatMap(([, p]) => (p === undefined || p === "ref" ? [] : [[p, binding.params?.[p] ?? p]]));
/** The path parameters and the operation's other input fields. */
function routeFields(op: Operation, binding: HttpBinding): { params: Array<[param: string, field: string]>; fields: string[] } {
  const params = pathParams(binding);
  const fromPath = new Set(params.map(([, field]) => field));
  return { params, fields: Object.keys(op.input.shape).filter((k) => !fromPath.has(k)) };
}
/**
 * A PUT replaces the representation its answer shows, so that representation may be sent back as
 * read: its read-only fields (shown, not taken: id, timestamps) are accepted there and not written.
 * Anywhere else they are undeclared fields.
 */
function echoedFields(op: Operation, binding: HttpBinding): ReadonlySet<string> {
  if (binding.method !== "PUT" || binding.body !== undefined) return new Set();
  const shown = binding.data === undefined ? op.output : op.output.shape[binding.data];
  if (!(shown instanceof z.ZodObject)) return new Set();
  return new Set(Object.keys(shown.shape).filter((k) => !Object.hasOwn(op.input.shape, k)));
}
const takesBody = (binding: HttpBinding): boolean => binding.method === "POST" || binding.method === "PUT" || binding.method === "PATCH";

/** The operation's input from the path, the query and the body, validated by its schema. */
function readInput(
  op: Operation,
  binding: HttpBinding,
  ctx: RouteContext,
  body: unknown,
  typed: ReadonlyMap<string, string>,
  params: ReadonlyArray<[param: string, field: string]>,
  fields: readonly string[],
  echo: ReadonlySet<string>,
): Record<string, unknown> {
  const input: Record<string, unknown> = {};
  const source = new Map<string, Source>();
  const take = (field: string, value: unknown, from: Source): void => {
    input[field] = value;
    source.set(field, from);
  };
  // Every field sent that the route does not read is an error (invalid_input), never dropped.
  const unread = new Set<string>();
  const notRead = (sent: unknown, read: (k: string) => boolean): void => {
    if (isPlainObject(sent)) for (const k of Object.keys(sent)) if (sent[k] !== undefined && !read(k)) unread.add(k);
  };
  const fromQuery = new Set(binding.query ?? []);
  const special = binding.queryInput;
  const fieldSet = new Set(fields.filter((f) => !fromQuery.has(f)));
  if (binding.body !== undefined) take(binding.body, body, "body");
  else if (takesBody(binding)) {
    // No body at all is an empty one where every field it could carry is optional (publish_node's locale, say).
    const bodyFields = [...fieldSet].filter((f) => body !== undefined || (f !== "expected_revision" && !op.input.shape[f]?.isOptional()));
    if (bodyFields.length > 0 && !isPlainObject(body)) throw invalid([{ in: "body", field: null, message: "the body must be a JSON object" }]);
    for (const f of fieldSet) if (isPlainObject(body) && Object.hasOwn(body, f)) take(f, body[f], "body");
    // A field the path gives may be repeated in the body when it says the same (a representation sent back as read).
    const agrees = (k: string): boolean => params.some(([param, field]) => field === k && isPlainObject(body) && body[k] === ctx.params[param]);
    notRead(body, (k) => fieldSet.has(k) || echo.has(k) || agrees(k));
  } else {
    for (const f of fields) if (ctx.query[f] !== undefined && f !== special?.field) take(f, queryValue(f, typed.get(f), ctx.query[f]), "query");
    if (special) {
      const sent = new URL(ctx.request.url).searchParams;
      if ([...sent.keys()].some((k) => k.startsWith(special.prefix))) take(special.field, special.read(sent), "query");
    }
    if (binding.bodyOrQuery && isPlainObject(body)) for (const f of fields) if (input[f] === undefined && Object.hasOwn(body, f)) take(f, body[f], "body");
    notRead(body, (k) => binding.bodyOrQuery === true && fieldSet.has(k));
  }
  for (const f of fromQuery) if (ctx.query[f] !== undefined) take(f, queryValue(f, typed.get(f), ctx.query[f]), "query");
  // A node write's expected_revision may come in the query on every route (one whose body is an array, say).
  const expected = op.nodeWrite ? ctx.query.expected_revision : undefined;
  if (expected !== undefined) {
    if (input.expected_revision !== undefined && source.get("expected_revision") !== "query")
      throw invalid([{ in: "query", field: "expected_revision", message: "given in both the body and the query" }]);
    take("expected_revision", queryValue("expected_revision", "integer", expected), "query");
  }
  // The query is read only where the route has no body (or names it); elsewhere any query field is unread.
  notRead(
    ctx.query,
    (k) =>
      (!takesBody(binding) && fieldSet.has(k) && k !== special?.field) ||
      fromQuery.has(k) ||
      (op.nodeWrite === true && k === "expected_revision") ||
      (special !== undefined && k.startsWith(special.prefix)),
  );
  // Path parameters last: a body field can never stand in for the object the URL names (numbers, a revision say, read as query numbers are).
  for (const [param, field] of params) take(field, queryValue(field, typed.get(field), ctx.params[param]), "params");
  const parsed = op.input.safeParse(input);
  const nested = parsed.success ? strippedFields(input, parsed.data).map((f) => (binding.body !== undefined && f.startsWith(`${binding.body}.`) ? f.slice(binding.body.length + 1) : f)) : [];
  if (unread.size > 0 || nested.length > 0) {
    const hints = Object.fromEntries(params.flatMap(([param, field]) => (unread.has(field) ? [[field, `given by the URL path (:${param}); the body may only repeat it`]] : [])));
    throw undeclaredFieldsError(op, [...unread, ...nested], hints);
  }
  if (parsed.success) return parsed.data;
  throw invalid(
    parsed.error.issues.slice(0, 10).map((issue) => {
      const [head, ...tail] = issue.path.map(String);
      const from = head === undefined ? "body" : (source.get(head) ?? "body");
      // A body that is one input field (an array, say) is reported from the body's root, as it is sent.
      const path = head === binding.body ? tail : issue.path.map(String);
      return { in: from, field: path.join(".") || null, message: issue.message };
    }),
  );
}

const invalid = (errors: Array<{ in: Source; field: string | null; message: string }>): AppError =>
  new AppError("invalid_request", "request validation failed", { errors, field: errors[0]?.field ?? null });

/** Query strings are text: page and per_page are read by the one paging bound, other numbers and booleans when spelled as such. */
function queryValue(field: string, type: string | undefined, value: unknown): unknown {
  if (typeof value !== "string") return value;
  if (field === "page" || field === "per_page") return readPaging({ [field]: value }, { defaultPerPage: 1 })[field === "page" ? "page" : "perPage"];
  if ((type === "integer" || type === "number") && /^-?\d{1,15}$/.test(value)) return Number(value);
  if (type === "boolean" && (value === "true" || value === "false")) return value === "true";
  return value;
}

/** The JSON type of each input field, for reading query strings. */
function typedFields(op: Operation): ReadonlyMap<string, string> {
  const props = jsonSchema(op.input, "input").properties ?? {};
  return new Map(Object.entries(props).flatMap(([k, v]) => (typeof v.type === "string" ? [[k, v.type] as [string, string]] : [])));
}

const ERROR_DESCRIPTIONS: Record<number, string> = {
  400: "Error 400: invalid_request (a field fails its schema; details.errors name each one) or invalid_input (fields the operation does not take; details.fields names each one)",
};
const REF_PARAM = { name: "ref", in: "path", required: true, schema: { type: "string", maxLength: 64, description: "project id or slug" } };

type JsonSchema = Record<string, unknown> & { properties?: Record<string, JsonSchema>; required?: string[] };
// The document is OpenAPI 3.0 (nullable: true rather than a null type).
const jsonSchema = (schema: z.ZodType, io: "input" | "output"): JsonSchema => {
  const { $schema: _, ...rest } = z.toJSONSchema(schema, { io, unrepresentable: "any", target: "openapi-3.0", metadata: openapiMetadata }) as JsonSchema;
  return rest;
};

/** The OpenAPI paths of the operations' routes, keyed as the document writes them (`{ref}`). */
export function operationPaths(operations: readonly Operation[]): Record<string, Record<string, unknown>> {
  const paths: Record<string, Record<string, unknown>> = {};
  for (const op of operations) {
    for (const binding of httpBindings(op)) {
      const input = jsonSchema(op.input, "input");
      const props = input.properties ?? {};
      const required = new Set(input.required ?? []);
      const parameters: unknown[] = binding.path.includes(":ref") ? [REF_PARAM] : [];
      const { params, fields } = routeFields(op, binding);
      for (const [name, field] of params) parameters.push({ name, in: "path", required: true, schema: props[field] ?? { type: "string" } });
      const inQuery = binding.query ?? [];
      const rest = Object.fromEntries(Object.entries(props).filter(([k]) => fields.includes(k) && !inQuery.includes(k)));
      for (const name of inQuery) if (props[name]) parameters.push({ name, in: "query", required: required.has(name), schema: props[name] });
      const doc: Record<string, unknown> = { ...adminDoc(binding.tag, binding.summary ?? op.title, binding.description), operationId: `${binding.method.toLowerCase()}_${op.name}` };
      if (binding.multipart)
        doc.requestBody = multipartBody(
          rest,
          [...required].filter((k) => k in rest),
        );
      else if (binding.body !== undefined) doc.requestBody = jsonBody(props[binding.body] ?? {});
      else if (takesBody(binding) && Object.keys(rest).length > 0) doc.requestBody = jsonBody({ type: "object", properties: rest, required: [...required].filter((k) => k in rest) });
      else if (!takesBody(binding))
        for (const [name, schema] of Object.entries(rest)) if (name !== binding.queryInput?.field) parameters.push({ name, in: "query", required: required.has(name), schema });
      if (op.nodeWrite) {
        parameters.push({
          name: "If-Match",
          in: "header",
          required: false,
          schema: { type: "string" },
          description: 'the node\'s ETag as read ("r<revision>"), or *; a stale one answers 409 conflict and nothing is written',
        });
        if (binding.body !== undefined) parameters.push({ name: "expected_revision", in: "query", required: false, schema: props.expected_revision ?? { type: "integer" } });
      }
      if (parameters.length > 0) doc.parameters = parameters;
      const status = binding.status ?? 200;
      const responses: Record<string, unknown> = {};
      if (status === 204) responses["204"] = { description: "Done; no body" };
      else if (binding.raw) responses[String(status)] = { description: op.title, content: { [binding.raw.type]: { schema: { type: "string" } } } };
      else responses[String(status)] = { description: op.title, content: { "application/json": { schema: restSchema(jsonSchema(op.output, "output"), binding.data) } } };
      for (const code of new Set([400, 401, 403, 404, ...(binding.errors ?? []), ...(op.nodeWrite ? [409] : [])]))
        responses[String(code)] = { description: ERROR_DESCRIPTIONS[code] ?? `Error ${code}`, content: { "application/json": { schema: ErrorBody } } };
      doc.responses = responses;
      const key = binding.path.replace(/:(\w+)/g, "{$1}");
      paths[key] = { ...paths[key], [binding.method.toLowerCase()]: doc };
    }
  }
  return paths;
}

/** A multipart body's schema: Blob fields (anything zod cannot render) are files. */
const multipartBody = (props: Record<string, JsonSchema>, required: string[]) => {
  const fields = Object.fromEntries(Object.entries(props).map(([k, v]) => [k, v.type === undefined ? { ...v, type: "string", format: "binary" } : v]));
  return { required: true, content: { "multipart/form-data": { schema: { type: "object", properties: fields, required } } } };
};
const jsonBody = (schema: unknown) => ({ required: true, content: { "application/json": { schema } } });

function restSchema(out: JsonSchema, data: string | undefined): JsonSchema {
  if (data === undefined) return { type: "object", properties: { data: out }, required: ["data"] };
  const { [data]: main, ...rest } = out.properties ?? {};
  return { type: "object", properties: { data: main ?? {}, ...rest }, required: ["data", ...(out.required ?? []).filter((k) => k !== data)] };
}
