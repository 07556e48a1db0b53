// Issue 37: the upgrade to working copies and published versions keeps every published page's
// delivered bytes. A database is made by the previous schema (migrations up to 0010) and filled as
// the previous version wrote it; after migration 0011, every delivery answer read from the published
// versions equals the answer the same statements give over the working rows (which is what the
// previous version read: its tables were the working ones, filtered by status), byte for byte.
import { afterAll, describe, expect, test } from "bun:test";
import { runMigrations } from "../db/migrate";
import { nodes as nodesTable } from "../db/schema";
import { PUBLISHED, type Version, WORKING } from "../src/delivery/version";
import { harness, previousSchemaDatabase } from "./helpers";

describe("migration to published versions", async () => {
  const fresh = await previousSchemaDatabase("_drafts");
  const { exec } = fresh;
  const id = () => crypto.randomUUID();
  const project = id();
  const slug = `upgrade-${project.slice(0, 8)}`;
  const [home, blog, post1, post2, post3, hidden, child, archived, draft] = [id(), id(), id(), id(), id(), id(), id(), id(), id()] as const;
  const [b1, b2, b3] = [id(), id(), id()] as const;
  const t = (minutes: number) => `'2026-01-01T10:${String(minutes).padStart(2, "0")}:00Z'`;

  // What the previous version wrote: pages in every status, blocks, translations published and draft,
  // a published page under a draft parent (hidden), an archived page, a collection with entries.
  await exec(`insert into projects (id, slug, name, default_locale, locales, public_base_url) values ('${project}', '${slug}', 'Upgrade', 'en', '["en","fr"]', 'https://upgrade.example')`);
  const node = (nid: string, parent: string | null, nslug: string, path: string, title: string, status: string, minute: number, extra = "") =>
    exec(`insert into nodes (id, project_id, parent_id, slug, path, type, title, status, seo, fields, revision, published_at, created_at, updated_at${extra ? ", position" : ""})
      values ('${nid}', '${project}', ${parent ? `'${parent}'` : "null"}, '${nslug}', '${path}', '${nslug === "blog" ? "collection" : "page"}', '${title}', '${status}',
        '{"description":"About ${title}"}', '{"tagline":"${title} tagline"}', 3, ${status === "published" ? t(minute) : "null"}, ${t(minute)}, ${t(minute + 1)}${extra ? `, ${extra}` : ""})`);
  await node(home, null, "home", "home", "Home", "published", 1);
  await node(blog, null, "blog", "blog", "Blog", "published", 2);
  await node(post1, blog, "one", "blog/one", "One", "published", 3);
  await node(post2, blog, "two", "blog/two", "Two", "published", 5);
  await node(post3, blog, "three", "blog/three", "Three", "draft", 7);
  await node(hidden, null, "hidden", "hidden", "Hidden", "draft", 9);
  await node(child, hidden, "child", "hidden/child", "Child", "published", 11);
  await node(archived, null, "archived", "archived", "Archived", "archived", 13);
  await node(draft, null, "draft", "draft", "Draft", "draft", 15);
  await exec(`insert into blocks (id, node_id, type, "order", data) values
    ('${b1}', '${home}', 'hero', 0, '{"title":"Hello"}'), ('${b2}', '${home}', 'text', 1, '{"text":"Body"}'), ('${b3}', '${post1}', 'text', 0, '{"text":"Post"}')`);
  await exec(`insert into translations (id, project_id, node_id, locale, meta, blocks, fields, status, created_at, updated_at) values
    ('${id()}', '${project}', '${home}', 'fr', '{"title":"Accueil","slug":"accueil","description":"Bienvenue"}', '{"${b1}":{"title":"Bonjour"}}', '{"tagline":"fr"}', 'published', ${t(20)}, ${t(21)}),
    ('${id()}', '${project}', '${blog}', 'fr', '{"title":"Journal","slug":"journal"}', '{}', '{}', 'published', ${t(22)}, ${t(23)}),
    ('${id()}', '${project}', '${post1}', 'fr', '{"title":"Un","slug":"un"}', '{}', '{}', 'published', ${t(24)}, ${t(25)}),
    ('${id()}', '${project}', '${post2}', 'fr', '{"title":"Deux (brouillon)","slug":"deux"}', '{}', '{}', 'draft', ${t(26)}, ${t(27)})`);

  const READS = [
    "/nodes/by-path/home",
    "/nodes/by-path/accueil?locale=fr",
    `/nodes/${home}`,
    `/nodes/${home}?locale=fr`,
    `/translations/nodes/${home}?locale=fr`,
    `/translations/nodes/${post2}?locale=fr`,
    "/nodes/by-path/blog",
    "/nodes/by-path/journal/un?locale=fr",
    "/nodes/by-path/blog/one",
    "/nodes/by-path/blog/two",
    "/nodes/by-path/blog/three",
    "/nodes/by-path/hidden/child",
    "/nodes/by-path/archived",
    "/nodes/by-path/draft",
    "/entries?collection=blog",
    "/entries?collection=blog&sort=title",
    "/nodes",
    "/sitemap.xml",
    "/robots.txt",
  ];

  /** Every answer, read by a new app (nothing cached) from `version`'s tables. */
  const readAll = async (version: Version): Promise<Record<string, string>> => {
    const saved = { ...PUBLISHED };
    Object.assign(PUBLISHED, version);
    try {
      const h = await harness({ DELIVERY_CACHE_ENTRIES: "0" }, { db: fresh.handle.db, dbHandle: fresh.handle });
      const out: Record<string, string> = {};
      for (const path of READS) {
        const res = await h.app.handle(new Request(`http://localhost/api/p/${slug}${path}`, { headers: { "accept-encoding": "identity" } }));
        out[path] = `${res.status} ${res.headers.get("content-type")} ${res.headers.get("etag")} ${await res.text()}`;
      }
      return out;
    } finally {
      Object.assign(PUBLISHED, saved);
    }
  };
  afterAll(() => {
    // Never leave the module pointed elsewhere, whatever failed.
    expect(PUBLISHED.table).not.toBe(nodesTable);
  });

  test("the previous schema has no published versions", async () => {
    const r = (await exec("select count(*)::int as n from information_schema.tables where table_name = 'published_nodes'")) as { rows?: { n: number }[] } & { n: number }[];
    expect((r.rows ?? r)[0]?.n).toBe(0);
  });

  test("after the upgrade every answer is the one the previous version gave, byte for byte", async () => {
    await runMigrations(fresh.handle);
    const previous = await readAll(WORKING);
    const upgraded = await readAll(PUBLISHED);
    // The reads reach real pages: published ones answer, hidden ones do not.
    expect(previous["/nodes/by-path/home"]).toStartWith("200 ");
    expect(previous["/nodes/by-path/journal/un?locale=fr"]).toStartWith("200 ");
    expect(previous["/nodes/by-path/hidden/child"]).toStartWith("404 ");
    expect(previous["/nodes/by-path/blog/three"]).toStartWith("404 ");
    expect(previous[`/translations/nodes/${post2}?locale=fr`]).toStartWith("404 ");
    expect(previous["/sitemap.xml"]).toContain("https://upgrade.example/fr/journal/un");
    expect(upgraded).toEqual(previous);
  });

  test("published nodes got a published version with their blocks and published translations; drafts got none; a draft parent of a published page a tombstone", async () => {
    const rowsOf = async (q: string) => {
      const r = (await exec(q)) as { rows?: Record<string, unknown>[] } & Record<string, unknown>[];
      return r.rows ?? r;
    };
    const published = await rowsOf(`select id, status, path, revision from published_nodes where project_id = '${project}' order by path`);
    expect(published).toEqual([
      { id: blog, status: "published", path: "blog", revision: 3 },
      { id: post1, status: "published", path: "blog/one", revision: 3 },
      { id: post2, status: "published", path: "blog/two", revision: 3 },
      { id: hidden, status: "draft", path: "hidden", revision: 3 },
      { id: child, status: "published", path: "hidden/child", revision: 3 },
      { id: home, status: "published", path: "home", revision: 3 },
    ]);
    expect((await rowsOf(`select count(*)::int as n from published_blocks where node_id in ('${home}', '${post1}')`))[0]).toEqual({ n: 3 });
    expect(await rowsOf(`select node_id, locale from published_translations where project_id = '${project}' order by node_id`)).toEqual(
      [home, blog, post1].sort().map((n) => ({ node_id: n, locale: "fr" })),
    );
    expect(await rowsOf(`select count(*)::int as n from nodes where project_id = '${project}' and changed`)).toEqual([{ n: 0 }]);
  });
});
