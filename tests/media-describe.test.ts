// describe_media (issue 26): alt text by the project's own provider against the loopback fake
// vendors, the image sent downscaled in each protocol's own form, stored as a draft for review.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import sharp from "sharp";
import { type FakeVendors, fakeDescription, fakeTranslation, startFakeVendors } from "./fake-vendors";
import { seedProject } from "./helpers";
import { call, type McpHarness, mcpHarness } from "./mcp-harness";
import { jpegWithGps, uploadForm } from "./media.helpers";

let m: McpHarness;
let vendors: FakeVendors;

beforeAll(async () => {
  vendors = await startFakeVendors();
  m = await mcpHarness({ DATA_DIR: mkdtempSync(join(tmpdir(), "media-describe-")), AI_ALLOW_PRIVATE_URLS: "true" });
}, 120_000);
afterAll(async () => {
  m?.stop();
  await vendors?.stop();
});

describe("describe_media", () => {
  for (const kind of ["anthropic", "openai"] as const) {
    test(`${kind}: the image goes downscaled in the vendor's own form; the alt text and its translation are stored as drafts`, async () => {
      const h = m.h;
      const p = await seedProject(h);
      const provider = await h.request("POST", `/admin/p/${p.slug}/ai/providers`, { body: { name: kind, kind, base_url: vendors.base("ok"), api_key: "sk-describe-test-1234", is_default: true } });
      expect(provider.status).toBe(201);
      // A 12-megapixel photo: the vendor must get at most 768 pixels on the longer side.
      const up = await uploadForm(h, p.slug, await jpegWithGps(4000, 3000), "big.jpg", { alt: "kept" });
      expect(up.status).toBe(201);
      const before = vendors.requests.length;
      const res = await h.request("POST", `/admin/p/${p.slug}/media/${up.json.data.id}/describe`, { body: { locales: ["fr"] } });
      expect(res.status).toBe(200);
      const sent = vendors.requests.slice(before);
      expect(sent).toHaveLength(2); // the description, then its translation
      const content = sent[0]?.body.messages.find((x: any) => x.role === "user").content;
      const data =
        kind === "anthropic" ? content.find((c: any) => c.type === "image").source.data : content.find((c: any) => c.type === "image_url").image_url.url.replace(/^data:image\/jpeg;base64,/, "");
      const bytes = Buffer.from(data, "base64");
      const meta = await sharp(bytes).metadata();
      expect({ format: meta.format, width: meta.width, height: meta.height }).toEqual({ format: "jpeg", width: 768, height: 576 });
      const description = fakeDescription("image/jpeg", bytes.length);
      expect(res.json.data.alt_draft).toEqual({ en: description, fr: fakeTranslation(description) });
      expect(res.json.data.alt).toEqual({ en: "kept" }); // a draft until reviewed
      // Accepting the draft settles it.
      const accepted = await h.request("PATCH", `/admin/p/${p.slug}/media/${up.json.data.id}`, { body: { alt: { en: description } } });
      expect(accepted.json.data).toMatchObject({ alt: { en: description }, alt_draft: { fr: fakeTranslation(description) } });
    });
  }

  test("gemini: the image goes to the native generateContent API as inline_data (base URL without /openai); the translation through the OpenAI endpoint", async () => {
    const h = m.h;
    const p = await seedProject(h);
    const base = `${vendors.base("ok")}/v1beta/openai`;
    const provider = await h.request("POST", `/admin/p/${p.slug}/ai/providers`, { body: { name: "g", kind: "gemini", base_url: base, api_key: "AIza-describe-test-1234", is_default: true } });
    expect(provider.status).toBe(201);
    const up = await uploadForm(h, p.slug, await jpegWithGps(4000, 3000), "big.jpg");
    const before = vendors.requests.length;
    const res = await h.request("POST", `/admin/p/${p.slug}/media/${up.json.data.id}/describe`, { body: { locales: ["fr"] } });
    expect(res.status).toBe(200);
    const sent = vendors.requests.slice(before);
    expect(sent.map((r) => [r.protocol, r.path])).toEqual([
      ["gemini", "/s/ok/v1beta/models/gemini-2.5-flash:generateContent"],
      ["openai", "/s/ok/v1beta/openai/chat/completions"],
    ]);
    const native = sent[0]!;
    expect(native.headers["x-goog-api-key"]).toBe("AIza-describe-test-1234");
    expect(native.headers.authorization).toBeUndefined();
    expect(native.body.system_instruction.parts[0].text).toContain("alt");
    const parts = native.body.contents[0].parts;
    expect(parts.map((x: any) => Object.keys(x)[0])).toEqual(["inline_data", "text"]);
    expect(parts[0].inline_data.mime_type).toBe("image/jpeg");
    const bytes = Buffer.from(parts[0].inline_data.data, "base64");
    const meta = await sharp(bytes).metadata();
    expect({ format: meta.format, width: meta.width, height: meta.height }).toEqual({ format: "jpeg", width: 768, height: 576 });
    const description = fakeDescription("image/jpeg", bytes.length);
    expect(res.json.data.alt_draft).toEqual({ en: description, fr: fakeTranslation(description) });
  });

  test("gemini: the native API's errors are typed (rejected, rate limited, blocked, cut short); nothing is stored", async () => {
    const h = m.h;
    const p = await seedProject(h);
    const up = await uploadForm(h, p.slug, await jpegWithGps(320, 240), "small.jpg");
    const cases = [
      ["400", 502, "provider_error", "is not found for API version v1beta"],
      ["403", 502, "provider_error", "refused the API key"],
      ["429", 429, "rate_limited", "retry after 17 s"],
      ["500", 502, "provider_error", "HTTP 500"],
      ["empty", 502, "provider_error", "no description"],
      ["length", 502, "provider_error", "output limit"],
    ] as const;
    for (const [scenario, status, code, message] of cases) {
      const provider = await h.request("POST", `/admin/p/${p.slug}/ai/providers`, {
        body: { name: `g-${scenario}`, kind: "gemini", base_url: `${vendors.base(scenario)}/v1beta/openai/`, api_key: "AIza-describe-test-1234" },
      });
      expect(provider.status).toBe(201);
      const res = await h.request("POST", `/admin/p/${p.slug}/media/${up.json.data.id}/describe`, { body: { provider_id: provider.json.data.id } });
      expect([scenario, res.status, res.json.error?.code]).toEqual([scenario, status, code]);
      expect(res.json.error.message).toContain(message);
      expect(res.json.error.message).not.toContain("AIza-describe");
    }
    expect(vendors.received("400").at(-1)?.path).toBe("/s/400/v1beta/models/gemini-2.5-flash:generateContent");
    expect((await h.request("GET", `/admin/p/${p.slug}/media/${up.json.data.id}`)).json.data.alt_draft).toEqual({});
  });

  test("over MCP with the SDK's Client", async () => {
    const h = m.h;
    const p = await seedProject(h);
    await h.request("POST", `/admin/p/${p.slug}/ai/providers`, { body: { name: "o", kind: "openai", base_url: vendors.base("ok"), api_key: "sk-describe-test-1234", is_default: true } });
    const up = await uploadForm(h, p.slug, await jpegWithGps(640, 480), "small.jpg");
    const { token } = await m.token(p.slug, { name: "agent", scopes: ["content:read", "media:write"] });
    const client = await m.connect(token);
    const out = await call(client, "describe_media", { media_id: up.json.data.id });
    expect(Object.keys(out.media.alt_draft)).toEqual(["en"]);
    expect(out.media.alt_draft.en).toStartWith("A test picture (image/jpeg, ");
  });
});
