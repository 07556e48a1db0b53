// The MCP surface beyond tools, through the SDK's own Client (2025-11-25): prompts, completions,
// resource templates by id and path with a locale, logging, progress of a long tool call,
// truthful capabilities, icons and strict-client-portable tool schemas.
import { afterAll, describe, expect, test } from "bun:test";
import { and, eq } from "drizzle-orm";
import { translations } from "../db/schema";
import { fakeTranslation, startFakeVendors } from "./fake-vendors";
import { seedNode, seedProject } from "./helpers";
import { call, mcpHarness, TOOL_NAMES } from "./mcp-harness";

const vendors = await startFakeVendors();

describe("MCP prompts, completions, templates, logging and progress (SDK client, 2025-11-25)", async () => {
  const m = await mcpHarness({ AI_ALLOW_PRIVATE_URLS: "true", AI_TIMEOUT_MS: "2000" });
  afterAll(async () => {
    m.stop();
    await vendors.stop();
  });
  const p = await seedProject(m.h, { locales: ["en", "fr", "de"] });
  const other = await seedProject(m.h);
  const blog = await seedNode(m.h, p.slug, { slug: "blog", title: "Blog", type: "collection" }, true);
  const hello = await seedNode(m.h, p.slug, {
    slug: "hello",
    title: "Hello",
    parent_id: blog.id,
    seo: { description: "Say hello" },
    blocks: [{ type: "text", data: { text: "Hello there, reader" } }],
  });
  const about = await seedNode(m.h, p.slug, { slug: "about", title: "About us" }, true);
  await seedNode(m.h, other.slug, { slug: "blog-secret", title: "Not yours" });
  const { token } = await m.token(p.slug);
  const client = await m.connect(token);

  test("capabilities say what is served: tools, resources, prompts, completions, logging, tasks (start_translation_job: tests/translation-job-tasks.test.ts); no listChanged, no subscribe; icons", async () => {
    expect(client.getServerCapabilities()).toEqual({ tools: {}, resources: {}, prompts: {}, completions: {}, logging: {}, tasks: { list: {}, cancel: {}, requests: { tools: { call: {} } } } });
    expect(client.getServerVersion()?.icons?.[0]).toMatchObject({ mimeType: "image/svg+xml", sizes: ["any"] });
  });

  test("tool schemas are portable: no type arrays, no empty schemas; every tool has an icon; calls still validate", async () => {
    const { tools } = await client.listTools();
    expect(tools.length).toBe(TOOL_NAMES.length);
    const problems: string[] = [];
    const walk = (s: unknown, path: string): void => {
      if (Array.isArray(s)) {
        for (const [i, v] of s.entries()) walk(v, `${path}[${i}]`);
        return;
      }
      if (s === null || typeof s !== "object") return;
      const o = s as Record<string, unknown>;
      if (Array.isArray(o.type)) problems.push(`${path}: type array`);
      for (const k of ["items", "additionalProperties"]) if (o[k] !== undefined && typeof o[k] === "object" && Object.keys(o[k] as object).length === 0) problems.push(`${path}.${k}: empty schema`);
      if (o.properties && typeof o.properties === "object") for (const [n, v] of Object.entries(o.properties)) if (Object.keys(v as object).length === 0) problems.push(`${path}.${n}: empty schema`);
      for (const [k, v] of Object.entries(o)) walk(v, `${path}.${k}`);
    };
    for (const t of tools) {
      walk(t.inputSchema, `${t.name}.in`);
      walk(t.outputSchema, `${t.name}.out`);
      expect(t.icons?.[0]?.src).toStartWith("data:image/svg+xml;base64,");
    }
    expect(problems).toEqual([]);
    const node = tools.find((t) => t.name === "get_node")!.outputSchema as any;
    expect(node.properties.node.properties.parent_id).toEqual({ anyOf: [{ type: "string" }, { type: "null" }] });
    // The SDK client validates structuredContent against these schemas: a null parent_id passes.
    const got = await call(client, "get_node", { path: "about" });
    expect(got.node).toMatchObject({ id: about.id, parent_id: null });
  });

  test("prompts/list: the five prompts with typed arguments", async () => {
    const { prompts } = await client.listPrompts();
    expect(prompts.map((x) => x.name)).toEqual(["translate_page", "write_seo", "review_before_publish", "summarise_recent_changes", "model_content"]);
    expect(prompts[0]!.arguments).toEqual([
      { name: "path", description: expect.any(String), required: true },
      { name: "locale", description: expect.any(String), required: true },
    ]);
    expect(prompts[3]!.arguments?.every((a) => a.required === false)).toBe(true);
  });

  test("prompts/get embeds the page and names the tools; bad arguments are -32602", async () => {
    const r = await client.getPrompt({ name: "translate_page", arguments: { path: "blog/hello", locale: "FR" } });
    const text = (r.messages[0]!.content as { text: string }).text;
    expect(text).toContain(`translate_node with node_id ${hello.id} and locale fr`);
    const embedded = r.messages[1]!.content as { type: string; resource: { uri: string; text: string } };
    expect(embedded.type).toBe("resource");
    expect(embedded.resource.uri).toBe(`cms://${p.slug}/nodes/${hello.id}`);
    expect(JSON.parse(embedded.resource.text)).toMatchObject({ id: hello.id, title: "Hello", blocks: [{ data: { text: "Hello there, reader" } }] });

    const seo = await client.getPrompt({ name: "write_seo", arguments: { path: "/about/" } });
    expect((seo.messages[0]!.content as { text: string }).text).toContain(`update_node (id ${about.id}`);
    const review = await client.getPrompt({ name: "review_before_publish", arguments: { path: "blog/hello" } });
    expect((review.messages[0]!.content as { text: string }).text).toContain("fr, de");

    const bad: Array<{ name: string; arguments: Record<string, string> }> = [
      { name: "translate_page", arguments: { path: "blog/hello", locale: "en" } }, // the default locale
      { name: "translate_page", arguments: { path: "blog/hello", locale: "xx" } },
      { name: "translate_page", arguments: { path: "blog/hello" } },
      { name: "write_seo", arguments: { path: "blog-secret" } }, // another project's page
      { name: "summarise_recent_changes", arguments: { days: "0" } },
      { name: "no_such_prompt", arguments: {} },
      { name: "write_seo", arguments: { path: "about\u0000" } }, // NUL: nothing stored can hold it
      { name: "summarise_recent_changes", arguments: { collection: "blog\u0000" } },
    ];
    for (const b of bad) {
      const err = await client.getPrompt(b).catch((e: any) => e);
      expect(err.code).toBe(-32602);
      expect(String(err.message)).not.toContain("Not yours");
    }
  });

  test("summarise_recent_changes lists the nodes changed in the window, optionally within a collection", async () => {
    const all = await client.getPrompt({ name: "summarise_recent_changes", arguments: {} });
    const text = (all.messages[0]!.content as { text: string }).text;
    for (const path of ["blog", "blog/hello", "about"]) expect(text).toContain(` ${path} "`);
    expect(text).not.toContain("blog-secret");
    const inBlog = await client.getPrompt({ name: "summarise_recent_changes", arguments: { days: "30", collection: "blog" } });
    const t2 = (inBlog.messages[0]!.content as { text: string }).text;
    expect(t2).toContain(" blog/hello ");
    expect(t2).not.toContain(" about ");
  });

  test("completion/complete: paths by prefix, locales, collections, template variables; only this project's", async () => {
    const complete = (ref: any, name: string, value: string) => client.complete({ ref, argument: { name, value } }).then((r) => r.completion);
    const prompt = (name: string) => ({ type: "ref/prompt", name });
    expect(await complete(prompt("translate_page"), "path", "bl")).toEqual({ values: ["blog", "blog/hello"], total: 2, hasMore: false });
    expect((await complete(prompt("write_seo"), "path", "")).values).toEqual(["about", "blog", "blog/hello"]);
    expect((await complete(prompt("translate_page"), "locale", "f")).values).toEqual(["fr"]);
    expect((await complete(prompt("summarise_recent_changes"), "collection", "")).values).toEqual(["blog"]);
    expect((await complete(prompt("summarise_recent_changes"), "days", "3")).values).toEqual(["30", "365"]);
    // LIKE metacharacters are literal.
    expect((await complete(prompt("write_seo"), "path", "%")).values).toEqual([]);
    // NUL or a lone surrogate starts nothing stored: no values, not an internal error.
    expect(await complete(prompt("write_seo"), "path", "bl\u0000")).toEqual({ values: [], total: 0, hasMore: false });
    expect(await complete(prompt("summarise_recent_changes"), "collection", "\ud800")).toEqual({ values: [], total: 0, hasMore: false });

    const { resourceTemplates } = await client.listResourceTemplates();
    const [byId, byPath] = resourceTemplates.map((t) => ({ type: "ref/resource", uri: t.uriTemplate }));
    expect((await complete(byPath, "path", "blog/")).values).toEqual(["blog/hello"]);
    expect((await complete(byId, "id", hello.id.slice(0, 34))).values).toEqual([hello.id]);
    expect((await complete(byId, "locale", "")).values).toEqual(["en", "fr", "de"]);
    // References this server does not have complete to nothing.
    expect(await complete(prompt("test_prompt_with_arguments"), "arg1", "x")).toEqual({ values: [], total: 0, hasMore: false });
    expect((await complete({ type: "ref/resource", uri: `cms://${other.slug}/paths/{+path}{?locale}` }, "path", "")).values).toEqual([]);
  });

  test("resource templates: a node by path and by id, in a locale (translation applied), unknown ones -32002", async () => {
    await m.h.request("PUT", `/admin/p/${p.slug}/nodes/${hello.id}/translations/fr`, { body: { meta: { title: "Bonjour" }, blocks: {} } });
    const byPath = await client.readResource({ uri: `cms://${p.slug}/paths/blog/hello?locale=fr` });
    expect(JSON.parse((byPath.contents[0] as { text: string }).text)).toMatchObject({ id: hello.id, title: "Bonjour", locale: "fr", translated: true });
    const byId = await client.readResource({ uri: `cms://${p.slug}/nodes/${hello.id}?locale=de` });
    expect(JSON.parse((byId.contents[0] as { text: string }).text)).toMatchObject({ id: hello.id, title: "Hello", locale: "de", translated: false });
    const plain = await client.readResource({ uri: `cms://${p.slug}/paths/about` });
    expect(JSON.parse((plain.contents[0] as { text: string }).text)).toMatchObject({ id: about.id, blocks: [] });
    for (const uri of [
      `cms://${p.slug}/paths/blog/hello?locale=xx`,
      `cms://${p.slug}/paths/nowhere`,
      `cms://${other.slug}/paths/blog-secret`,
      `cms://${p.slug}/paths/about?x=1`,
      `cms://${p.slug}/paths/%00`,
      `cms://${p.slug}/paths/about?locale=%00`,
    ]) {
      const err = await client.readResource({ uri }).catch((e: any) => e);
      expect(err.code).toBe(-32002);
    }
  });

  test("a token without content:read gets no page content through prompts or completions", async () => {
    const { token: aiOnly } = await m.token(p.slug, { name: "ai only", scopes: ["ai:read"] });
    const narrow = await m.connect(aiOnly);
    const prompt = await narrow.getPrompt({ name: "write_seo", arguments: { path: "about" } }).catch((e: any) => e);
    expect(prompt.code).toBe(-32602);
    expect(String(prompt.message)).toContain("content:read");
    const completion = await narrow.complete({ ref: { type: "ref/prompt", name: "write_seo" }, argument: { name: "path", value: "" } }).catch((e: any) => e);
    expect(completion.code).toBe(-32602);
    expect(String(completion.message)).not.toContain("about");
    // Listing prompts reads nothing of the project.
    expect((await narrow.listPrompts()).prompts).toHaveLength(5);
  });

  test("logging/setLevel answers {}", async () => {
    expect(await client.setLoggingLevel("info")).toEqual({});
  });

  test("translate_node with a progressToken streams progress and log messages while it runs, then the result", async () => {
    const res = await m.h.request("POST", `/admin/p/${p.slug}/ai/providers`, {
      body: { name: "vendor", kind: "openai", model: "gpt-test", base_url: vendors.base("ok"), api_key: `sk-${crypto.randomUUID()}`, is_default: true },
    });
    expect(res.status).toBe(201);
    const logs: string[] = [];
    client.setNotificationHandler((await import("@modelcontextprotocol/sdk/types.js")).LoggingMessageNotificationSchema, async (n) => {
      logs.push(String(n.params.data));
    });
    const progress: Array<{ progress: number; total?: number }> = [];
    const r = await client.callTool({ name: "translate_node", arguments: { node_id: hello.id, locale: "de" } }, undefined, { onprogress: (p) => void progress.push(p) });
    expect(r.isError ?? false).toBe(false);
    // title, seo.description and the block's text: three fields, three steps.
    expect(progress.map((x) => [x.progress, x.total])).toEqual([
      [1, 3],
      [2, 3],
      [3, 3],
    ]);
    expect(logs).toEqual([expect.stringContaining("title into de (1 of 3)"), expect.stringContaining("(2 of 3)"), expect.stringContaining("(3 of 3)")]);
    const [row] = await m.h.deps.db
      .select()
      .from(translations)
      .where(and(eq(translations.nodeId, hello.id), eq(translations.locale, "de")));
    expect(row!.meta).toMatchObject({ title: fakeTranslation("Hello") });
    expect(row!.status).toBe("draft");
    // Without a progressToken the same call is one JSON answer, no notifications.
    logs.length = 0;
    const plain = await m.post(
      // force: the source has not changed since, so without it nothing would be sent again.
      { jsonrpc: "2.0", id: 5, method: "tools/call", params: { name: "translate_node", arguments: { node_id: hello.id, locale: "de", force: true } } },
      { token, headers: { "mcp-protocol-version": "2025-11-25" } },
    );
    expect(plain.headers.get("content-type")).toContain("application/json");
    expect(plain.json.result.structuredContent.translated_fields).toHaveLength(3);

    // 2026-07-28: the same call with a progressToken is a stream of notifications/progress (no log messages: logging is not adopted there), then the result.
    const meta = { "io.modelcontextprotocol/protocolVersion": "2026-07-28", "io.modelcontextprotocol/clientCapabilities": {}, progressToken: "t-1" };
    const modern = await m.post(
      { jsonrpc: "2.0", id: "m-1", method: "tools/call", params: { name: "translate_node", arguments: { node_id: hello.id, locale: "de", force: true }, _meta: meta } },
      { token, headers: { "mcp-protocol-version": "2026-07-28", "mcp-method": "tools/call", "mcp-name": "translate_node" } },
    );
    expect(modern.status).toBe(200);
    expect(modern.headers.get("content-type")).toBe("text/event-stream");
    const events = modern.text
      .split("\n")
      .filter((l) => l.startsWith("data: "))
      .map((l) => JSON.parse(l.slice(6)));
    expect(events.slice(0, 3).map((e) => [e.method, e.params.progressToken, e.params.progress, e.params.total])).toEqual([
      ["notifications/progress", "t-1", 1, 3],
      ["notifications/progress", "t-1", 2, 3],
      ["notifications/progress", "t-1", 3, 3],
    ]);
    expect(events).toHaveLength(4);
    expect(events[3]).toMatchObject({ jsonrpc: "2.0", id: "m-1", result: { resultType: "complete", structuredContent: { translated_fields: expect.any(Array) } } });
  });
});
