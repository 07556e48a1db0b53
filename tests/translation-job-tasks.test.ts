// start_translation_job as an MCP task (2025-11-25 tasks, issue 41), through the SDK's own Client and
// its experimental tasks API: a client that declares tasks gets a CreateTaskResult at once, follows
// the task with tasks/get, reads the job's summary with tasks/result (status notifications on the
// stream while it waits) and cancels with tasks/cancel (no new vendor call after it). The task store
// is the job table: a task made through one app instance is read and cancelled through a second one
// on the same database, and another credential's or project's task is not found. A client without
// tasks keeps the plain tool.
import { afterAll, describe, expect, test } from "bun:test";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { CallToolResultSchema, CreateTaskResultSchema, ErrorCode, McpError, type Task, TaskStatusNotificationSchema } from "@modelcontextprotocol/sdk/types.js";
import { eq } from "drizzle-orm";
import { translationJobs } from "../db/schema";
import { startTranslationWorker } from "../src/translations/jobs-worker";
import { startFakeVendors } from "./fake-vendors";
import { seedNode, seedProject, waitFor } from "./helpers";
import { call, type McpHarness, mcpHarness } from "./mcp-harness";

const vendors = await startFakeVendors();
const ENV = { AI_ALLOW_PRIVATE_URLS: "true", AI_TIMEOUT_MS: "5000" };

