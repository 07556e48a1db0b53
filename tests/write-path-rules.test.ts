import { describe, expect, test } from "bun:test";
import { and, eq, gt, sql } from "drizzle-orm";
import { activity, adminKeys, nodes, projects, revisions, translations, webhookEvents } from "../db/schema";
import type { AdminCaller } from "../src/lib/caller";
import { operationWrite, systemWrite } from "../src/write/context";
import { contentWrite } from "../src/write/unit";
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

describe("write path: history pruned, several writes in one operation, a project deleted by its own operation", async () => {
  const h = await harness();
  const p = await seedProject(h, { locales: ["en", "fr", "de"] });

  test("409 conflict with the revisions pruned lists the changes since from the activity log", async () => {
    const made = await h.request("POST", `/admin/p/${p.slug}/nodes`, { body: { slug: "pruned", title: "Mine" } });
    const id = made.json.data.id;
    expect((await h.request("PATCH", `/admin/p/${p.slug}/nodes/${id}`, { body: { title: "Theirs" }, headers: { "if-match": '"r1"' } })).status).toBe(200);
    // The retention pruned the history (housekeeping deletes revision rows; the activity log stays).
    await h.deps.db.delete(revisions).where(eq(revisions.nodeId, id));
    const res = await h.request("PATCH", `/admin/p/${p.slug}/nodes/${id}`, { body: { title: "Late" }, headers: { "if-match": '"r1"' } });
    expect([res.status, res.json.error.code]).toEqual([409, "conflict"]);
    expect(res.json.error.details.changes_since).toEqual([{ revision: 2, operation: "update_node", actor: expect.objectContaining({ kind: "admin_key" }), created_at: expect.any(String) }]);
    // Without both revisions the changed fields are not known: null, not a guess.
    expect(res.json.error.details.changed_fields).toBeNull();
  });

  test("one operation making two content writes: its expectation is checked once, its activity entry written once", async () => {
    const made = await h.request("POST", `/admin/p/${p.slug}/nodes`, { body: { slug: "twice", title: "Twice" } });
    const id: string = made.json.data.id;
    const [key] = await h.deps.db.select({ id: adminKeys.id }).from(adminKeys).limit(1);
    const ctx = operationWrite("update_node", { kind: "admin_key", keyId: key?.id ?? "", keyName: "test", scopes: [], projectIds: null } as AdminCaller, { nodeId: id, revision: 1 }, false);
    const write = (title: string) =>
      contentWrite(h.deps.db, ctx, p.id, async (tx, w) => {
        w.touched(id);
        await tx.update(nodes).set({ title }).where(eq(nodes.id, id));
      });
    await write("First");
    // The node is at revision 2 now; the operation's own second write is not held to revision 1.
    await write("Second");
    const [row] = await h.deps.db.select({ title: nodes.title, revision: nodes.revision }).from(nodes).where(eq(nodes.id, id));
    expect(row).toEqual({ title: "Second", revision: 3 });
    const entries = await h.deps.db.select({ operation: activity.operation, revision: activity.revision }).from(activity).where(eq(activity.nodeId, id));
    expect(entries.sort((a, b) => (a.revision ?? 0) - (b.revision ?? 0))).toEqual([
      { operation: "create_node", revision: 1 },
      { operation: "update_node", revision: 2 },
    ]);
  });

  test("a write outside any operation changing several translations of one node is recorded as update_node, one as upsert_translation", async () => {
    const made = await h.request("POST", `/admin/p/${p.slug}/nodes`, { body: { slug: "locales", title: "Locales" } });
    const id: string = made.json.data.id;
    const translate = (locales: string[]) =>
      contentWrite(h.deps.db, systemWrite(), p.id, async (tx, w) => {
        for (const locale of locales) {
          await tx
            .insert(translations)
            .values({ id: crypto.randomUUID(), projectId: p.id, nodeId: id, locale, meta: { title: locale } })
            .onConflictDoNothing();
          w.touched(id, locale);
        }
      });
    await translate(["fr", "de"]);
    await translate(["de"]);
    const ops = await h.deps.db.select({ number: revisions.number, operation: revisions.operation }).from(revisions).where(eq(revisions.nodeId, id));
    expect(ops.sort((a, b) => a.number - b.number).map((r) => r.operation)).toEqual(["create_node", "update_node", "upsert_translation"]);
  });

  test("an operation that deletes its own project answers 204: its activity entry has nowhere to go, and nothing is left", async () => {
    const doomed = await seedProject(h);
    const res = await h.request("DELETE", `/admin/projects/${doomed.slug}`);
    expect(res.status).toBe(204);
    expect(await h.deps.db.select().from(projects).where(eq(projects.id, doomed.id))).toEqual([]);
    expect(await h.deps.db.select().from(activity).where(eq(activity.projectId, doomed.id))).toEqual([]);
  });
});

