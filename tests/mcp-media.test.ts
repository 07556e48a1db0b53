// The media tools over MCP with the SDK's own Client: upload_media_from_url, list_media, get_media,
// update_media (issue 26); media:write is asked for by name.
import { afterAll, beforeAll, expect, test } from "bun:test";
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { seedProject } from "./helpers";
import { call, callError, type McpHarness, mcpHarness } from "./mcp-harness";
import { twoColourPng } from "./media.helpers";

let m: McpHarness;
let vendor: ReturnType<typeof Bun.serve>;
let ref: string;

beforeAll(async () => {
  m = await mcpHarness({ DATA_DIR: mkdtempSync(join(tmpdir(), "media-mcp-")), MEDIA_ALLOW_PRIVATE_URLS: "true" });
  ref = (await seedProject(m.h)).slug;
  const png = await twoColourPng(640, 160);
  vendor = Bun.serve({ port: 0, hostname: "127.0.0.1", fetch: () => new Response(png as Uint8Array<ArrayBuffer>, { headers: { "content-type": "image/png" } }) });
}, 120_000);
afterAll(() => {
  m?.stop();
  vendor?.stop(true);
});

test("upload from a URL, list, read and update alt text with the SDK's Client", async () => {
  const { token } = await m.token(ref, { name: "agent", scopes: ["content:read", "media:write"] });
  const client = await m.connect(token);
  const names = (await client.listTools()).tools.map((t) => t.name);
  for (const n of ["upload_media_from_url", "list_media", "get_media", "update_media"]) expect(names).toContain(n);
  const up = await call(client, "upload_media_from_url", { url: `http://127.0.0.1:${vendor.port}/banner.png`, alt: "A banner", focal_point: { x: 0.2, y: 0.5 } });
  expect(up.media).toMatchObject({ type: "image/png", filename: "banner.png", width: 640, height: 160, alt: { en: "A banner" }, focal_point: { x: 0.2, y: 0.5 } });
  const listed = await call(client, "list_media", { q: "banner" });
  expect(listed.media.map((x: { id: string }) => x.id)).toEqual([up.media.id]);
  const updated = await call(client, "update_media", { media_id: up.media.id, alt: { fr: "Une bannière" } });
  expect(updated.media.alt).toEqual({ en: "A banner", fr: "Une bannière" });
  const read = await call(client, "get_media", { media_id: up.media.id });
  expect(read.media).toMatchObject({ id: up.media.id, alt: { en: "A banner", fr: "Une bannière" } });
  // The delivery URL the tool gave serves the image.
  const res = await m.h.app.handle(new Request(`${read.media.url}&w=320&fm=webp`));
  expect(res.status).toBe(200);
  expect(res.headers.get("content-type")).toBe("image/webp");
});

test("without media:write the write tools answer the scope they need; reading needs content:read only", async () => {
  const { token } = await m.token(ref, { name: "reader", scopes: ["content:read"] });
  const client = await m.connect(token);
  expect((await call(client, "list_media", {})).total).toBeGreaterThanOrEqual(1);
  const text = await callError(client, "upload_media_from_url", { url: `http://127.0.0.1:${vendor.port}/x.png` });
  expect(text).toContain("media:write");
});
