// Issue 26 × 28: media writes send their webhook events (media.created, media.updated,
// media.deleted) from the outbox, written in the media write's own transaction.
import { expect, test } from "bun:test";
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { asc, eq } from "drizzle-orm";
import { webhookEvents } from "../db/schema";
import { harness, seedProject } from "./helpers";
import { twoColourPng, uploadForm } from "./media.helpers";

test("upload, alt text and delete of a media item each enqueue their event, in order, with the item", async () => {
  const h = await harness({ DATA_DIR: mkdtempSync(join(tmpdir(), "media-hooks-")), WEBHOOKS_ALLOW_PRIVATE_URLS: "true" });
  const p = await seedProject(h);
  const hook = await h.request("POST", `/admin/p/${p.slug}/webhooks`, { body: { url: "http://127.0.0.1:9/hook", events: ["media.created", "media.updated", "media.deleted"] } });
  expect(hook.status).toBe(201);
  const up = await uploadForm(h, p.slug, await twoColourPng(64, 32), "banner.png", { alt: "A banner" });
  expect(up.status).toBe(201);
  const id = up.json.data.id as string;
  expect((await h.request("PATCH", `/admin/p/${p.slug}/media/${id}`, { body: { alt: { en: "The banner" } } })).status).toBe(200);
  expect((await h.request("DELETE", `/admin/p/${p.slug}/media/${id}`)).status).toBe(204);
  // A refused upload (not an image) writes no event.
  expect((await uploadForm(h, p.slug, new TextEncoder().encode("MZ not an image"), "x.png")).status).toBe(415);
  const events = await h.deps.db.select().from(webhookEvents).where(eq(webhookEvents.projectId, p.id)).orderBy(asc(webhookEvents.seq));
  expect(events.map((e) => e.type)).toEqual(["media.created", "media.updated", "media.deleted"]);
  for (const e of events) {
    const payload = JSON.parse(e.payload);
    expect(payload.type).toBe(e.type);
    expect(payload.data.project).toEqual({ id: p.id, slug: p.slug });
    expect(payload.data.media).toMatchObject({ id, filename: "banner.png", type: "image/png", width: 64, height: 32 });
  }
});
