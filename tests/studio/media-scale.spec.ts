// The media library at 10,000 items, in Chromium: the DOM holds only the tiles in view; End,
// PageDown and the wheel each reach the last item (reading only the pages in view); search by name
// and the type filter still answer; axe passes and the CSP is never violated.
//
// Seeding: 10,000 uploads over the admin API take about two minutes here (a project takes at most
// two uploads at once, ~12 ms each on PGlite), so two files are uploaded through the API (a PDF and
// a PNG: rows, stored bytes and variants the service made itself) and their rows are copied
// 9,998 times in one INSERT … SELECT … generate_series, each copy its own id, name and time (what
// an upload of the same bytes writes, without its activity entry and event). On PostgreSQL the copy
// goes to the suite's database while the service runs. An embedded PGlite is opened by one process
// at a time, so on PGlite the spec runs a service of its own (tests/studio/service.ts) on a data
// directory: seeded through its API, stopped, copied into with PGlite from this process, started
// again on the same directory.
import assert from "node:assert/strict";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, describe, test } from "node:test";
import { PGlite } from "@electric-sql/pglite";
import type { Browser, Page } from "playwright-core";
import postgres from "postgres";
import sharp from "sharp";
import { axeViolations, launch, openPage, signInAt, URL_BASE } from "./harness.ts";
import { type Service, startService } from "./service.ts";

const TOTAL = 10_000;
/** The copies: every tenth a PNG (photo-NNNNN.png), the others PDFs (scan-NNNNN.pdf); the last in the grid's order is the oldest. */
const COPIES = TOTAL - 2;
const LAST = `scan-${String(COPIES).padStart(5, "0")}.pdf`;

const COPY_SQL = `
  insert into media (id, project_id, hash, type, filename, size, width, height, title, alt, alt_draft, focal_x, focal_y, placeholder, dominant_color, created_at, updated_at)
  select gen_random_uuid(), m.project_id, m.hash, m.type,
         case when g % 10 = 0 then 'photo-' else 'scan-' end || lpad(g::text, 5, '0') || case when g % 10 = 0 then '.png' else '.pdf' end,
         m.size, m.width, m.height, m.title, m.alt, m.alt_draft, m.focal_x, m.focal_y, m.placeholder, m.dominant_color,
         m.created_at - make_interval(secs => g), m.created_at - make_interval(secs => g)
  from generate_series(1, ${COPIES}) g
  join media m on m.id = case when g % 10 = 0 then $2::uuid else $1::uuid end`;

interface Seeded {
  base: string;
  slug: string;
  person: { email: string; password: string };
}

async function call(base: string, key: string, method: string, path: string, body?: unknown): Promise<any> {
  const isForm = body instanceof FormData;
  const res = await fetch(base + path, {
    method,
    headers: { authorization: `Bearer ${key}`, ...(body === undefined || isForm ? {} : { "content-type": "application/json" }) },
    body: body === undefined ? undefined : isForm ? body : JSON.stringify(body),
  });
  const json = await res.json();
  assert.ok(res.status < 300, `${method} ${path}: ${res.status} ${JSON.stringify(json)}`);
  return json.data;
}

/** A project with an editor and the two uploads the copies are made from; answers their ids. */
async function seedThroughApi(base: string, key: string): Promise<Seeded & { pdf: string; png: string }> {
  const slug = `scale-${Date.now().toString(36)}`;
  const project = await call(base, key, "POST", "/admin/projects", { slug, name: "Ten thousand files", default_locale: "en", locales: ["en"] });
  const person = { email: `scale-${crypto.randomUUID()}@example.com`, password: `pw-${crypto.randomUUID()}` };
  const user = await call(base, key, "POST", "/admin/users", { ...person, role: "member" });
  await call(base, key, "PUT", `/admin/p/${project.id}/members/${user.id}`, { role: "editor" });
  const upload = async (name: string, type: string, bytes: Uint8Array<ArrayBuffer>): Promise<string> => {
    const form = new FormData();
    form.append("file", new Blob([bytes], { type }), name);
    return (await call(base, key, "POST", `/admin/p/${slug}/media`, form)).id;
  };
  const pdf = await upload("seed.pdf", "application/pdf", new TextEncoder().encode("%PDF-1.4\n1 0 obj <<>> endobj\ntrailer <<>>\n%%EOF\n"));
  const png = await upload(
    "seed.png",
    "image/png",
    new Uint8Array(
      await sharp({ create: { width: 24, height: 24, channels: 3, background: "#4a7" } })
        .png()
        .toBuffer(),
    ),
  );
  return { base, slug, person, pdf, png };
}

