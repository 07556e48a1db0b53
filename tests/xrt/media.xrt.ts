// Cross-runtime: image processing (sharp, loaded through src/platform/sharp.ts) works on this
// runtime: a PNG upload is measured and summarised, a WebP variant is rendered, stored and served.
import { afterAll, describe, expect, test } from "bun:test";
import sharp from "sharp";
import { seedProject } from "./seed";
import { ADMIN_TOKEN, describeRun, startService, stopAll } from "./service";

describe(`media: ${describeRun()}`, async () => {
  afterAll(stopAll);
  const svc = await startService();

  test("a PNG upload gives its size and placeholder; a 320-px WebP variant is rendered", async () => {
    const p = await seedProject(svc);
    const png = await sharp({ create: { width: 640, height: 160, channels: 3, background: "#c03020" } })
      .png()
      .toBuffer();
    const form = new FormData();
    form.set("file", new Blob([new Uint8Array(png)]), "banner.png");
    form.set("alt", "A red banner");
    const up = await fetch(`${svc.base}/admin/p/${p.slug}/media`, { method: "POST", headers: { authorization: `Bearer ${ADMIN_TOKEN}` }, body: form });
    const item = (await up.json()) as { data: { id: string; filename: string; width: number; height: number; placeholder: string | null; url: string } };
    expect(up.status).toBe(201);
    expect(item.data).toMatchObject({ width: 640, height: 160, filename: "banner.png" });
    expect(item.data.placeholder).toBeString();
    const v = new URL(item.data.url).searchParams.get("v");
    const variant = await fetch(`${svc.base}/api/p/${p.slug}/media/${item.data.id}/banner.png?v=${v}&w=320&fm=webp`);
    expect(variant.status).toBe(200);
    expect(variant.headers.get("content-type")).toBe("image/webp");
    expect((await sharp(new Uint8Array(await variant.arrayBuffer())).metadata()).width).toBe(320);
  });
});
