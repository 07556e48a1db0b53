// A 1,000-unit translation job in a real service process, killed (SIGKILL) part way and resumed by
// a new process on the same database (PostgreSQL, or the embedded database's data directory): it
// finishes, and no unit whose answer was stored is asked again (the idempotency key is the unit,
// its source hash and the locale); only a call in flight at the kill, whose answer never arrived,
// may be repeated. The loopback vendor records every request.
import { afterAll, describe, expect, test } from "bun:test";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { startFakeVendors } from "./fake-vendors";
import { freshDatabase, pgUrl, sendJson, waitFor } from "./helpers";
import { type Served, serve } from "./service-process";

const vendors = await startFakeVendors();

describe("a translation job survives a kill", () => {
  const served: Served[] = [];
  const dirs: string[] = [];
  let drop = async (): Promise<void> => {};
  afterAll(async () => {
    for (const s of served) await s.kill().catch(() => {});
    await drop().catch(() => {});
    for (const d of dirs) rmSync(d, { recursive: true, force: true });
    await vendors.stop();
  });

  test("killed with SIGKILL at about a third, resumed by another process: done, every stored answer asked once", async () => {
    const token = `cms_${crypto.randomUUID().replaceAll("-", "")}`;
    const fresh = pgUrl !== null ? await freshDatabase() : null;
    if (fresh) drop = fresh.drop;
    const dataDir = mkdtempSync(join(tmpdir(), "cms-jobs-"));
    dirs.push(dataDir);
    const env = { AI_ALLOW_PRIVATE_URLS: "true", TRANSLATION_JOB_LEASE: "2" };
    const start = async () => {
      const s = await serve(fresh?.url ?? "", token, 4, { env, dataDir, startTimeoutMs: 60_000 });
      served.push(s);
      return s;
    };
    let s = await start();
    const api = async (method: string, path: string, body?: unknown) => {
      const r = await sendJson(`${s.url}${path}`, token, method, { body });
      const text = await r.text();
      return { status: r.status, json: text ? JSON.parse(text) : null };
    };
    const p = (await api("POST", "/admin/projects", { slug: `jobs-${Date.now()}`, name: "Jobs", default_locale: "en", locales: ["en", "de", "fr"] })).json.data;
    expect(
      (await api("POST", `/admin/p/${p.slug}/ai/providers`, { name: "v", kind: "openai", model: "gpt-test", base_url: vendors.base("ok"), api_key: "sk-test-1234567890", is_default: true })).status,
    ).toBe(201);
    // 250 pages, each a title and a description: 500 units a locale, 1,000 in two.
    for (let i = 0; i < 250; i++) {
      const r = await api("POST", `/admin/p/${p.slug}/nodes`, { slug: `p${i}`, title: `Page number ${i} of the manual`, seo: { description: `What page ${i} explains, step by step.` } });
      if (r.status !== 201) throw new Error(JSON.stringify(r.json));
    }
    const from = vendors.received("ok").length;
    const job = (await api("POST", `/admin/p/${p.slug}/translation-jobs`, { locales: ["de", "fr"] })).json.data;
    expect(job.progress.total).toBe(1000);
    const read = async () => (await api("GET", `/admin/p/${p.slug}/translation-jobs/${job.id}`)).json.data;
    await waitFor(async () => ((await read()).progress.done >= 300 ? true : null), { timeout: 120_000, interval: 50, what: "a third of the job" });
    await s.kill();
    const atKill = vendors.received("ok").length - from;
    expect(atKill).toBeLessThan(1000);

    s = await start();
    const done = await waitFor(async () => ((await read()).status === "done" ? await read() : null), { timeout: 180_000, interval: 200, what: "the resumed job" });
    expect(done.progress).toEqual({ done: 1000, total: 1000 });
    // Every unit asked; none twice but at most the one in flight when the process died.
    const asked = vendors
      .received("ok")
      .slice(from)
      .map((r) => {
        const system = r.body.messages.find((m: any) => m.role === "system").content as string;
        const to = /to (German|French)/.exec(system)?.[1];
        return `${to}|${r.body.messages.find((m: any) => m.role === "user").content}`;
      });
    const distinct = new Set(asked);
    expect(distinct.size).toBe(1000);
    expect(asked.length - distinct.size).toBeLessThanOrEqual(1);
    expect(done.usage.calls).toBeGreaterThanOrEqual(1000);
    // Every page has both translations, each field made by the machine.
    const sample = (await api("GET", `/admin/p/${p.slug}/nodes?per_page=1&sort=path`)).json.data[0];
    for (const locale of ["de", "fr"]) {
      const t = (await api("GET", `/admin/p/${p.slug}/nodes/${sample.id}/translations/${locale}`)).json.data;
      expect([t.field_status["/title"].status, t.field_status["/seo/description"].status]).toEqual(["machine", "machine"]);
    }
  }, 420_000);
});