describe("the media library at 10,000 items", () => {
  let browser: Browser;
  let seeded: Seeded;
  let own: { service: Service; dir: string } | null = null;
  before(async () => {
    browser = await launch();
    const started = performance.now();
    const databaseUrl = process.env.DATABASE_URL;
    if (databaseUrl) {
      const s = await seedThroughApi(URL_BASE, process.env.STUDIO_ADMIN_KEY ?? "");
      const sql = postgres(databaseUrl, { max: 1, onnotice: () => {} });
      try {
        await sql.unsafe(COPY_SQL, [s.pdf, s.png]);
      } finally {
        await sql.end();
      }
      seeded = s;
    } else {
      const dir = mkdtempSync(join(tmpdir(), "studio-scale-"));
      let service = await startService({ env: { DATA_DIR: dir } });
      const s = await seedThroughApi(service.url, service.adminKey);
      await service.stop();
      const db = new PGlite({ dataDir: dir });
      try {
        await db.query(COPY_SQL, [s.pdf, s.png]);
      } finally {
        await db.close();
      }
      service = await startService({ env: { DATA_DIR: dir } });
      own = { service, dir };
      seeded = { ...s, base: service.url };
    }
    console.log(`seeded ${TOTAL} media items in ${Math.round(performance.now() - started)} ms (${databaseUrl ? "PostgreSQL" : "PGlite, a service of the spec's own"})`);
  });
  after(async () => {
    await browser.close();
    if (own) {
      await own.service.stop();
      rmSync(own.dir, { recursive: true, force: true });
    }
  });

  /** The focused row's file name (the tile's second line). */
  const focusedName = (page: Page): Promise<string> => page.evaluate(() => (document.activeElement?.closest('[role="row"]')?.querySelector(".media-tile-name")?.textContent ?? "").trim());
  const rowsInDom = (page: Page): Promise<number> => page.getByRole("grid", { name: "Media library" }).getByRole("row").count();

  test("only a window of tiles in the DOM; End, PageDown and the wheel reach the last item; search by name and type", async () => {
    const context = await browser.newContext({ viewport: { width: 1400, height: 1000 } });
    const { page, problems } = await openPage(context);
    await signInAt(page, seeded.base, seeded.person.email, seeded.person.password, `/studio/p/${seeded.slug}/media`);
    const status = page.getByRole("status").filter({ hasText: / files?/ });
    await status.filter({ hasText: /^10,000 files$/ }).waitFor();
    const grid = page.getByRole("grid", { name: "Media library" });
    await grid.getByRole("row", { name: /seed\.png/ }).waitFor();
    const first = await rowsInDom(page);
    assert.ok(first > 10 && first < 100, `only the tiles in view are in the DOM (${first} of ${TOTAL})`);
    assert.deepEqual(await axeViolations(page), []);

    // End: from the first tile to the last, its page read on arrival.
    await grid.getByRole("row", { name: /seed\.png/ }).focus();
    assert.equal(await focusedName(page), "seed.png");
    let t0 = performance.now();
    await page.keyboard.press("End");
    await page.waitForFunction((name) => document.activeElement?.closest('[role="row"]')?.textContent?.includes(name), LAST);
    const endMs = Math.round(performance.now() - t0);
    assert.ok((await rowsInDom(page)) < 100, "still a window at the end");
    assert.equal(await grid.getByRole("row", { name: new RegExp(LAST.replace(".", "\\.")) }).isVisible(), true);
    // Home, then PageDown: each moves a screen further down, tiles read as they come into view.
    await page.keyboard.press("Home");
    await page.waitForFunction(
      () => document.activeElement?.closest('[role="row"]')?.textContent?.includes("seed.pdf") || document.activeElement?.closest('[role="row"]')?.textContent?.includes("seed.png"),
    );
    const number = async () => Number(/(\d{5})/.exec(await focusedName(page))?.[1] ?? "0");
    let previous = 0;
    for (let i = 0; i < 3; i++) {
      await page.keyboard.press("PageDown");
      await page.waitForFunction((n) => {
        const m = /(\d{5})/.exec(document.activeElement?.closest('[role="row"]')?.querySelector(".media-tile-name")?.textContent ?? "");
        return m !== null && Number(m[1]) > n;
      }, previous);
      const now = await number();
      assert.ok(now > previous, `PageDown moves on (${previous} → ${now})`);
      previous = now;
    }
    // PageDown from near the end reaches the last tile.
    await page.keyboard.press("End");
    for (let i = 0; i < 5; i++) await page.keyboard.press("PageUp");
    assert.notEqual(await focusedName(page), LAST);
    for (let i = 0; i < 10 && (await focusedName(page)) !== LAST; i++) await page.keyboard.press("PageDown");
    await page.waitForFunction((name) => document.activeElement?.closest('[role="row"]')?.textContent?.includes(name), LAST);
    assert.ok((await rowsInDom(page)) < 100);

    // The wheel: from the top to the bottom of the scroll box, the last tile read and drawn.
    await page.keyboard.press("Home");
    await grid.getByRole("row", { name: /seed\.png/ }).waitFor();
    const box = await grid.boundingBox();
    assert.ok(box);
    await page.mouse.move(box.x + box.width / 2, box.y + box.height / 2);
    t0 = performance.now();
    let wheels = 0;
    for (; wheels < 200; wheels++) {
      const atEnd = await grid.evaluate((el) => el.scrollTop + el.clientHeight >= el.scrollHeight - 1);
      if (atEnd) break;
      await page.mouse.wheel(0, 40_000);
    }
    await grid.getByRole("row", { name: new RegExp(LAST.replace(".", "\\.")) }).waitFor();
    console.log(`End reached the last of ${TOTAL} tiles in ${endMs} ms; ${wheels} wheel turns of 40,000 px in ${Math.round(performance.now() - t0)} ms`);
    assert.ok((await rowsInDom(page)) < 100);
    assert.deepEqual(await axeViolations(page), []);

    // Search by name, then by type.
    await page.getByRole("searchbox", { name: "Search media" }).fill("photo-0999");
    await status.filter({ hasText: /^1 file matching “photo-0999”$/ }).waitFor();
    await grid.getByRole("row", { name: /photo-09990\.png/ }).waitFor();
    assert.equal(await rowsInDom(page), 1);
    await page.getByRole("searchbox", { name: "Search media" }).fill("");
    await status.filter({ hasText: /^10,000 files$/ }).waitFor();
    await page.getByRole("button", { name: /Type/ }).click();
    await page.getByRole("option", { name: "Images" }).click();
    await status.filter({ hasText: /^1,000 files$/ }).waitFor();
    await grid.getByRole("row", { name: /seed\.png/ }).waitFor();
    assert.equal(await grid.getByRole("row", { name: /\.pdf/ }).count(), 0);
    await page.getByRole("button", { name: /Type/ }).click();
    await page.getByRole("option", { name: "PDF" }).click();
    await status.filter({ hasText: /^9,000 files$/ }).waitFor();
    await grid.focus();
    await page.keyboard.press("End");
    await page.waitForFunction((name) => document.activeElement?.closest('[role="row"]')?.textContent?.includes(name), LAST);
    assert.deepEqual(problems, []);
    await context.close();
  });
});