describe("translation jobs as MCP tasks", async () => {
  // Two app instances on one database (the second with the same secret keys, as a deployment's instances have).
  const a = await mcpHarness(ENV);
  const b = await mcpHarness(ENV, { keyRing: a.h.deps.keyRing });
  const { h } = a;
  const db = h.deps.db;
  // The worker runs on the second instance only: the first makes the job, any instance carries it out.
  const worker = startTranslationWorker(b.h.deps, { intervalMs: 50 });
  afterAll(async () => {
    await worker.stop();
    a.stop();
    b.stop();
    await vendors.stop();
  });

  async function site(scenario: "ok" | "slow-ok", pages: number) {
    const p = await seedProject(h, { locales: ["en", "de", "fr"] });
    const provider = await h.request("POST", `/admin/p/${p.id}/ai/providers`, {
      body: { name: scenario, kind: "openai", model: "gpt-test", base_url: vendors.base(scenario), api_key: "sk-test-1234567890", is_default: true },
    });
    if (provider.status !== 201) throw new Error(provider.text);
    const root = await seedNode(h, p.slug, { slug: "docs", title: "Documentation" });
    for (let i = 0; i < pages; i++) await seedNode(h, p.slug, { slug: `page-${i}`, parent_id: root.id, title: `Page ${i}: how to set up the thing` });
    const { token } = await a.token(p.slug, { name: "tasks", scopes: ["content:read", "content:write", "ai:read"] });
    return { p, root, token };
  }

  /** An SDK client that declares the tasks capability, connected to one instance. */
  async function taskClient(m: McpHarness, token: string): Promise<Client> {
    const client = new Client({ name: "tasks-test", version: "1.0.0" }, { capabilities: { tasks: { list: {}, cancel: {}, requests: {} } } });
    await client.connect(new StreamableHTTPClientTransport(new URL(m.url), { requestInit: { headers: { authorization: `Bearer ${token}` } } }));
    await client.listTools(); // the client learns which tools run as tasks
    return client;
  }

  const notFound = async (p: Promise<unknown>) => {
    const err = await p.then(
      () => null,
      (e: unknown) => e,
    );
    expect(err).toBeInstanceOf(McpError);
    expect((err as McpError).code).toBe(ErrorCode.InvalidParams);
    expect((err as McpError).message).toMatch(/not found/i);
  };

  test("the server declares tasks; start_translation_job alone is optional; the whole flow through the SDK's callToolStream, read back through a second instance", async () => {
    const { p, root, token } = await site("ok", 4);
    const client = await taskClient(a, token);
    expect(client.getServerCapabilities()?.tasks).toEqual({ list: {}, cancel: {}, requests: { tools: { call: {} } } });
    const tools = (await client.listTools()).tools;
    expect(tools.filter((t) => t.execution?.taskSupport === "optional").map((t) => t.name)).toEqual(["start_translation_job"]);
    expect(tools.filter((t) => t.execution?.taskSupport !== "optional").every((t) => t.execution?.taskSupport === "forbidden")).toBe(true);

    const from = vendors.received("ok").length;
    const messages: Array<{ type: string; task?: Task; result?: any; error?: unknown }> = [];
    for await (const m of client.experimental.tasks.callToolStream({ name: "start_translation_job", arguments: { root_node_id: root.id, locales: ["de", "fr"] } })) messages.push(m as never);
    const units = 5 * 2; // five titles, two locales
    const created = messages[0]?.task as Task;
    expect(messages[0]?.type).toBe("taskCreated");
    expect(created).toMatchObject({ status: "working", ttl: 7 * 24 * 3_600_000, pollInterval: 2_000 });
    expect(new Date(created.createdAt).toString()).not.toBe("Invalid Date");
    expect(messages.filter((m) => m.type === "taskStatus").at(-1)?.task).toMatchObject({ taskId: created.taskId, status: "completed", statusMessage: `translated ${units} of ${units} units` });
    const last = messages.at(-1);
    expect(last?.type).toBe("result");
    expect(last?.result.isError).toBeUndefined();
    expect(last?.result.structuredContent).toMatchObject({ id: created.taskId, status: "done", progress: { done: units, total: units }, usage: { calls: units } });
    expect(last?.result._meta?.["io.modelcontextprotocol/related-task"]).toEqual({ taskId: created.taskId });
    expect(vendors.received("ok").length - from).toBe(units);
    // The task is the job, marked as a task: the plain tools read it too.
    const [row] = await db.select().from(translationJobs).where(eq(translationJobs.id, created.taskId));
    expect([row?.taskId, row?.status, row?.projectId]).toEqual([created.taskId, "done", p.id]);
    expect((await call(client, "get_translation_job", { job_id: created.taskId })).job.status).toBe("done");

    // The second instance answers from the table: tasks/get, tasks/result, tasks/list.
    const other = await taskClient(b, token);
    expect(await other.experimental.tasks.getTask(created.taskId)).toMatchObject({ taskId: created.taskId, status: "completed", ttl: created.ttl, createdAt: created.createdAt });
    const result = await other.experimental.tasks.getTaskResult(created.taskId, CallToolResultSchema);
    expect(result.structuredContent).toEqual(last?.result.structuredContent);
    expect((await other.experimental.tasks.listTasks()).tasks.map((t) => t.taskId)).toEqual([created.taskId]);
    // Finished: cancelling is -32602.
    const refused = await other.experimental.tasks.cancelTask(created.taskId).catch((e: unknown) => e);
    expect([(refused as McpError).code, (refused as McpError).message]).toEqual([ErrorCode.InvalidParams, expect.stringMatching(/terminal status/)]);

    // Another credential of the same project, another project's: not found, not listed.
    const second = await taskClient(b, (await a.token(p.slug, { name: "other", scopes: ["content:read", "content:write", "ai:read"] })).token);
    await notFound(second.experimental.tasks.getTask(created.taskId));
    await notFound(second.experimental.tasks.getTaskResult(created.taskId, CallToolResultSchema));
    await notFound(second.experimental.tasks.cancelTask(created.taskId));
    expect((await second.experimental.tasks.listTasks()).tasks).toEqual([]);
    const q = await seedProject(h, { locales: ["en", "de"] });
    const stranger = await taskClient(a, (await a.token(q.slug, { name: "stranger", scopes: ["content:read", "content:write", "ai:read"] })).token);
    await notFound(stranger.experimental.tasks.getTask(created.taskId));
    await notFound(stranger.experimental.tasks.getTask(crypto.randomUUID()));
    await notFound(stranger.experimental.tasks.getTask("not-a-task"));
  });

  test("made through one instance, followed and cancelled through another: tasks/result streams status notifications; no new vendor call 2 s after tasks/cancel", async () => {
    const { root, token } = await site("slow-ok", 8);
    const client = await taskClient(a, token);
    const created = await client.request(
      { method: "tools/call", params: { name: "start_translation_job", arguments: { root_node_id: root.id, locales: ["de"] }, task: { ttl: 60_000 } } },
      CreateTaskResultSchema,
    );
    const taskId = created.task.taskId;
    expect(created.task).toMatchObject({ status: "working", ttl: 7 * 24 * 3_600_000 }); // the server's lifetime, whatever was asked
    expect(created._meta?.["io.modelcontextprotocol/model-immediate-response"]).toContain(taskId);

    // tasks/result waits for the end on the second instance; its stream carries the status as it changes.
    const other = await taskClient(b, token);
    const statuses: Task[] = [];
    other.setNotificationHandler(TaskStatusNotificationSchema, (n) => void statuses.push(n.params as Task));
    const waiting = other.experimental.tasks.getTaskResult(taskId, CallToolResultSchema, { timeout: 60_000 });
    await waitFor(() => statuses.some((s) => s.status === "working" && /^running: [1-9]\d* of 9 units translated$/.test(s.statusMessage ?? "")), {
      timeout: 20_000,
      what: "a status notification with progress",
    });
    expect(await other.experimental.tasks.getTask(taskId)).toMatchObject({ status: "working" });

    const cancelled = await other.experimental.tasks.cancelTask(taskId);
    const at = vendors.received("slow-ok").length;
    expect(cancelled).toMatchObject({ taskId, status: "cancelled" });
    const result = await waiting;
    expect(result.isError).toBe(true);
    expect(JSON.stringify(result.content)).toContain("was cancelled after");
    expect(result._meta?.["io.modelcontextprotocol/related-task"]).toEqual({ taskId });
    expect(statuses.at(-1)).toMatchObject({ taskId, status: "cancelled" });
    await Bun.sleep(2500); // fixed wait: the window in which no new call may start (the slow vendor takes 500 ms a call)
    expect(vendors.received("slow-ok").length - at).toBeLessThanOrEqual(1);
    expect(await client.experimental.tasks.getTask(taskId)).toMatchObject({ status: "cancelled" });
    expect((await call(client, "get_translation_job", { job_id: taskId })).job.status).toBe("cancelled");
  });

  test("a client without tasks keeps the plain tool; task on a tool without task support is -32601; bad arguments and scopes answer tool errors, nothing made", async () => {
    const { p, root, token } = await site("ok", 1);
    const plain = await a.connect(token);
    expect(plain.getServerCapabilities()?.tasks).toBeDefined();
    const started = await call(plain, "start_translation_job", { root_node_id: root.id, locales: ["de"] });
    expect(["queued", "running", "done"]).toContain(started.status);
    expect(started.usage).toBeUndefined();
    const [row] = await db.select().from(translationJobs).where(eq(translationJobs.id, started.id));
    expect(row?.taskId).toBeNull(); // not a task: tasks/get does not find it
    await notFound((await taskClient(a, token)).experimental.tasks.getTask(started.id));
    const dry = await call(plain, "start_translation_job", { root_node_id: root.id, locales: ["fr"], dry_run: true });
    expect(dry).toMatchObject({ id: null, status: "dry_run" });

    const client = await taskClient(a, token);
    const asTask = (name: string, args: Record<string, unknown>) =>
      client.request({ method: "tools/call", params: { name, arguments: args, task: {} } }, CallToolResultSchema.or(CreateTaskResultSchema));
    const notTask = await asTask("get_translation_job", { job_id: started.id }).catch((e: unknown) => e);
    expect((notTask as McpError).code).toBe(ErrorCode.MethodNotFound);
    for (const [args, text] of [
      [{ locales: ["it"] }, /^invalid_locale: /],
      [{ locales: [] }, /^invalid_input: /],
      [{ locales: ["de"], dry_run: true }, /^invalid_input: a dry run answers at once/],
      [{ locales: ["de"], colour: "red" }, /^invalid_input: .*colour/],
    ] as const) {
      const r = (await asTask("start_translation_job", args)) as { isError?: boolean; content: Array<{ text: string }> };
      expect([r.isError, r.content[0]?.text]).toEqual([true, expect.stringMatching(text)]);
    }
    const reader = await taskClient(a, (await a.token(p.slug, { name: "reader", scopes: ["content:read"] })).token);
    const r = (await reader.request(
      { method: "tools/call", params: { name: "start_translation_job", arguments: { locales: ["de"] }, task: {} } },
      CallToolResultSchema.or(CreateTaskResultSchema),
    )) as { isError?: boolean; content: Array<{ text: string }> };
    expect([r.isError, r.content[0]?.text]).toEqual([true, expect.stringMatching(/^insufficient_scope: /)]);
    const jobs = await db.select().from(translationJobs).where(eq(translationJobs.projectId, p.id));
    expect(jobs.map((j) => j.id)).toEqual([started.id]);
  });

  test("stateless JSON: tasks/get over a plain POST; tasks/result to a client that takes only JSON answers one body", async () => {
    const { root, token } = await site("ok", 1);
    const made = await a.post({ jsonrpc: "2.0", id: 1, method: "tools/call", params: { name: "start_translation_job", arguments: { root_node_id: root.id, locales: ["de"] }, task: {} } }, { token });
    expect(made.status).toBe(200);
    const taskId = made.json.result.task.taskId;
    const got = await b.post({ jsonrpc: "2.0", id: 2, method: "tasks/get", params: { taskId } }, { token });
    expect(got.json.result).toMatchObject({ taskId, ttl: 7 * 24 * 3_600_000 });
    const res = await b.post({ jsonrpc: "2.0", id: 3, method: "tasks/result", params: { taskId } }, { token, headers: { accept: "application/json" } });
    expect([res.status, res.headers.get("content-type")]).toEqual([200, expect.stringContaining("application/json")]);
    expect(res.json.result).toMatchObject({ structuredContent: { id: taskId, status: "done" }, _meta: { "io.modelcontextprotocol/related-task": { taskId } } });
  });
});
