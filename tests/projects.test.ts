import { describe, expect, test } from "bun:test";
import { eq } from "drizzle-orm";
import { projects } from "../db/schema";
import { harness, keyWith, seedProject, uniqueSlug } from "./helpers";

describe("projects admin API", async () => {
  const h = await harness();

  test("create, read by id and slug, update, delete", async () => {
    const slug = uniqueSlug();
    const created = await h.request("POST", "/admin/projects", {
      body: { slug, name: "Site", default_locale: "en-us", locales: ["fr", "en-US"], public_base_url: "https://example.com/" },
    });
    expect(created.status).toBe(201);
    expect(created.json.data).toMatchObject({ slug, name: "Site", default_locale: "en-US", locales: ["en-US", "fr"], public_base_url: "https://example.com" });
    const id = created.json.data.id;
    expect((await h.request("GET", `/admin/projects/${slug}`)).json.data.id).toBe(id);
    expect((await h.request("GET", `/admin/projects/${id}`)).json.data.slug).toBe(slug);

    const patched = await h.request("PATCH", `/admin/projects/${id}`, { body: { name: "Renamed", locales: ["de"] } });
    expect(patched.status).toBe(200);
    expect(patched.json.data.locales).toEqual(["en-US", "de"]);

    expect((await h.request("DELETE", `/admin/projects/${id}`)).status).toBe(204);
    expect((await h.request("GET", `/admin/projects/${id}`)).status).toBe(404);
    expect(await h.deps.db.select().from(projects).where(eq(projects.id, id))).toHaveLength(0);
  });

  test("duplicate slug is 409 and bad bodies are 400 without writing", async () => {
    const p = await seedProject(h);
    const before = (await h.deps.db.select().from(projects)).length;
    const dup = await h.request("POST", "/admin/projects", { body: { slug: p.slug, name: "x" } });
    expect(dup.status).toBe(409);
    expect(dup.json.error.code).toBe("conflict");
    const bad = await h.request("POST", "/admin/projects", { body: { slug: "Not A Slug", name: "x" } });
    expect(bad.status).toBe(400);
    expect(bad.json.error.code).toBe("invalid_request");
    expect(bad.json.error.details.field).toBe("slug");
    const badLocale = await h.request("POST", "/admin/projects", { body: { slug: uniqueSlug(), name: "x", locales: ["not a locale!"] } });
    expect(badLocale.status).toBe(400);
    expect(badLocale.json.error.code).toBe("invalid_locale");
    expect((await h.deps.db.select().from(projects)).length).toBe(before);
  });

  test("scope and project limit", async () => {
    const a = await seedProject(h);
    const b = await seedProject(h);
    expect((await h.request("GET", "/admin/projects", { key: null })).status).toBe(401);
    const reader = await keyWith(h, ["content:read"]);
    const denied = await h.request("GET", "/admin/projects", { key: reader });
    expect(denied.status).toBe(403);
    expect(denied.json.error.code).toBe("insufficient_scope");
    expect(denied.json.error.message).toContain("projects:read");
    const limited = await keyWith(h, ["projects:read"], [a.id]);
    expect((await h.request("GET", `/admin/projects/${b.id}`, { key: limited })).status).toBe(404);
    expect((await h.request("GET", `/admin/projects/${a.slug}`, { key: limited })).status).toBe(200);
    const list = await h.request("GET", "/admin/projects", { key: limited });
    expect(list.json.data.map((p: { id: string }) => p.id)).toEqual([a.id]);
  });
});
