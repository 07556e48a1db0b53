// The official MCP Inspector CLI (@modelcontextprotocol/inspector-cli, a devDependency, run with
// node) against a listening server: tools/list and tools/call with a bearer header.
import { afterAll, describe, expect, test } from "bun:test";
import { resolve } from "node:path";
import { seedProject } from "./helpers";
import { mcpHarness, TOOL_NAMES } from "./mcp-harness";

const BUILD = resolve(import.meta.dir, "../node_modules/@modelcontextprotocol/inspector-cli/build");
const CLI = resolve(BUILD, "cli.js");

async function inspector(args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  // cwd = its build folder: v1.0.3 probes for its package.json relative to the working directory.
  const proc = Bun.spawn(["node", CLI, "--cli", ...args], { cwd: BUILD, stdout: "pipe", stderr: "pipe", env: { ...process.env, NO_COLOR: "1" } });
  const timer = setTimeout(() => proc.kill(), 60_000);
  const [stdout, stderr, code] = await Promise.all([new Response(proc.stdout).text(), new Response(proc.stderr).text(), proc.exited]);
  clearTimeout(timer);
  return { code, stdout, stderr };
}

describe("MCP Inspector CLI against the running server", async () => {
  const m = await mcpHarness();
  afterAll(() => m.stop());
  const p = await seedProject(m.h);
  const { token } = await m.token(p.slug);
  const target = [m.url, "--transport", "http", "--header", `Authorization: Bearer ${token}`];

  test("tools/list", async () => {
    const r = await inspector([...target, "--method", "tools/list"]);
    expect(r.code).toBe(0);
    const names = (JSON.parse(r.stdout).tools as Array<{ name: string }>).map((t) => t.name);
    expect(names).toContain("create_node");
    expect(names).toContain("translate_node");
    expect(names.length).toBe(TOOL_NAMES.length);
  }, 90_000);

  test("tools/call create_node then get_project", async () => {
    const created = await inspector([...target, "--method", "tools/call", "--tool-name", "create_node", "--tool-arg", "slug=from-inspector", "--tool-arg", "title=Inspector"]);
    expect(created.code).toBe(0);
    const out = JSON.parse(created.stdout);
    expect(out.isError ?? false).toBe(false);
    expect(out.structuredContent.node).toMatchObject({ slug: "from-inspector", title: "Inspector", status: "draft" });
    expect((await m.h.request("GET", `/admin/p/${p.slug}/nodes/${out.structuredContent.node.id}`)).status).toBe(200);

    const project = await inspector([...target, "--method", "tools/call", "--tool-name", "get_project"]);
    expect(project.code).toBe(0);
    expect(JSON.parse(project.stdout).structuredContent.project.slug).toBe(p.slug);
  }, 90_000);

  test("without the bearer header the CLI fails on the 401", async () => {
    const r = await inspector([m.url, "--transport", "http", "--method", "tools/list"]);
    expect(r.code).not.toBe(0);
    expect(r.stdout + r.stderr).toMatch(/401|nauthorized/);
  }, 90_000);
});
