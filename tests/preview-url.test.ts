// A project's preview_url (issue 39, the studio's Preview): a template with {token}, and {path}
// and {locale} at most; anything else is 400 naming the field, and nothing is written.
import { describe, expect, test } from "bun:test";
import { harness, seedProject } from "./helpers";

describe("a project's preview_url", async () => {
  const h = await harness();
  const p = await seedProject(h);

  test("set, read back and cleared; bad templates are 400 at the field and change nothing", async () => {
    const url = "https://site.example/api/draft?token={token}&path={path}&lang={locale}";
    const set = await h.request("PATCH", `/admin/projects/${p.slug}`, { body: { preview_url: url } });
    expect(set.status).toBe(200);
    expect(set.json.data.preview_url).toBe(url);
    for (const bad of ["https://site.example/draft?path={path}", "https://site.example/{token}/{slug}", "ftp://site.example/{token}", "/draft?token={token}"]) {
      const r = await h.request("PATCH", `/admin/projects/${p.slug}`, { body: { preview_url: bad } });
      expect(r.status).toBe(400);
      expect(r.json.error.details.field).toBe("preview_url");
    }
    expect((await h.request("GET", `/admin/projects/${p.slug}`)).json.data.preview_url).toBe(url);
    const cleared = await h.request("PATCH", `/admin/projects/${p.slug}`, { body: { preview_url: null } });
    expect(cleared.json.data.preview_url).toBeNull();
  });
});
