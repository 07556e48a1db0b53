// Issue 36 §6: a read-only key (content:read) mints and lists preview tokens (it reads drafts
// already) but cannot revoke them: revoking ends everyone's previews, a write that needs
// content:write. Every revoke route is refused with 403 naming the scope, and the token still reads.
import { describe, expect, test } from "bun:test";
import { eq } from "drizzle-orm";
import { previewTokens } from "../db/schema";
import { harness, keyWith, seedNode, seedProject } from "./helpers";

describe("revoking preview tokens", async () => {
  const h = await harness();
  const p = await seedProject(h);
  await seedNode(h, p.slug, { slug: "launch", title: "Launch (draft)" });
  const reader = await keyWith(h, ["content:read"]);
  const writer = await keyWith(h, ["content:write"]);
  const preview = async (token: string) => h.request("GET", `/api/p/${p.slug}/nodes/by-path/launch`, { key: null, headers: { authorization: `Bearer ${token}` } });
  const stored = async (id: string) => h.deps.db.select({ id: previewTokens.id }).from(previewTokens).where(eq(previewTokens.id, id));

  test("content:read mints and lists, but every revoke route is 403 naming content:write; the token still reads", async () => {
    const minted = await h.request("POST", `/admin/p/${p.slug}/preview-tokens`, { key: reader, body: { name: "editor's preview" } });
    expect(minted.status).toBe(201);
    const { id, token } = minted.json.data;
    expect((await h.request("GET", `/admin/p/${p.slug}/preview-tokens`, { key: reader })).json.data.map((t: any) => t.id)).toContain(id);
    for (const [path, body] of [
      [`/admin/p/${p.slug}/preview-tokens/${id}`, undefined],
      [`/admin/p/${p.slug}/preview-tokens?id=${id}`, undefined],
      [`/admin/p/${p.slug}/preview-tokens`, { id }],
    ] as const) {
      const denied = await h.request("DELETE", path, { key: reader, body });
      expect({ path, status: denied.status, code: denied.json?.error?.code }).toEqual({ path, status: 403, code: "insufficient_scope" });
      expect(denied.json.error.message).toContain("content:write");
    }
    expect(await stored(id)).toHaveLength(1);
    const read = await preview(token);
    expect(read.status).toBe(200);
    expect(read.json.data).toMatchObject({ title: "Launch (draft)", preview: true });
  });

  test("content:write revokes: 204, gone from the table, the token answers 401 at once", async () => {
    const minted = await h.request("POST", `/admin/p/${p.slug}/preview-tokens`, { key: reader, body: {} });
    const { id, token } = minted.json.data;
    expect((await preview(token)).status).toBe(200);
    expect((await h.request("DELETE", `/admin/p/${p.slug}/preview-tokens/${id}`, { key: writer })).status).toBe(204);
    expect(await stored(id)).toHaveLength(0);
    const after = await preview(token);
    expect(after.status).toBe(401);
    expect(after.json.error.code).toBe("preview_token_invalid");
  });
});
