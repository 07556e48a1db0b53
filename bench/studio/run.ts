// The studio's speed budget (issue 38), measured in Debian's Chromium on loopback against the
// service in its default configuration (embedded PGlite, bun src/main.ts):
//   shell      the JavaScript and CSS the page loads before any editor, gzip bytes (budget 250 KB)
//   first      navigation start → the content tree's first item on screen, signed in, nothing cached (budget 1.5 s)
//   tree       a project of 10,000 nodes (100 sections of 100): opening it, and expanding a section (budget 1 s)
//   typing     a node of 200 blocks: keydown → the next frame painted, 60 keystrokes, p50/p95 (budget p95 50 ms)
// Usage: node --experimental-strip-types bench/studio/run.ts   (Node 22; writes bench/studio/results.json)
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { gzipSync } from "node:zlib";
import { chromium, type Page } from "playwright-core";
import { root, startService } from "../../tests/studio/service.ts";

const SECTIONS = Number(process.env.BENCH_SECTIONS ?? 100);
const PER_SECTION = Number(process.env.BENCH_PER_SECTION ?? 99);
const BLOCKS = 200;
const KEYS = 60;

const quantile = (xs: number[], q: number): number => {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.floor(q * s.length))] ?? Number.NaN;
};
const ms = (x: number): number => Math.round(x * 10) / 10;

