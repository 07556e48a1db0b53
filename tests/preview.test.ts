// Issue 29: preview tokens, and delivery's preview mode (the latest content, never cached).
import { describe, expect, test } from "bun:test";
import { eq, sql } from "drizzle-orm";
import { previewTokens } from "../db/schema";
import { hashToken } from "../src/lib/tokens";
import { get, transition, translate } from "./delivery.helpers";
import { harness, keyWith, seedNode, seedProject, waitFor } from "./helpers";

describe("preview tokens and preview reads", async () => {
  const h = await harness();
  const p = await seedProject(h, { locales: ["en", "fr"], public_base_url: "https://site.example" });
  const other = await seedProject(h);
  const api = (rest: string): string => `/api/p/${p.slug}${rest}`;

  const home = await seedNode(h, p.slug, { slug: "home", title: "Home" }, true);
  const draft = await seedNode(h, p.slug, { slug: "launch", title: "Launch (draft)" });
  const draftChild = await seedNode(h, p.slug, { slug: "details", title: "Details", parent_id: draft.id });
  const archived = await seedNode(h, p.slug, { slug: "old", title: "Old" }, true);
  await transition(h, p.slug, archived.id, "archive");
  await translate(h, p.slug, home.id, "fr", { meta: { title: "Accueil (brouillon)" }, status: "draft" });
  const col = await seedNode(h, p.slug, { slug: "blog", title: "Blog", type: "collection" }, true);
  const pubEntry = await seedNode(h, p.slug, { slug: "first", title: "First", parent_id: col.id, type: "entry" }, true);
  const draftEntry = await seedNode(h, p.slug, { slug: "second", title: "Second", parent_id: col.id, type: "entry" });

  const mint = async (body: Record<string, unknown> = {}, ref = p.slug) => {
    const res = await h.request("POST", `/admin/p/${ref}/preview-tokens`, { body });
    expect(res.status).toBe(201);
    return res.json.data as { id: string; token: string; expires_at: string; token_hint: string };
  };
  const bearer = (token: string) => ({ authorization: `Bearer ${token}` });

  test("POST answers 201 with a cms_pv_ token, an hour by default, stored hashed, never cached", async () => {
    const before = Date.now();
    const res = await h.request("POST", `/admin/p/${p.slug}/preview-tokens`, { body: { name: "next.js" } });
    expect(res.status).toBe(201);
    expect(res.headers.get("cache-control")).toContain("no-store");
    const t = res.json.data;
    expect(t.token).toMatch(/^cms_pv_[a-z2-7]{32}$/);
    expect(t.name).toBe("next.js");
    expect(t.token_hint).toBe(`cms_pv_…${t.token.slice(-4)}`);
    const ttl = Date.parse(t.expires_at) - before;
    expect(ttl).toBeGreaterThan(3590_000);
    expect(ttl).toBeLessThan(3610_000);
    const [row] = await h.deps.db.select().from(previewTokens).where(eq(previewTokens.id, t.id));
    expect(row?.tokenHash).toBe(hashToken(t.token));
    expect(JSON.stringify(row)).not.toContain(t.token);
    expect(row?.createdBy.kind).toBe("admin_key");
  });

  test("ttl_seconds: chosen, at most 7 days; content:read suffices, without it 403", async () => {
    const t = await mint({ ttl_seconds: 7 * 86_400 });
    expect(Date.parse(t.expires_at) - Date.now()).toBeGreaterThan(7 * 86_400_000 - 10_000);
    const tooLong = await h.request("POST", `/admin/p/${p.slug}/preview-tokens`, { body: { ttl_seconds: 7 * 86_400 + 1 } });
    expect(tooLong.status).toBe(400);
    expect(tooLong.json.error.details.field).toBe("ttl_seconds");
    const reader = await keyWith(h, ["content:read"]);
    expect((await h.request("POST", `/admin/p/${p.slug}/preview-tokens`, { key: reader, body: {} })).status).toBe(201);
    const aiOnly = await keyWith(h, ["ai:read"]);
    const denied = await h.request("POST", `/admin/p/${p.slug}/preview-tokens`, { key: aiOnly, body: {} });
    expect(denied.status).toBe(403);
    expect(denied.json.error.code).toBe("insufficient_scope");
  });

  test("the list shows hints, never the secret", async () => {
    const t = await mint();
    const res = await h.request("GET", `/admin/p/${p.slug}/preview-tokens`);
    expect(res.status).toBe(200);
    const listed = res.json.data.find((x: any) => x.id === t.id);
    expect(listed.token_hint).toBe(t.token_hint);
    expect(listed.expired).toBe(false);
    expect(res.text).not.toContain(t.token);
    // Another project's list does not show it.
    const theirs = await h.request("GET", `/admin/p/${other.slug}/preview-tokens`);
    expect(theirs.json.data.some((x: any) => x.id === t.id)).toBe(false);
  });

  test("a draft, its draft child and a draft translation: 404 to everyone, 200 to a preview, by header or ?preview=", async () => {
    const { token } = await mint();
    expect((await get(h, api("/nodes/by-path/launch"))).status).toBe(404);
    const byHeader = await get(h, api("/nodes/by-path/launch"), bearer(token));
    expect(byHeader.status).toBe(200);
    expect(byHeader.json.data.id).toBe(draft.id);
    expect(byHeader.json.data.preview).toBe(true);
    expect(byHeader.json.data.status).toBe("draft");
    expect(byHeader.json.data.revision).toBe(1);
    expect(byHeader.headers.get("cache-control")).toBe("private, no-store");
    expect(byHeader.headers.get("vary")).toBe("Authorization");
    expect(byHeader.headers.get("etag")).toBeNull();
    expect(byHeader.headers.get("access-control-allow-origin")).toBe("*");
    const byQuery = await get(h, api(`/nodes/by-path/launch/details?preview=${token}`));
    expect(byQuery.status).toBe(200);
    expect(byQuery.json.data.id).toBe(draftChild.id);
    expect(byQuery.headers.get("cache-control")).toBe("private, no-store");
    expect((await get(h, api(`/nodes/${draftChild.id}`), bearer(token))).json.data.title).toBe("Details");
    expect((await get(h, api(`/translations/nodes/${home.id}?locale=fr`))).status).toBe(404);
    const tr = await get(h, api(`/translations/nodes/${home.id}?locale=fr`), bearer(token));
    expect(tr.status).toBe(200);
    expect(tr.json.data.title).toBe("Accueil (brouillon)");
    // Archived stays hidden, even in a preview.
    expect((await get(h, api("/nodes/by-path/old"), bearer(token))).status).toBe(404);
  });

  test("entries and the node list: drafts only in a preview", async () => {
    const { token } = await mint();
    const pub = await get(h, api("/entries?collection=blog&sort=title"));
    expect(pub.json.data.map((e: any) => e.id)).toEqual([pubEntry.id]);
    const pv = await get(h, api("/entries?collection=blog&sort=title"), bearer(token));
    expect(pv.status).toBe(200);
    expect(pv.json.preview).toBe(true);
    expect(pv.json.total).toBe(2);
    expect(pv.json.data.map((e: any) => e.id)).toEqual([pubEntry.id, draftEntry.id]);
    expect(pv.json.data.map((e: any) => e.status)).toEqual(["published", "draft"]);
    expect(pub.json.data[0].status).toBeUndefined();
    expect(pv.headers.get("cache-control")).toBe("private, no-store");
    const list = await get(h, api("/nodes"), bearer(token));
    const ids = list.json.data.map((n: any) => n.id);
    expect(ids).toContain(draft.id);
    expect(ids).toContain(draftChild.id);
    expect(ids).not.toContain(archived.id);
    const publicIds = (await get(h, api("/nodes"))).json.data.map((n: any) => n.id);
    expect(publicIds).not.toContain(draft.id);
    expect(publicIds).toContain(home.id);
  });

  test("cache separation: the same URL before, with and after a preview answers the published version to anonymous readers", async () => {
    const { token } = await mint();
    const url = api("/nodes/by-path/home?locale=fr");
    const before = await get(h, url);
    expect(before.status).toBe(200);
    expect(before.json.data.translated).toBe(false);
    expect(before.json.data.preview).toBeUndefined();
    const again = await get(h, url); // from the answer cache now
    expect(again.text).toBe(before.text);
    const pv = await get(h, url, bearer(token));
    expect(pv.json.data.translated).toBe(true);
    expect(pv.json.data.title).toBe("Accueil (brouillon)");
    const pvQuery = await get(h, `${url}&preview=${token}`);
    expect(pvQuery.json.data.title).toBe("Accueil (brouillon)");
    const after = await get(h, url);
    expect(after.status).toBe(200);
    expect(after.text).toBe(before.text);
    expect(after.headers.get("etag")).toBe(before.headers.get("etag"));
    expect(after.headers.get("cache-control")).toContain("public");
    // A preview read first, on a URL never read before: the anonymous read after it is the published one.
    const fresh = api("/entries?collection=blog&sort=-title");
    expect((await get(h, fresh, bearer(token))).json.total).toBe(2);
    const anon = await get(h, fresh);
    expect(anon.json.total).toBe(1);
    expect(anon.json.preview).toBeUndefined();
    // An admin key is not a preview token: delivery stays anonymous and public.
    const admin = await get(h, api("/nodes/by-path/launch"), bearer(h.rootKey));
    expect(admin.status).toBe(404);
  });

  test("unknown, foreign, empty, expired and revoked tokens: 401 with a code, never the published content", async () => {
    const published = api("/nodes/by-path/home");
    const unknown = await get(h, published, bearer("cms_pv_aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"));
    expect(unknown.status).toBe(401);
    expect(unknown.json.error.code).toBe("preview_token_invalid");
    expect(unknown.headers.get("cache-control")).toBe("private, no-store");
    expect((await get(h, `${published}?preview=`)).json.error.code).toBe("preview_token_invalid");
    expect((await get(h, `${published}?preview=nonsense`)).status).toBe(401);
    const foreign = await mint({}, other.slug);
    expect((await get(h, published, bearer(foreign.token))).json.error.code).toBe("preview_token_invalid");

    const expiring = await mint();
    expect((await get(h, published, bearer(expiring.token))).status).toBe(200);
    await h.deps.db.update(previewTokens).set({ expiresAt: sql`now() - interval '1 second'` }).where(eq(previewTokens.id, expiring.id));
    const expired = await get(h, published, bearer(expiring.token));
    expect(expired.status).toBe(401);
    expect(expired.json.error.code).toBe("preview_token_expired");
    expect(expired.json.data).toBeUndefined();
    const listed = (await h.request("GET", `/admin/p/${p.slug}/preview-tokens`)).json.data.find((x: any) => x.id === expiring.id);
    expect(listed.expired).toBe(true);

    const revoked = await mint();
    expect((await get(h, `${published}?preview=${revoked.token}`)).status).toBe(200);
    expect((await h.request("DELETE", `/admin/p/${p.slug}/preview-tokens/${revoked.id}`)).status).toBe(204);
    const gone = await get(h, `${published}?preview=${revoked.token}`);
    expect(gone.status).toBe(401);
    expect(gone.json.error.code).toBe("preview_token_invalid");
    expect(await h.deps.db.select().from(previewTokens).where(eq(previewTokens.id, revoked.id))).toEqual([]);
    expect((await h.request("DELETE", `/admin/p/${p.slug}/preview-tokens/${revoked.id}`)).status).toBe(404);
    expect((await h.request("DELETE", `/admin/p/${other.slug}/preview-tokens/${foreign.id}`)).status).toBe(204);
  });

  test("the access log never shows a token", async () => {
    const { token } = await mint();
    await get(h, api(`/nodes/by-path/launch?preview=${token}`), { "x-request-id": "pv-query" });
    await get(h, api("/nodes/by-path/launch"), { ...bearer(token), "x-request-id": "pv-header" });
    // The request log is written after the response.
    const lines = () => h.logs.map((l) => JSON.parse(l)).filter((l) => l.msg === "request");
    const logged = await waitFor(() => lines().filter((l) => l.request_id === "pv-query" || l.request_id === "pv-header").length === 2 && lines(), { what: "the preview reads' log lines" });
    expect(logged.find((l) => l.request_id === "pv-query")).toMatchObject({ path: `/api/p/${p.slug}/nodes/by-path/launch`, status: 200 });
    expect(h.logs.join("\n")).not.toContain(token);
  });
});
