// Types for frontends (issue 24): the TypeScript and JSON Schema of a project's delivery answers,
// generated from its content model, served to admins and checked with the real compiler against a
// frontend module and against what delivery really answers.
import { beforeAll, describe, expect, test } from "bun:test";
import { spawnSync } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Ajv2020 } from "ajv/dist/2020.js";
import addFormats from "ajv-formats";
import { createApp } from "../src/app";
import { runCli } from "../src/cli";
import { loadConfig } from "../src/config";
import { createAdminKey } from "../src/keys/service";
import { ADMIN_SCOPES } from "../src/lib/scopes";
import { compiledModel } from "../src/model/cache";
import { modelTypeScript } from "../src/model/types";
import { openRuntime } from "../src/runtime";
import { harness, type TestHarness, uniqueSlug } from "./helpers";
import { setModel } from "./model.helpers";
import { DEMO_LIKE_MODEL, setFields } from "./types.helpers";

const TSC = join(import.meta.dir, "..", "node_modules", ".bin", "tsc");

/** Runs the real compiler over `files` (name → source) in a fresh directory; answers its exit code and output. */
function typeCheck(files: Record<string, string>): { code: number | null; output: string } {
  const dir = mkdtempSync(join(tmpdir(), "cms-types-"));
  try {
    for (const [name, source] of Object.entries(files)) writeFileSync(join(dir, name), source);
    const compilerOptions = { strict: true, noEmit: true, noUncheckedIndexedAccess: true, target: "ES2022", module: "ESNext", moduleResolution: "bundler", lib: ["ES2022", "DOM"], types: [] };
    writeFileSync(join(dir, "tsconfig.json"), JSON.stringify({ compilerOptions, files: Object.keys(files) }));
    const run = spawnSync(TSC, ["-p", dir], { encoding: "utf8", timeout: 60_000 });
    return { code: run.status, output: `${run.stdout}${run.stderr}` };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/** A frontend module: renders a post's blocks (an exhaustive switch) and its byline. */
const FRONTEND = `import type { AnyNode, Block, BlockOfType, EntriesAnswer, NodeAnswer, PostNode } from "./types";
import { isTypedBlock, isTypedNode } from "./types";

export function renderBlock(block: PostNode["blocks"][number]): string {
  switch (block.type) {
    case "hero":
      return \`<h1>\${block.data.heading}</h1>\${block.data.subheading ?? ""}\${block.data.image?.url ?? ""}\`;
    case "text":
      return block.data.body;
    case "image":
      return \`<img src="\${block.data.url}" alt="\${block.data.alt}">\${block.data.caption ?? ""}\`;
    case "call-to-action":
      return \`<a class="\${block.data.style ?? "primary"}" href="\${block.data.href}">\${block.data.label}</a>\`;
    default: {
      const unhandled: never = block;
      return unhandled;
    }
  }
}

export function byline(post: PostNode): string {
  const author: string = post.fields.author;
  const when = new Date(post.fields.date).toISOString();
  const tags: string[] = post.fields.tags ?? [];
  const related = post.fields.related ? \` see \${post.fields.related.path} (\${post.fields.related.type})\` : "";
  return \`\${author}, \${when}, \${post.fields.category}, \${tags.join(" ")}\${related}\`;
}

export function render(answer: NodeAnswer): string {
  const node: AnyNode = answer.data;
  if (!isTypedNode(node)) return node.title;
  switch (node.type) {
    case "post":
      return byline(node) + node.blocks.map(renderBlock).join("");
    case "page":
    case "collection":
      return node.blocks.map((b) => (isTypedBlock(b) ? anyBlock(b) : "")).join("");
  }
}

function anyBlock(b: Block): string {
  const hero: BlockOfType<"hero"> | null = b.type === "hero" ? b : null;
  return hero?.data.heading ?? b.type;
}

export const titles = (list: EntriesAnswer): string[] => list.data.map((e) => \`\${e.title} \${e.updated_at} \${list.total}\`);
`;

describe("the generated types against a frontend module (tsc --noEmit)", () => {
  const types = modelTypeScript(DEMO_LIKE_MODEL, { project: "demo-like", version: 1 });

  test("the frontend module type-checks", () => {
    const run = typeCheck({ "types.ts": types, "frontend.ts": FRONTEND });
    expect(run.output).toBe("");
    expect(run.code).toBe(0);
  });

  const wrong: Array<[string, string, string, RegExp]> = [
    [
      "a field the post type does not declare",
      "const author: string = post.fields.author;",
      "const author: string = post.fields.writer;",
      /frontend\.ts\(\d+,\d+\): error TS2339: Property 'writer' does not exist/,
    ],
    ["the author read as a number", "const author: string = post.fields.author;", "const author: number = post.fields.author;", /error TS2322: Type 'string' is not assignable to type 'number'/],
    ["a block type left out of the switch", 'case "call-to-action":', 'case "no-such-block" as string:', /error TS2322: Type 'CallToActionBlock' is not assignable to type 'never'/],
    ["a hero's data read as a text's", "return block.data.body;", "return block.data.heading;", /error TS2339: Property 'heading' does not exist on type 'TextData'/],
    [
      "a category outside the enum",
      "const when = new Date(post.fields.date).toISOString();",
      'const when = post.fields.category === "sports" ? "" : post.fields.date;',
      /error TS2367: This comparison appears to be unintentional because the types '("news"|"guides"|"releases"| \| )+' and '"sports"' have no overlap/,
    ],
  ];
  for (const [name, from, to, error] of wrong) {
    test(`a module with ${name} fails`, () => {
      expect(FRONTEND).toContain(from);
      const run = typeCheck({ "types.ts": types, "frontend.ts": FRONTEND.replace(from, to) });
      expect(run.code).not.toBe(0);
      expect(run.output).toMatch(error);
    });
  }
});

describe("GET /admin/p/{ref}/model/types.ts and /model/schema.json", () => {
  let h: TestHarness;
  let slug: string;
  let projectId: string;
  const ids: Record<string, string> = {};
  beforeAll(async () => {
    h = await harness();
    slug = uniqueSlug("types");
    const created = await h.request("POST", "/admin/projects", { body: { slug, name: "Types" } });
    projectId = created.json.data.id;
    const node = async (body: Record<string, unknown>): Promise<string> => {
      const res = await h.request("POST", `/admin/p/${slug}/nodes`, { body });
      if (res.status !== 201) throw new Error(`create failed: ${res.status} ${res.text}`);
      const id: string = res.json.data.id;
      const pub = await h.request("POST", `/admin/p/${slug}/nodes/${id}/publish`);
      if (pub.status !== 200) throw new Error(`publish failed: ${pub.status} ${pub.text}`);
      return id;
    };
    ids.blog = await node({ slug: "blog", title: "Blog", type: "collection" });
    ids.about = await node({ slug: "about", title: "About", type: "page", blocks: [{ type: "text", data: { body: "We *write*." } }] });
    ids.post = await node({
      slug: "hello",
      title: "Hello",
      type: "post",
      parent_id: ids.blog,
      blocks: [
        { type: "hero", data: { heading: "Hello", subheading: "a first post" } },
        { type: "text", data: { body: "Some **markdown**." } },
        { type: "image", data: { url: "https://example.com/a.png", alt: "a picture", caption: null } },
        { type: "call-to-action", data: { label: "Read more", href: "https://example.com/more", style: "secondary" } },
      ],
    });
    expect(await setModel(h.deps.db, projectId, DEMO_LIKE_MODEL)).toBe(1);
    // Valid against the model (the write is checked): the post's fields, a reference to the page.
    await setFields(h.deps.db, projectId, ids.post, { author: "Ada", date: "2026-01-31T09:00:00Z", category: "guides", tags: ["intro"], related: ids.about });
    // Written to the working copy: published, the fields are in the delivery answers checked below.
    const pub = await h.request("POST", `/admin/p/${slug}/nodes/${ids.post}/publish`);
    if (pub.status !== 200) throw new Error(`publish failed: ${pub.status} ${pub.text}`);
  });

  test("types.ts: the project's model as TypeScript, to a content:read key", async () => {
    const res = await h.request("GET", `/admin/p/${slug}/model/types.ts`);
    expect(res.status).toBe(200);
    expect(res.headers.get("content-type")).toBe("text/plain; charset=utf-8");
    expect(res.headers.get("cache-control")).toBe("no-store");
    // The model as stored (jsonb keeps no key order: shorter keys first).
    const stored = await compiledModel(h.deps.db, projectId, 1);
    expect(res.text).toBe(modelTypeScript(stored.definition, { project: slug, version: 1 }));
    expect(res.text).toContain(`project "${slug}", content model version 1`);
    expect(res.text).toContain('export interface PostNode extends NodeBase {\n  type: "post";\n  fields: PostFields;');
    // By id too; a key holding only content:read is enough.
    const { plaintext } = await createAdminKey(h.deps.db, { name: "reader", scopes: ["content:read"] }, null, new Date());
    const byId = await h.request("GET", `/admin/p/${projectId}/model/types.ts`, { key: plaintext });
    expect(byId.status).toBe(200);
    expect(byId.text).toBe(res.text);
  });

  test("no key 401, no content:read 403, another project's or an unknown one 404 (JSON error bodies)", async () => {
    const none = await h.request("GET", `/admin/p/${slug}/model/types.ts`, { key: null });
    expect(none.status).toBe(401);
    expect(none.json.error.code).toBe("unauthorized");
    const { plaintext: aiOnly } = await createAdminKey(h.deps.db, { name: "ai", scopes: ["ai:read"] }, null, new Date());
    const scoped = await h.request("GET", `/admin/p/${slug}/model/schema.json`, { key: aiOnly });
    expect(scoped.status).toBe(403);
    expect(scoped.json.error.code).toBe("insufficient_scope");
    expect(scoped.headers.get("www-authenticate")).toContain('scope="content:read"');
    const other = await h.request("POST", "/admin/projects", { body: { slug: uniqueSlug("other"), name: "Other" } });
    const { plaintext: limited } = await createAdminKey(h.deps.db, { name: "other-only", scopes: ["content:read"], project_ids: [other.json.data.id] }, null, new Date());
    for (const path of [`/admin/p/${slug}/model/types.ts`, `/admin/p/${projectId}/model/schema.json`]) {
      const res = await h.request("GET", path, { key: limited });
      expect(res.status).toBe(404);
      expect(res.json.error.code).toBe("not_found");
      expect(res.text).not.toContain("PostNode");
    }
    const unknown = await h.request("GET", "/admin/p/no-such-project/model/types.ts");
    expect(unknown.status).toBe(404);
    // The limited key reads its own project: no model yet, every node untyped.
    const own = await h.request("GET", `/admin/p/${other.json.data.id}/model/types.ts`, { key: limited });
    expect(own.status).toBe(200);
    expect(own.text).toContain("content model version 0");
    expect(own.text).toContain("export type Node = never;");
    expect(own.text).toContain("export type AnyNode = Node | UntypedNode;");
  });

  test("the routes are in the OpenAPI document and answer the admin CORS preflight", async () => {
    const spec = (await h.request("GET", "/swagger/json", { key: null })).json;
    expect(Object.keys(spec.paths["/admin/p/{ref}/model/types.ts"])).toEqual(["get"]);
    expect(spec.paths["/admin/p/{ref}/model/schema.json"].get.responses["200"].content).toHaveProperty(["application/schema+json"]);
    const pre = await h.request("OPTIONS", `/admin/p/${slug}/model/types.ts`, { key: null, headers: { origin: "http://localhost", "access-control-request-method": "GET" } });
    expect(pre.status).toBe(204);
    expect(pre.headers.get("access-control-allow-origin")).toBe("http://localhost");
    const foreign = await h.request("GET", `/admin/p/${slug}/model/types.ts`, { headers: { origin: "https://evil.example" } });
    expect(foreign.status).toBe(200);
    expect(foreign.headers.get("access-control-allow-origin")).toBeNull();
  });

  test("the generated types compile against real delivery answers, and the JSON Schema accepts them", async () => {
    const types = (await h.request("GET", `/admin/p/${slug}/model/types.ts`)).text;
    const schemaRes = await h.request("GET", `/admin/p/${slug}/model/schema.json`);
    expect(schemaRes.status).toBe(200);
    expect(schemaRes.headers.get("content-type")).toBe("application/schema+json");
    const schema = schemaRes.json;
    expect(schema.$schema).toBe("https://json-schema.org/draft/2020-12/schema");

    const post = await h.request("GET", `/api/p/${slug}/nodes/by-path/blog/hello`, { key: null });
    const page = await h.request("GET", `/api/p/${slug}/nodes/by-path/about`, { key: null });
    const entries = await h.request("GET", `/api/p/${slug}/entries?collection=blog`, { key: null });
    for (const r of [post, page, entries]) expect(r.status).toBe(200);
    expect(post.json.data.type).toBe("post");
    expect(entries.json.data.map((e: { slug: string }) => e.slug)).toEqual(["hello"]);

    // The answers as they are, against the types as generated: a typed node carries its `fields`.
    expect(post.json.data.fields).toEqual({
      author: "Ada",
      date: "2026-01-31T09:00:00Z",
      category: "guides",
      tags: ["intro"],
      related: { id: ids.about, path: "about", title: "About", type: "page" },
    });
    const answers = `import type { EntriesAnswer, PageNode, PostNode } from "./types";
export const post: { data: PostNode } = ${post.text};
export const page: { data: PageNode } = ${page.text};
export const entries: EntriesAnswer = ${entries.text};
`;
    const run = typeCheck({ "types.ts": types, "answers.ts": answers });
    expect(run.output).toBe("");
    expect(run.code).toBe(0);
    // The check is a real one: a block whose data breaks the type is refused.
    const broken = answers.replace('"heading":"Hello"', '"heading":42');
    expect(broken).not.toBe(answers);
    expect(typeCheck({ "types.ts": types, "answers.ts": broken }).code).not.toBe(0);

    const ajv = new Ajv2020({ allErrors: true, strict: true });
    addFormats(ajv, ["date-time", "uri"]);
    // The model's own formats are annotations (2020-12); a strict Ajv is told so.
    ajv.addFormat("markdown", true).addFormat("html", true).addFormat("color", true);
    const validate = ajv.compile(schema);
    for (const r of [post, page, entries]) expect([validate(r.json), validate.errors]).toEqual([true, null]);
    // And refuses what is not an answer of this project: a hero without its heading, a post of a wrong shape.
    const bad = structuredClone(post.json);
    delete bad.data.blocks[0].data.heading;
    expect(validate(bad)).toBe(false);
    expect(validate({ data: { ...post.json.data, type: "page", blocks: [{ id: "x", type: "hero", order: 0, data: {} }] } })).toBe(false);
  });
});

describe("npm run cli -- model:types --project <slug> (embedded database on disk)", () => {
  test("prints the same TypeScript as GET /admin/p/{ref}/model/types.ts; an unknown project is an error", async () => {
    const dir = mkdtempSync(join(tmpdir(), "cms-model-types-"));
    const env = { DATA_DIR: dir, SEED_DEMO: "false" };
    try {
      let served = "";
      {
        const deps = await openRuntime(loadConfig({ ...env, LOG_LEVEL: "silent" }));
        const app = createApp(deps).app;
        const { plaintext } = await createAdminKey(deps.db, { name: "t", scopes: [...ADMIN_SCOPES] }, null, new Date());
        const auth = { authorization: `Bearer ${plaintext}`, "content-type": "application/json" };
        const created = await app.handle(new Request("http://localhost/admin/projects", { method: "POST", headers: auth, body: JSON.stringify({ slug: "site", name: "Site" }) }));
        await setModel(deps.db, (await created.json()).data.id, DEMO_LIKE_MODEL);
        served = await (await app.handle(new Request("http://localhost/admin/p/site/model/types.ts", { headers: auth }))).text();
        await deps.dbHandle.close();
      }
      expect(served).toContain("export interface PostNode extends NodeBase");
      const out: string[] = [];
      expect(await runCli(["model:types", "--project", "site"], env, (s) => out.push(s))).toBe(0);
      expect(out).toEqual([served]);
      const missing: string[] = [];
      expect(await runCli(["model:types", "--project", "nope"], env, (s) => missing.push(s))).toBe(1);
      expect(missing).toEqual(["error: project not found"]);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