async function main(): Promise<void> {
  const service = await startService();
  const { url, adminKey } = service;
  const call = async (method: string, path: string, body?: unknown): Promise<any> => {
    const r = await fetch(url + path, { method, headers: { authorization: `Bearer ${adminKey}`, "content-type": "application/json" }, body: body === undefined ? undefined : JSON.stringify(body) });
    const j = await r.json();
    if (r.status >= 300) throw new Error(`${method} ${path}: ${r.status} ${JSON.stringify(j)}`);
    return j.data;
  };
  try {
    // A project of SECTIONS × (1 + PER_SECTION) nodes and a page of BLOCKS blocks.
    const seedStart = performance.now();
    await call("POST", "/admin/projects", { slug: "bench", name: "Bench", default_locale: "en", locales: ["en", "fr"] });
    await call("PUT", "/admin/p/bench/model", {
      block_types: [{ name: "text", schema: { type: "object", properties: { heading: { type: "string", maxLength: 200 }, body: { type: "string", format: "markdown" } } } }],
      node_types: [{ name: "page", fields: { type: "object", properties: { summary: { type: "string", maxLength: 300 } } } }],
    });
    const big = await call("POST", "/admin/p/bench/nodes", {
      slug: "aaa-long-page",
      title: "A long page",
      blocks: Array.from({ length: BLOCKS }, (_, i) => ({ type: "text", data: { heading: `Heading ${i + 1}`, body: `Paragraph ${i + 1} with **some** text.` } })),
    });
    const pool = 8;
    for (let s = 0; s < SECTIONS; s++) {
      const section = await call("POST", "/admin/p/bench/nodes", { slug: `section-${String(s).padStart(3, "0")}`, title: `Section ${s}` });
      const todo = Array.from({ length: PER_SECTION }, (_, i) => i);
      await Promise.all(
        Array.from({ length: pool }, async () => {
          for (let i = todo.shift(); i !== undefined; i = todo.shift()) await call("POST", "/admin/p/bench/nodes", { slug: `page-${i}`, title: `Page ${s}.${i}`, parent_id: section.id });
        }),
      );
    }
    const seeded = (performance.now() - seedStart) / 1000;
    const nodes = 1 + SECTIONS * (1 + PER_SECTION);

    // Shell: what index.html loads before any editor.
    const html = await (await fetch(`${url}/studio/`)).text();
    const initial = [...html.matchAll(/(?:src|href)="(\/studio\/assets\/[^"]+\.(?:js|css))"/g)].map((m) => m[1] as string);
    let shellGzip = 0;
    let shellRaw = 0;
    for (const a of initial) {
      const bytes = new Uint8Array(await (await fetch(url + a)).arrayBuffer());
      shellRaw += bytes.length;
      shellGzip += gzipSync(bytes, { level: 9 }).length;
    }

    const browser = await chromium.launch({
      executablePath: process.env.CHROMIUM_PATH ?? "/usr/bin/chromium",
      args: ["--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run", "--disable-background-networking", "--disable-component-update", "--disable-sync"],
    });
    const context = await browser.newContext({ viewport: { width: 1440, height: 900 } });
    const page = await context.newPage();
    await page.goto(`${url}/studio/`);
    await page.getByLabel("Email").fill(service.env.ADMIN_EMAIL as string);
    await page.getByLabel("Password").fill(service.env.ADMIN_PASSWORD as string);
    await page.getByRole("button", { name: "Sign in" }).click();
    await page.getByRole("button", { name: "Sign out" }).waitFor();

    // First screen: a new browser context each time (nothing cached), signed in by the session cookie.
    const cookies = await context.cookies();
    const firsts: number[] = [];
    for (let i = 0; i < 5; i++) {
      const cold = await browser.newContext({ viewport: { width: 1440, height: 900 } });
      await cold.addCookies(cookies);
      const p = await cold.newPage();
      await p.goto(`${url}/studio/p/bench`, { waitUntil: "commit" });
      await p
        .getByRole("treeitem")
        .first()
        .waitFor({ timeout: 10_000 })
        .catch(async (e) => {
          await p.screenshot({ path: "/tmp/bench-fail.png" });
          throw e;
        });
      firsts.push(await p.evaluate(() => performance.now()));
      await cold.close();
    }
    await page.goto(`${url}/studio/p/bench`);
    await page.getByRole("treeitem").first().waitFor();
    const expands: number[] = [];
    for (let s = 1; s <= 5; s++) {
      const item = page.getByRole("treeitem", { name: new RegExp(`^Section ${s}\\b`) }).first();
      await item.focus();
      const t0 = await page.evaluate(() => performance.now());
      await page.keyboard.press("ArrowRight");
      await page
        .getByRole("treeitem", { name: new RegExp(`^Page ${s}\\.0\\b`) })
        .first()
        .waitFor();
      expands.push((await page.evaluate(() => performance.now())) - t0);
    }

    // Typing into a field of the 200-block page.
    await page.goto(`${url}/studio/p/bench/nodes/${big.id}`);
    const field = page.getByRole("group", { name: `text ${BLOCKS}` }).getByLabel("heading");
    await field.waitFor();
    await field.click();
    await page.keyboard.press("End");
    await installKeyTimer(page);
    for (let i = 0; i < KEYS; i++) await page.keyboard.type(String.fromCharCode(97 + (i % 26)), { delay: 30 });
    const keys: number[] = await page.evaluate(() => (globalThis as unknown as { __keys: number[] }).__keys);
    await browser.close();

    const results = {
      date: new Date().toISOString(),
      nodes,
      blocks: BLOCKS,
      seed_seconds: Math.round(seeded),
      shell: { files: initial.length, raw_bytes: shellRaw, gzip_bytes: shellGzip, budget_gzip_bytes: 250 * 1024 },
      first_screen_ms: { median: ms(quantile(firsts, 0.5)), max: ms(Math.max(...firsts)), budget: 1500 },
      tree_expand_ms: { median: ms(quantile(expands, 0.5)), max: ms(Math.max(...expands)), budget: 1000 },
      typing_ms: { keystrokes: keys.length, p50: ms(quantile(keys, 0.5)), p95: ms(quantile(keys, 0.95)), max: ms(Math.max(...keys)), budget_p95: 50 },
    };
    console.log(JSON.stringify(results, null, 2));
    writeFileSync(join(root, "bench/studio/results.json"), `${JSON.stringify(results, null, 2)}\n`);
  } finally {
    await service.stop();
  }
}

/** keydown → the frame after the next one has begun (the one that painted the key's effect), per key. */
async function installKeyTimer(page: Page): Promise<void> {
  await page.evaluate(() => {
    const g = globalThis as unknown as { __keys: number[] };
    g.__keys = [];
    document.addEventListener(
      "keydown",
      (e) => {
        const start = e.timeStamp;
        requestAnimationFrame(() => requestAnimationFrame(() => g.__keys.push(performance.now() - start)));
      },
      { capture: true },
    );
  });
}

await main();
