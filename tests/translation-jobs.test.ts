// Bulk translation jobs (issue 41): a subtree or a project into several locales, estimated first
// (within 15 % of the tokens a loopback vendor reports: tests/fake-vendors.ts counts them with the
// o200k tokenizer), carried out by the worker with usage recorded per provider and month, cancelled
// with no new vendor call, over REST and MCP (the SDK's Client); the monthly cap stops new calls with
// 429 quota_exceeded. The kill and resume of a 1,000-unit job in real processes is in
// tests/translation-jobs-processes.test.ts.
import { afterAll, describe, expect, test } from "bun:test";
import { and, eq } from "drizzle-orm";
import { translationJobUnits, translations } from "../db/schema";
import { startTranslationWorker } from "../src/translations/jobs-worker";
import { startFakeVendors, fakeTranslation as T } from "./fake-vendors";
import { seedNode, seedProject, waitFor } from "./helpers";
import { call, mcpHarness } from "./mcp-harness";

const vendors = await startFakeVendors();

describe("translation jobs", async () => {
  const m = await mcpHarness({ AI_ALLOW_PRIVATE_URLS: "true", AI_TIMEOUT_MS: "5000" });
  const { h } = m;
  const db = h.deps.db;
  const worker = startTranslationWorker(h.deps, { intervalMs: 50 });
  afterAll(async () => {
    await worker.stop();
    m.stop();
    await vendors.stop();
  });

  async function site(scenario: "ok" | "slow-ok" = "ok", pages = 12) {
    const p = await seedProject(h, { locales: ["en", "de", "fr"] });
    const provider = await h.request("POST", `/admin/p/${p.id}/ai/providers`, {
      body: {
        name: scenario,
        kind: "openai",
        model: "gpt-test",
        base_url: vendors.base(scenario),
        api_key: "sk-test-1234567890",
        is_default: true,
        capabilities: { input_price_per_mtok: 2.5, output_price_per_mtok: 10 },
      },
    });
    if (provider.status !== 201) throw new Error(provider.text);
    const root = await seedNode(h, p.slug, { slug: "docs", title: "Documentation" });
    for (let i = 0; i < pages; i++) {
      await seedNode(h, p.slug, { slug: `page-${i}`, parent_id: root.id, title: `Page ${i}: how to set up the thing`, seo: { description: `Everything about step ${i}, in plain words.` } });
    }
    const outside = await seedNode(h, p.slug, { slug: "elsewhere", title: "Not in the subtree" });
    return { p, root, outside };
  }
  const job = async (slug: string, id: string) => (await h.request("GET", `/admin/p/${slug}/translation-jobs/${id}`)).json.data;

  test("a dry run estimates within 15 % of what the vendor then reports; the job translates the subtree into two locales, usage recorded per provider and month", async () => {
    const { p, root, outside } = await site("ok", 12);
    const dry = await h.request("POST", `/admin/p/${p.slug}/translation-jobs`, { body: { root_node_id: root.id, locales: ["de", "fr"], dry_run: true } });
    expect(dry.status).toBe(201);
    const units = (1 + 12 * 2) * 2; // the root's title; each page's title and description; two locales
    expect(dry.json.data).toMatchObject({ id: null, status: "dry_run", progress: { done: 0, total: units }, estimate: { calls: units } });
    const estimate = dry.json.data.estimate;
    expect((await h.request("GET", `/admin/p/${p.slug}/translation-jobs`)).json.data).toEqual([]); // a dry run makes nothing

    const from = vendors.received("ok").length;
    const started = await h.request("POST", `/admin/p/${p.slug}/translation-jobs`, { body: { root_node_id: root.id, locales: ["de", "fr"] } });
    expect(started.status).toBe(201);
    const id = started.json.data.id;
    expect(["queued", "running"]).toContain(started.json.data.status); // the worker may have taken it already
    const done = await waitFor(async () => ((await job(p.slug, id)).status === "done" ? await job(p.slug, id) : null), { timeout: 30_000, what: "the job to finish" });
    expect(done.progress).toEqual({ done: units, total: units });
    expect(vendors.received("ok").length - from).toBe(units);
    expect(done.usage.calls).toBe(units);
    // The estimate against the vendor's own count.
    for (const k of ["input_tokens", "output_tokens"] as const) {
      const ratio = estimate[k] / done.usage[k];
      expect({ k, ratio: ratio > 0.85 && ratio < 1.15 }).toEqual({ k, ratio: true });
    }
    expect(estimate.cost).toBeCloseTo((estimate.input_tokens * 2.5 + estimate.output_tokens * 10) / 1_000_000, 4);
    // Every page in both locales, as drafts of machine text; the node outside the subtree untouched.
    const stored = await db.select().from(translations).where(eq(translations.projectId, p.id));
    expect(stored.length).toBe(13 * 2);
    expect(stored.every((t) => t.status === "draft" && typeof t.meta.title === "string" && t.meta.title.startsWith("[translated] "))).toBe(true);
    expect(stored.some((t) => t.nodeId === outside.id)).toBe(false);
    // Usage per provider and month.
    const usage = (await h.request("GET", `/admin/p/${p.slug}/ai/usage`)).json.data;
    expect(usage).toEqual([
      expect.objectContaining({ kind: "openai", month: new Date().toISOString().slice(0, 7), calls: units, input_tokens: done.usage.input_tokens, output_tokens: done.usage.output_tokens }),
    ]);
    // Again: nothing left to translate, no call.
    const again = await h.request("POST", `/admin/p/${p.slug}/translation-jobs`, { body: { root_node_id: root.id, locales: ["de", "fr"] } });
    expect(again.json.data).toMatchObject({ status: "done", progress: { done: 0, total: 0 }, estimate: { calls: 0 } });
    expect(vendors.received("ok").length - from).toBe(units);
  });

  test("cancelled: no new vendor call after it (the one in flight may finish); over MCP the same tools", async () => {
    const { p, root } = await site("slow-ok", 8);
    const client = await m.connect((await m.token(p.slug, { name: "jobs", scopes: ["content:read", "content:write", "ai:read"] })).token);
    const started = await call(client, "start_translation_job", { root_node_id: root.id, locales: ["de"] });
    expect(["queued", "running"]).toContain(started.status);
    await waitFor(async () => ((await call(client, "get_translation_job", { job_id: started.id })).job.progress.done >= 1 || vendors.received("slow-ok").length > 1 ? true : null), {
      timeout: 15_000,
      what: "the first calls",
    });
    const cancelled = await call(client, "cancel_translation_job", { job_id: started.id });
    expect(cancelled.job.status).toBe("cancelled");
    const at = vendors.received("slow-ok").length;
    await Bun.sleep(2500); // fixed wait: the window in which no new call may start (the slow vendor takes 500 ms a call)
    expect(vendors.received("slow-ok").length - at).toBeLessThanOrEqual(1);
    const after = (await call(client, "get_translation_job", { job_id: started.id })).job;
    expect(after.status).toBe("cancelled");
    expect(after.progress.done).toBeLessThan(after.progress.total);
    // A cancelled job cannot be cancelled again; another project's is not found.
    expect((await h.request("POST", `/admin/p/${p.slug}/translation-jobs/${started.id}/cancel`)).status).toBe(409);
    const q = await seedProject(h);
    expect((await h.request("GET", `/admin/p/${q.slug}/translation-jobs/${started.id}`)).status).toBe(404);
    const pending = await db
      .select()
      .from(translationJobUnits)
      .where(and(eq(translationJobUnits.jobId, started.id), eq(translationJobUnits.state, "pending")));
    expect(pending.length).toBeGreaterThan(0);
  });

  test("bad input is 400, nothing made; the monthly token cap stops new calls with 429 quota_exceeded", async () => {
    const { p, root } = await site("ok", 2);
    for (const body of [{ locales: [] }, { locales: ["en"] }, { locales: ["it"] }, { locales: ["de"], root_node_id: crypto.randomUUID() }]) {
      const r = await h.request("POST", `/admin/p/${p.slug}/translation-jobs`, { body });
      expect([r.status, body]).toEqual([body.root_node_id ? 404 : 400, body]);
    }
    expect((await h.request("GET", `/admin/p/${p.slug}/translation-jobs`)).json.data).toEqual([]);
    // A cap already used up: a call answers 429 quota_exceeded and the vendor is not asked.
    expect((await h.request("PATCH", `/admin/projects/${p.slug}`, { body: { ai_monthly_token_cap: 50 } })).status).toBe(200);
    const first = await h.request("POST", `/admin/p/${p.slug}/ai/translate`, { body: { text: "Hello there, a first call", to: "de" } });
    expect(first.status).toBe(200);
    const from = vendors.received("ok").length;
    const refused = await h.request("POST", `/admin/p/${p.slug}/ai/translate`, { body: { text: "A second call", to: "de" } });
    expect([refused.status, refused.json.error.code]).toEqual([429, "quota_exceeded"]);
    expect(refused.json.error.details).toMatchObject({ cap: 50, month: new Date().toISOString().slice(0, 7) });
    expect(vendors.received("ok").length).toBe(from);
    // A job then fails with the same reason, having asked nothing.
    const j = (await h.request("POST", `/admin/p/${p.slug}/translation-jobs`, { body: { root_node_id: root.id, locales: ["de"] } })).json.data;
    const failed = await waitFor(async () => ((await job(p.slug, j.id)).status === "failed" ? await job(p.slug, j.id) : null), { timeout: 15_000, what: "the job to fail" });
    expect(failed.error).toMatch(/^quota_exceeded: /);
    expect(vendors.received("ok").length).toBe(from);
    expect(T("x")).toBe("[translated] x");
  });
});
