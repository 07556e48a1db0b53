import { describe, expect, test } from "bun:test";
import { and, eq } from "drizzle-orm";
import { nodes } from "../db/schema";
import { harness, seedProject } from "./helpers";
import { BLOG_MODEL, setModel } from "./model.helpers";

// Rules of the write path (src/write) that mutation testing (tests/MUTATION.md) found unguarded.

describe("write path: the model check's answer", async () => {
  const h = await harness();
  const p = await seedProject(h);
  await setModel(h.deps.db, p.id, BLOG_MODEL());

  test("400 invalid_content names the first violation and counts the others; nothing is written", async () => {
    const cases: [Record<string, unknown>, string][] = [
      [{ author: "" }, ""],
      [{ author: "", summary: "s".repeat(80) }, " (and 1 more)"],
      [{ author: "", summary: "s".repeat(80), date: "not a date" }, " (and 2 more)"],
    ];
    for (const [i, [fields, more]] of cases.entries()) {
      const slug = `invalid-${i}`;
      const res = await h.request("POST", `/admin/p/${p.slug}/nodes`, { body: { slug, title: slug, type: "post", fields } });
      expect([slug, res.status, res.json.error.code]).toEqual([slug, 400, "invalid_content"]);
      const { violations } = res.json.error.details;
      expect(violations).toHaveLength(Object.keys(fields).length);
      expect(res.json.error.message).toBe(`the content does not match the project's content model: ${violations[0].pointer}: ${violations[0].message}${more}`);
      expect(
        await h.deps.db
          .select()
          .from(nodes)
          .where(and(eq(nodes.projectId, p.id), eq(nodes.slug, slug))),
      ).toEqual([]);
    }
  });
});

describe("write path: a stale expected revision", async () => {
  const h = await harness();
  const p = await seedProject(h);

  test("409 conflict names exactly the fields that changed since (not the revision or updated_at), and writes nothing", async () => {
    const made = await h.request("POST", `/admin/p/${p.slug}/nodes`, { body: { slug: "c", title: "Mine" } });
    const id = made.json.data.id;
    expect((await h.request("PATCH", `/admin/p/${p.slug}/nodes/${id}`, { body: { title: "Theirs" }, headers: { "if-match": '"r1"' } })).status).toBe(200);
    const res = await h.request("PATCH", `/admin/p/${p.slug}/nodes/${id}`, { body: { title: "Late" }, headers: { "if-match": '"r1"' } });
    expect([res.status, res.json.error.code]).toEqual([409, "conflict"]);
    expect(res.json.error.details).toMatchObject({ node_id: id, expected_revision: 1, current_revision: 2, changed_fields: ["title"] });
    expect(res.json.error.message).toContain("; changed: title. Nothing was written");
    const [row] = await h.deps.db.select({ title: nodes.title, revision: nodes.revision }).from(nodes).where(eq(nodes.id, id));
    expect(row).toEqual({ title: "Theirs", revision: 2 });
  });
});
