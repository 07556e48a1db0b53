// CI: the single executable, from the clone's own build. Run with `bun .ci/binary.ts`.
// 1. starts ./dist/content-service with no environment in a temporary directory (embedded
//    database), checks readiness, the demo project's delivery, /swagger/json and /mcp 401,
//    writes through the admin API, uploads a JPEG and a PNG and renders WebP variants of them
//    (sharp and libvips embedded), restarts it and checks the data survived;
// 2. with CI_POSTGRES_URL (a server URL without database), starts two instances on two ports
//    against one fresh database and checks they act as one service (see scale-checks.ts).
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { check, start } from "./instance";
import { scaleChecks } from "./scale-checks";

const root = resolve(import.meta.dir, "..");

async function embeddedRun(): Promise<void> {
  const dir = mkdtempSync(join(tmpdir(), "cms-bin-"));
  try {
    const first = await start({}, dir);
    const key = /cms_ak_[a-z2-7]+/.exec(first.output())?.[0];
    check(key, "first start printed a root admin key");
    const auth = { authorization: `Bearer ${key}` };
    check((await fetch(`${first.url}/readyz`)).status === 200, "/readyz is 200");
    const home = await fetch(`${first.url}/api/p/demo/nodes/by-path/home`);
    check(home.status === 200 && (await home.json()).data.title === "Welcome", "demo project is delivered");
    const swagger = await fetch(`${first.url}/swagger/json`);
    check(swagger.status === 200 && (await swagger.json()).openapi, "/swagger/json is an OpenAPI document");
    await explorerChecks(first.url);
    const mcp = await fetch(`${first.url}/mcp`, { method: "POST", headers: { "content-type": "application/json", accept: "application/json, text/event-stream" }, body: "{}" });
    check(mcp.status === 401 && (mcp.headers.get("www-authenticate") ?? "").includes("resource_metadata="), "/mcp without a token is 401 with resource metadata");
    const created = await fetch(`${first.url}/admin/p/demo/nodes`, {
      method: "POST",
      headers: { ...auth, "content-type": "application/json" },
      body: JSON.stringify({ slug: "survivor", title: "Survives restarts" }),
    });
    check(created.status === 201, "a node was written through the admin API");
    await imageChecks(first.url, auth);
    check((await first.stop()) === 0, "SIGTERM exits 0");
    const second = await start({}, dir);
    check(!/cms_ak_/.test(second.output()), "second start does not bootstrap again");
    const again = await fetch(`${second.url}/admin/p/demo/nodes?path_prefix=survivor`, { headers: auth });
    check(
      (await again.json()).data.some((n: { slug: string }) => n.slug === "survivor"),
      "the data survived the restart",
    );
    check((await second.stop()) === 0, "second instance exits 0");
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/** sharp works inside the binary (libvips embedded, src/platform/sharp-bun.ts): a raster upload is measured and a variant rendered. */
async function imageChecks(url: string, auth: Record<string, string>): Promise<void> {
  const sharp = (await import("sharp")).default;
  for (const [name, bytes] of [
    [
      "photo.jpg",
      await sharp({ create: { width: 640, height: 480, channels: 3, background: "#c03020" } })
        .jpeg()
        .toBuffer(),
    ],
    [
      "logo.png",
      await sharp({ create: { width: 400, height: 300, channels: 4, background: "#2050c080" } })
        .png()
        .toBuffer(),
    ],
  ] as const) {
    const form = new FormData();
    form.set("file", new Blob([new Uint8Array(bytes)]), name);
    form.set("alt", "A test image");
    const up = await fetch(`${url}/admin/p/demo/media`, { method: "POST", headers: auth, body: form });
    const { data } = (await up.json()) as { data: { url: string; width: number; height: number; placeholder: string | null } };
    const [w, h] = name === "photo.jpg" ? [640, 480] : [400, 300];
    check(up.status === 201 && data.width === w && data.height === h && data.placeholder !== null, `the binary measures an uploaded ${name} (201, ${w}×${h}, a placeholder)`);
    const variant = await fetch(`${data.url}&w=320&fm=webp`.replace(/^https?:\/\/[^/]+/, url));
    const webp = new Uint8Array(await variant.arrayBuffer());
    const meta = await sharp(webp).metadata();
    check(variant.status === 200 && variant.headers.get("content-type") === "image/webp" && meta.format === "webp" && meta.width === 320, `the binary renders a 320-px WebP variant of ${name}`);
  }
}

/** The explorer's page and its pinned script come from inside the binary, under a CSP. */
async function explorerChecks(url: string): Promise<void> {
  const page = await fetch(`${url}/swagger`);
  const html = await page.text();
  check(page.status === 200 && (page.headers.get("content-security-policy") ?? "").includes("script-src 'self';") && !/https?:/.test(html), "/swagger is served with a CSP and no remote script");
  const pkg = JSON.parse(readFileSync(join(root, "node_modules", "@scalar", "api-reference", "package.json"), "utf8")) as { version: string };
  const shipped = readFileSync(join(root, "node_modules", "@scalar", "api-reference", "dist", "browser", "standalone.js"));
  const bundle = await fetch(`${url}/swagger/assets/scalar-api-reference-${pkg.version}.js`, { headers: { "accept-encoding": "identity" } });
  check(bundle.status === 200 && Buffer.from(await bundle.arrayBuffer()).equals(shipped), `the explorer's script (@scalar/api-reference ${pkg.version}) is embedded in the binary, byte for byte`);
}

if (import.meta.main) {
  await embeddedRun();
  if (process.env.CI_POSTGRES_URL) await scaleChecks(process.env.CI_POSTGRES_URL);
  console.log("binary checks passed");
}
