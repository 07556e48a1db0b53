// The media tools over MCP (the SDK's own Client) on the S3 driver, built by the app from
// MEDIA_STORAGE=s3 and MEDIA_S3_* against s3rver on loopback: upload_media_from_url stores the
// original in the bucket, list_media / get_media / update_media read and edit it, describe_media
// reads it back from the bucket for the AI vendor (the loopback fake), a delivered variant is
// stored beside it; nothing lands on the local disk.
import { afterAll, beforeAll, expect, test } from "bun:test";
import { existsSync } from "node:fs";
import { join } from "node:path";
import { fakeDescription, startFakeVendors } from "./fake-vendors";
import { seedProject } from "./helpers";
import { call, type McpHarness, mcpHarness } from "./mcp-harness";
import { twoColourPng } from "./media.helpers";
import { type S3Bucket, startS3 } from "./s3.helpers";

let bucket: S3Bucket;
let m: McpHarness;
let images: ReturnType<typeof Bun.serve>;
let png: Uint8Array;
const vendors = await startFakeVendors();

beforeAll(async () => {
  bucket = await startS3();
  m = await mcpHarness({ ...bucket.env(), AI_ALLOW_PRIVATE_URLS: "true", MEDIA_ALLOW_PRIVATE_URLS: "true" });
  png = await twoColourPng(640, 160);
  images = Bun.serve({ port: 0, hostname: "127.0.0.1", fetch: () => new Response(png as Uint8Array<ArrayBuffer>, { headers: { "content-type": "image/png" } }) });
}, 120_000);
afterAll(async () => {
  m?.stop();
  images?.stop(true);
  await vendors.stop();
  await bucket?.stop();
});

test("upload from a URL, list, read, edit, describe with the AI provider and deliver a variant: every byte in the bucket", async () => {
  const p = await seedProject(m.h);
  const provider = await m.h.request("POST", `/admin/p/${p.slug}/ai/providers`, {
    body: { name: "o", kind: "openai", base_url: vendors.base("ok"), api_key: "sk-s3-describe-1234", is_default: true },
  });
  expect(provider.status).toBe(201);
  const { token } = await m.token(p.slug, { name: "agent", scopes: ["content:read", "media:write"] });
  const client = await m.connect(token);

  const up = await call(client, "upload_media_from_url", { url: `http://127.0.0.1:${images.port}/banner.png`, alt: "A banner" });
  expect(up.media).toMatchObject({ type: "image/png", filename: "banner.png", width: 640, height: 160, alt: { en: "A banner" } });
  const original = `${up.media.hash.slice(0, 2)}/${up.media.hash}/original`;
  expect(await bucket.keys()).toContain(original);
  expect(bucket.written.filter((k) => k === original)).toHaveLength(1);

  expect((await call(client, "list_media", { q: "banner" })).media.map((x: { id: string }) => x.id)).toEqual([up.media.id]);
  expect((await call(client, "update_media", { media_id: up.media.id, alt: { fr: "Une bannière" } })).media.alt).toEqual({ en: "A banner", fr: "Une bannière" });

  // describe_media reads the original from the bucket and sends it to the vendor.
  const before = vendors.requests.length;
  const described = await call(client, "describe_media", { media_id: up.media.id });
  const sent = vendors.requests.slice(before);
  expect(sent).toHaveLength(1);
  const image = (sent[0]!.body.messages.at(-1).content as Array<{ type: string; image_url?: { url: string } }>).find((c) => c.type === "image_url")!.image_url!.url;
  const bytes = Buffer.from(image.replace(/^data:image\/[a-z+]+;base64,/, ""), "base64");
  expect(described.media.alt_draft).toEqual({ en: fakeDescription(/^data:(image\/[a-z+]+);/.exec(image)![1]!, bytes.length) });

  const read = await call(client, "get_media", { media_id: up.media.id });
  expect(read.media).toMatchObject({ id: up.media.id, alt: { en: "A banner", fr: "Une bannière" }, alt_draft: described.media.alt_draft });
  const variant = await m.h.app.handle(new Request(`${read.media.url}&w=320&fm=webp`));
  expect([variant.status, variant.headers.get("content-type")]).toEqual([200, "image/webp"]);
  expect(await bucket.has(`${up.media.hash.slice(0, 2)}/${up.media.hash}/v/r320x80-q75.webp`)).toBe(true);
  const served = await m.h.app.handle(new Request(read.media.url));
  expect(new Uint8Array(await served.arrayBuffer())).toEqual(png as Uint8Array<ArrayBuffer>);

  // The S3 driver, not the disk: nothing under DATA_DIR/media.
  expect(existsSync(join(bucket.env().DATA_DIR!, "media"))).toBe(false);
});