describe("write path: the answer and the model check after several reports of one node", async () => {
  const h = await harness();
  const p = await seedProject(h, { locales: ["en", "fr", "de"] });
  await setModel(h.deps.db, p.id, BLOG_MODEL());

  test("a write changing two translations of one node answers the whole pointers of their violations; one translation's write, pointers into its input", async () => {
    const made = await h.request("POST", `/admin/p/${p.slug}/nodes`, { body: { slug: "two-locales", title: "Two", type: "post", fields: { author: "Ann" } } });
    expect(made.status).toBe(201);
    const id: string = made.json.data.id;
    const translate = (fields: Record<string, Record<string, unknown>>) =>
      contentWrite(h.deps.db, systemWrite(), p.id, async (tx, w) => {
        for (const [locale, f] of Object.entries(fields)) {
          await tx.insert(translations).values({ id: crypto.randomUUID(), projectId: p.id, nodeId: id, locale, meta: { title: locale }, fields: f });
          w.touched(id, locale);
        }
      }).then(
        () => null,
        (err: { code?: string; details?: { violations?: { pointer: string }[] } }) => [err.code, err.details?.violations?.map((v) => v.pointer)],
      );
    const tooLong = { summary: "s".repeat(80) };
    expect(await translate({ fr: { summary: "court" }, de: tooLong })).toEqual(["invalid_content", ["/translations/de/fields/summary"]]);
    expect(await translate({ de: tooLong })).toEqual(["invalid_content", ["/fields/summary"]]);
    // Both refused: nothing was written.
    expect(await h.deps.db.select().from(translations).where(eq(translations.nodeId, id))).toEqual([]);
  });

  test("editing a published node answers it changed (its working copy now differs), publishing it answers it published", async () => {
    const made = await h.request("POST", `/admin/p/${p.slug}/nodes`, { body: { slug: "edited", title: "Edited", type: "post", fields: { author: "Ann" } } });
    const id: string = made.json.data.id;
    expect((await h.request("POST", `/admin/p/${p.slug}/nodes/${id}/publish`)).status).toBe(200);
    const edited = await h.request("PATCH", `/admin/p/${p.slug}/nodes/${id}`, { body: { title: "Edited again" } });
    expect([edited.status, edited.json.data.status, edited.json.data.state]).toEqual([200, "published", "changed"]);
    const [row] = await h.deps.db.select({ changed: nodes.changed }).from(nodes).where(eq(nodes.id, id));
    expect(row?.changed).toBe(true);
    const published = await h.request("POST", `/admin/p/${p.slug}/nodes/${id}/publish`);
    expect([published.status, published.json.data.state]).toEqual([200, "published"]);
  });
});

describe("write path: the events of a translation published or unpublished alone", async () => {
  const h = await harness({ WEBHOOKS_ALLOW_PRIVATE_URLS: "true" });
  const p = await seedProject(h, { locales: ["en", "fr"], default_locale: "en" });
  // An endpoint for every event: the events are read from the outbox's table (nothing need receive them).
  expect((await h.request("POST", `/admin/p/${p.slug}/webhooks`, { body: { url: "http://127.0.0.1:9/hook", events: ["*"] } })).status).toBe(201);

  test("publish_node and unpublish_node with a locale send translation.published and translation.unpublished for that locale, not node events", async () => {
    const made = await h.request("POST", `/admin/p/${p.slug}/nodes`, { body: { slug: "page", title: "Page" } });
    const id: string = made.json.data.id;
    expect((await h.request("POST", `/admin/p/${p.slug}/nodes/${id}/publish`)).status).toBe(200);
    expect((await h.request("PUT", `/admin/p/${p.slug}/nodes/${id}/translations/fr`, { body: { meta: { title: "Page FR" } } })).status).toBe(200);
    const eventsAfter = async (step: () => Promise<{ status: number }>) => {
      const [{ seq } = { seq: 0 }] = await h.deps.db
        .select({ seq: sql<number>`coalesce(max(${webhookEvents.seq}), 0)` })
        .from(webhookEvents)
        .where(eq(webhookEvents.projectId, p.id));
      expect((await step()).status).toBe(200);
      const rows = await h.deps.db
        .select({ type: webhookEvents.type, payload: webhookEvents.payload })
        .from(webhookEvents)
        .where(and(eq(webhookEvents.projectId, p.id), gt(webhookEvents.seq, Number(seq))));
      return rows.map((r) => {
        const { data } = JSON.parse(r.payload);
        return [r.type, data.locale, data.node.id];
      });
    };
    expect(await eventsAfter(() => h.request("POST", `/admin/p/${p.slug}/nodes/${id}/publish`, { body: { locale: "fr" } }))).toEqual([["translation.published", "fr", id]]);
    expect(await eventsAfter(() => h.request("POST", `/admin/p/${p.slug}/nodes/${id}/unpublish`, { body: { locale: "fr" } }))).toEqual([["translation.unpublished", "fr", id]]);
  });
});
