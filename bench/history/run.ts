// Storage benchmark (issue 25): how much the revisions table grows with 10,000 edits of one page,
// stored as full snapshots, and what deltas (the JSON Pointer diff of each edit) would take
// instead. Runs the real write path (src/content/service.ts → contentWrite → recording) against a
// PostgreSQL database of its own; sizes are pg_total_relation_size (table, TOAST and indexes).
// Usage: bun bench/history/run.ts   (BENCH_PG, BENCH_EDITS; see bench/README.md)
import { sql } from "drizzle-orm";
import postgres from "postgres";
import { openDb } from "../../db/client";
import { runMigrations } from "../../db/migrate";
import { createNode, setNodeBlocks, updateNode } from "../../src/content/service";
import { diffJson } from "../../src/lib/diff";
import { rows } from "../../src/lib/json";
import { createProject } from "../../src/projects/service";
import { systemWrite } from "../../src/write/context";

const PG = process.env.BENCH_PG ?? "postgres://postgres@127.0.0.1:5432";
const DB_NAME = process.env.BENCH_DB ?? "cms_bench_history";
const EDITS = Number(process.env.BENCH_EDITS ?? 10_000);
const ROOT = { kind: "admin_key", keyId: "bench", scopes: [], projectIds: null } as const;

const admin = postgres(`${PG}/postgres`, { max: 1, onnotice: () => {} });
await admin.unsafe(`drop database if exists ${DB_NAME}`);
await admin.unsafe(`create database ${DB_NAME}`);
await admin.end();
const handle = await openDb({ databaseUrl: `${PG}/${DB_NAME}`, dataDir: "/tmp", poolSize: 2 });
await runMigrations(handle);
const db = handle.db;

// A realistic page: a title, SEO, a few fields and six blocks of prose (about 3 KB of content).
const para = (i: number) => `Paragraph ${i}. ${"Lorem ipsum dolor sit amet, consectetur adipiscing elit, sed do eiusmod tempor incididunt ut labore. ".repeat(4)}`;
const project = await createProject(db, { slug: "bench", name: "Bench", default_locale: "en", locales: ["en"] }, ROOT, new Date());
const node = await createNode(
  db,
  systemWrite(),
  project,
  {
    slug: "page",
    title: "A page",
    seo: { description: "A page about things" },
    fields: { author: "someone", tags: ["a", "b"] },
    blocks: [0, 1, 2, 3, 4, 5].map((i) => ({ type: "text", data: { body: para(i) } })),
  },
  new Date(),
);
const size = async (): Promise<number> => Number(rows<{ s: string }>(await db.execute(sql`select pg_total_relation_size('revisions') as s`))[0]?.s ?? 0);
const before = await size();
const started = performance.now();
let deltaBytes = 0;
let previous: unknown = null;
for (let i = 1; i <= EDITS; i++) {
  // Alternate what an editor does: retitle, touch one block's text, change a field.
  if (i % 3 === 0) {
    const blocks = node.blocks.map((b, k) => ({ id: b.id, type: b.type, data: { body: k === i % 6 ? `${para(k)} (edit ${i})` : para(k) } }));
    await setNodeBlocks(db, systemWrite(), project, node.id, blocks, new Date());
  } else if (i % 3 === 1) await updateNode(db, systemWrite(), project, node.id, { title: `A page, edit ${i}` }, new Date());
  else await updateNode(db, systemWrite(), project, node.id, { fields: { author: "someone", tags: ["a", "b", `t${i % 10}`] } }, new Date());
  if (i % 500 === 0) console.log(`[bench] ${i} edits`);
}
const seconds = (performance.now() - started) / 1000;
const after = await size();
// What deltas would hold: each revision's diff against the one before, as JSON.
const snaps = rows<{ snapshot: unknown }>(await db.execute(sql`select snapshot from revisions where node_id = ${node.id} order by number`));
let fullBytes = 0;
for (const r of snaps) {
  const text = JSON.stringify(r.snapshot);
  fullBytes += text.length;
  if (previous !== null) deltaBytes += JSON.stringify(diffJson(previous, r.snapshot)).length;
  previous = r.snapshot;
}
const out = {
  at: new Date().toISOString(),
  edits: EDITS,
  revisions: snaps.length,
  snapshot_json_bytes_avg: Math.round(fullBytes / snaps.length),
  delta_json_bytes_avg: Math.round(deltaBytes / Math.max(1, snaps.length - 1)),
  revisions_table_growth_bytes: after - before,
  bytes_per_revision_on_disk: Math.round((after - before) / EDITS),
  edits_per_s: Math.round(EDITS / seconds),
};
console.log(JSON.stringify(out, null, 2));
await handle.close();
