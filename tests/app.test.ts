import { describe, expect, test } from "bun:test";
import { harness, seedProject, testDb, waitFor } from "./helpers";

describe("app: errors, limits, ops endpoints, logs, swagger", async () => {
  const h = await harness();

  test("healthz and readyz", async () => {
    expect((await h.request("GET", "/healthz", { key: null })).json).toEqual({ status: "ok" });
    expect((await h.request("GET", "/readyz", { key: null })).status).toBe(200);
    const handle = await testDb();
    const down = await harness({}, { dbHandle: { ...handle, ping: () => Promise.reject(new Error("down")) } });
    const r = await down.request("GET", "/readyz", { key: null });
    expect(r.status).toBe(503);
    expect(r.json.error.code).toBe("service_unavailable");
  });

  test("unknown route is 404 not_found with the error body and a request id", async () => {
    const r = await h.request("GET", "/no/such/route", { headers: { "x-request-id": "req-123" } });
    expect(r.status).toBe(404);
    expect(r.json).toEqual({ error: { code: "not_found", message: "no such route" } });
    expect(r.headers.get("x-request-id")).toBe("req-123");
    const generated = await h.request("GET", "/healthz");
    expect(generated.headers.get("x-request-id")).toMatch(/^[0-9a-f-]{36}$/);
    const hostile = await h.request("GET", "/healthz", { headers: { "x-request-id": "<script>" } });
    expect(hostile.headers.get("x-request-id")).not.toBe("<script>");
  });

  test("bodies over 1 MiB are 413, declared or streamed, and write nothing", async () => {
    const big = JSON.stringify({ slug: "big", name: "x".repeat(1024 * 1024 + 10) });
    const declared = await h.request("POST", "/admin/projects", { raw: big, headers: { "content-type": "application/json" } });
    expect(declared.status).toBe(413);
    expect(declared.json.error.code).toBe("payload_too_large");
    const enc = new TextEncoder().encode(big);
    const stream = new ReadableStream({
      start(c) {
        for (let i = 0; i < enc.length; i += 65536) c.enqueue(enc.slice(i, i + 65536));
        c.close();
      },
    });
    const res = await h.app.handle(
      new Request("http://localhost/admin/projects", {
        method: "POST",
        headers: { "content-type": "application/json", authorization: `Bearer ${h.rootKey}` },
        body: stream,
        // @ts-expect-error duplex is needed for streamed request bodies
        duplex: "half",
      }),
    );
    expect(res.status).toBe(413);
    expect((await h.request("GET", "/admin/projects/big")).status).toBe(404);
  });

  test("malformed and too-deep JSON are 400 invalid_request", async () => {
    const bad = await h.request("POST", "/admin/projects", { raw: "{not json", headers: { "content-type": "application/json" } });
    expect(bad.status).toBe(400);
    expect(bad.json.error.code).toBe("invalid_request");
    const deep = await h.request("POST", "/admin/projects", { raw: "[".repeat(5000) + "]".repeat(5000), headers: { "content-type": "application/json" } });
    expect(deep.status).toBe(400);
    const wrongType = await h.request("POST", "/admin/projects", { body: [1, 2] });
    expect(wrongType.status).toBe(400);
    expect(wrongType.json.error.details.errors.length).toBeGreaterThan(0);
  });

  test("an unknown exception is 500 internal without its text", async () => {
    const handle = await testDb();
    const failing = new Proxy(handle.db, {
      get(target, prop, recv) {
        if (prop === "select")
          return () => {
            throw new Error("SECRET-INTERNAL-DETAIL at /srv/app.ts:12");
          };
        return Reflect.get(target, prop, recv);
      },
    });
    const broken = await harness({}, { db: failing });
    const r = await broken.request("GET", "/admin/projects");
    expect(r.status).toBe(500);
    expect(r.json).toEqual({ error: { code: "internal", message: "internal server error" } });
    expect(r.text).not.toContain("SECRET");
  });

  test("request logs are JSON lines with a request id and never the bearer", async () => {
    const p = await seedProject(h);
    await h.request("GET", `/admin/p/${p.slug}/nodes?path_prefix=secret_query`, { headers: { "x-request-id": "log-check" } });
    // The request log is written after the response.
    const line = await waitFor(() => h.logs.map((l) => JSON.parse(l)).find((l) => l.request_id === "log-check"), { what: "the request's log line" });
    expect(line).toMatchObject({ level: "info", msg: "request", method: "GET", path: `/admin/p/${p.slug}/nodes`, status: 200 });
    expect(h.logs.join("\n")).not.toContain(h.rootKey);
    expect(h.logs.join("\n")).not.toContain("secret_query");
  });

  test("swagger documents every admin route with tag, summary, schemas and bearer security", async () => {
    const r = await h.request("GET", "/swagger/json", { key: null });
    expect(r.status).toBe(200);
    const doc = r.json;
    expect(doc.components.securitySchemes.bearerAuth).toMatchObject({ type: "http", scheme: "bearer" });
    const admin = Object.entries(doc.paths as Record<string, Record<string, any>>).filter(([path]) => path.startsWith("/admin"));
    expect(admin.length).toBeGreaterThan(10);
    for (const [path, ops] of admin) {
      for (const [method, op] of Object.entries(ops)) {
        expect({ path, method, tags: op.tags?.length > 0, summary: !!op.summary, security: !!op.security }).toEqual({ path, method, tags: true, summary: true, security: true });
        const bodiless = ["publish", "archive", "restore", "redeliver", "/webhooks/{id}/test", "/approvals/", "/cancel"].some((p) => path.includes(p));
        if (["post", "put", "patch"].includes(method) && !bodiless) {
          expect({ path, method, body: !!op.requestBody }).toEqual({ path, method, body: true });
        }
        // Response schemas: the success answer (a JSON schema with `data`, or 204 without a body) and the errors.
        const ok = Object.keys(op.responses ?? {}).find((code) => code.startsWith("2"));
        // A route answering a file (the model's types.ts, schema.json) documents that file's media type instead.
        const okContent: Record<string, any> = op.responses?.[ok ?? ""]?.content ?? {};
        const file = !okContent["application/json"] && Object.values(okContent).some((c) => c?.schema);
        const okSchema = ok === "204" ? "none" : okContent["application/json"]?.schema?.properties?.data ? "data" : file ? "file" : "missing";
        const errors = ["400", "401", "403", "404"].filter((code) => !op.responses?.[code]?.content?.["application/json"]?.schema);
        expect({ path, method, ok: ok !== undefined, okSchema: okSchema !== "missing", errorsWithoutSchema: errors }).toEqual({ path, method, ok: true, okSchema: true, errorsWithoutSchema: [] });
      }
    }
    expect((await h.request("GET", "/swagger", { key: null })).text).toContain("<html");
  });
});
