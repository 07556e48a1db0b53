// One process per embedded data directory, with real processes (`bun src/main.ts`, `bun src/cli.ts`):
// a second service on the same DATA_DIR refuses (exit 2, naming the directory and the holder)
// while the first keeps serving; a second service on the same PORT fails with "port in use";
// the CLI refuses to write under a running service; kill -9 during acknowledged writes, then a
// restart at once, loses nothing that answered 201 (an overlapping start under that load is refused).
import { afterAll, expect, test } from "bun:test";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { freePort, waitFor } from "./helpers";
import { type Spawned, spawnService, untilReady } from "./service-process";

const root = join(import.meta.dir, "..");
const work = mkdtempSync(join(tmpdir(), "cms-lock-"));
const token = `lock-test-root-token-${crypto.randomUUID()}`;
const auth = { authorization: `Bearer ${token}`, "content-type": "application/json" };
const running: Array<ReturnType<typeof Bun.spawn>> = [];

afterAll(() => {
  for (const p of running) p.kill("SIGKILL");
  rmSync(work, { recursive: true, force: true });
});

function baseEnv(extra: Record<string, string>): Record<string, string> {
  const env: Record<string, string> = { ...(process.env as Record<string, string>), SEED_DEMO: "false", LOG_LEVEL: "warn", HOST: "127.0.0.1", ADMIN_TOKEN: token, ...extra };
  delete env.DATABASE_URL; // the embedded database, whatever the suite runs on
  return env;
}

/** The service on `dataDir` and `port`, killed after the file's tests. */
function spawnLocked(dataDir: string, port: number): Spawned {
  const s = spawnService({ DATABASE_URL: undefined, DATA_DIR: dataDir, ADMIN_TOKEN: token }, port); // the embedded database, whatever the suite runs on
  running.push(s.proc);
  return s;
}

/** Runs a process to its end with a deadline; returns exit code and all output. */
async function run(cmd: string[], env: Record<string, string>): Promise<{ code: number; out: string }> {
  const p = Bun.spawn(cmd, { cwd: root, env, stdout: "pipe", stderr: "pipe", stdin: "ignore" });
  running.push(p);
  const timer = setTimeout(() => p.kill("SIGKILL"), 20_000);
  const [out, err, code] = await Promise.all([new Response(p.stdout).text(), new Response(p.stderr).text(), p.exited]);
  clearTimeout(timer);
  return { code, out: out + err };
}

async function keyNames(base: string): Promise<string[]> {
  const res = await fetch(`${base}/admin/keys`, { headers: auth });
  expect(res.status).toBe(200);
  return ((await res.json()).data as Array<{ name: string }>).map((k) => k.name);
}

test("a second service or a CLI write on a held DATA_DIR refuses; a second service on a held PORT fails; the first keeps serving", async () => {
  const dataDir = join(work, "one");
  const port = freePort();
  const first = spawnLocked(dataDir, port);
  // A start takes a second or two on a quiet machine; the deadline only turns a hang into a failure,
  // and a busy one (the suite's other worker beside other work) has taken over 20 s.
  await untilReady(first, 40_000, 50);
  expect((await fetch(`${first.url}/admin/projects`, { method: "POST", headers: auth, body: JSON.stringify({ slug: "kept", name: "kept" }) })).status).toBe(201);
  const keysBefore = await keyNames(first.url);

  // All at once: a second service on the same DATA_DIR, one on the same PORT, and the CLI's writes.
  const otherDir = join(work, "other");
  const cliEnv = baseEnv({ DATA_DIR: dataDir });
  const cliWrites = [
    ["keys:create", "--name", "from-cli"],
    ["keys:revoke", "00000000-0000-0000-0000-000000000000"],
    ["users:create", "--email", "cli@example.com", "--password", "a-long-password"],
    ["secrets:rotate", "--new-key"],
  ];
  const [second, samePort, ...clis] = await Promise.all([
    run([process.execPath, "src/main.ts"], baseEnv({ DATA_DIR: dataDir, PORT: String(freePort()) })),
    run([process.execPath, "src/main.ts"], baseEnv({ DATA_DIR: otherDir, PORT: String(port) })),
    ...cliWrites.map((argv) => run([process.execPath, "src/cli.ts", ...argv], cliEnv)),
  ]);

  // Same DATA_DIR, another port: refused before anything is opened.
  expect(second.code).toBe(2);
  const line = second.out.trim();
  expect(line.split("\n")).toHaveLength(1);
  expect(line).toContain(dataDir);
  expect(line).toContain(`pid ${first.proc.pid}`);
  expect(line).toContain(`the service (port ${port})`);
  expect(line).not.toMatch(/\bat .*\.ts:\d+/); // no stack trace

  // Same PORT, another DATA_DIR: "port in use", and nothing was created in that directory's database.
  expect(samePort.code).toBe(2);
  expect(samePort.out.trim().split("\n")).toHaveLength(1);
  expect(samePort.out).toContain(`PORT ${port} is in use`);
  expect(samePort.out).not.toContain("cms_ak_");

  // The CLI's writes refuse while the service holds the directory.
  for (const cli of clis) {
    expect(cli.code).toBe(2);
    expect(cli.out).toContain(`DATA_DIR ${dataDir} is in use by the service (port ${port}) (pid ${first.proc.pid})`);
    expect(cli.out).toContain("admin API");
    expect(cli.out).not.toContain("cms_ak_");
  }
  expect(readFileSync(join(dataDir, "secret.key"), "utf8").trim().split("\n")).toHaveLength(1); // --new-key added nothing

  // The first instance kept serving and nothing changed underneath it.
  expect(await keyNames(first.url)).toEqual(keysBefore);
  const projects = await (await fetch(`${first.url}/admin/projects`, { headers: auth })).json();
  expect(projects.data.map((p: { slug: string }) => p.slug)).toEqual(["kept"]);
  expect((await fetch(`${first.url}/admin/projects`, { method: "POST", headers: auth, body: JSON.stringify({ slug: "after", name: "after" }) })).status).toBe(201);

  // Once the service has stopped, the CLI works on the same directory.
  first.proc.kill("SIGTERM");
  expect(await first.proc.exited).toBe(0);
  const cli = await run([process.execPath, "src/cli.ts", "keys:create", "--name", "from-cli"], cliEnv);
  expect(cli.code).toBe(0);
  expect(JSON.parse(cli.out).key).toMatch(/^cms_ak_/);
}, 90_000);

test("kill -9 during acknowledged writes: a restart works at once and every write that answered 201 is there", async () => {
  const dataDir = join(work, "kill");
  const port = freePort();
  const svc = spawnLocked(dataDir, port);
  await untilReady(svc, 40_000, 50);
  expect((await fetch(`${svc.url}/admin/projects`, { method: "POST", headers: auth, body: JSON.stringify({ slug: "w", name: "w" }) })).status).toBe(201);

  const acknowledged: string[] = [];
  let stop = false;
  const writer = async (w: number): Promise<void> => {
    for (let i = 0; !stop; i++) {
      const slug = `n-${w}-${i}`;
      const res = await fetch(`${svc.url}/admin/p/w/nodes`, { method: "POST", headers: auth, body: JSON.stringify({ slug, title: slug }) }).catch(() => null);
      if (res?.status === 201) acknowledged.push(slug);
      else if (res === null) return; // the process is gone
    }
  };
  const writers = [0, 1, 2, 3].map(writer);
  await waitFor(() => acknowledged.length >= 20, { timeout: 15_000, interval: 20, what: "20 acknowledged writes" });
  // An overlapping restart (same DATA_DIR, same PORT) under the write load is refused, not started beside it.
  const overlap = await run([process.execPath, "src/main.ts"], baseEnv({ DATA_DIR: dataDir, PORT: String(port) }));
  expect(overlap.code).toBe(2);
  expect(overlap.out).toContain(`DATA_DIR ${dataDir} is in use by the service (port ${port}) (pid ${svc.proc.pid})`);
  const before = acknowledged.length;
  await waitFor(() => acknowledged.length >= before + 20, { timeout: 15_000, interval: 20, what: "20 more acknowledged writes" });
  svc.proc.kill("SIGKILL");
  await svc.proc.exited;
  stop = true;
  await Promise.all(writers);

  // The kernel dropped the lock with the process: the next start is not blocked.
  const again = spawnLocked(dataDir, port);
  await untilReady(again, 40_000, 50);
  const res = await fetch(`${again.url}/admin/p/w/nodes?per_page=100&page=1`, { headers: auth });
  expect(res.status).toBe(200);
  const found = new Set<string>();
  for (let page = 1; ; page++) {
    const r = await (await fetch(`${again.url}/admin/p/w/nodes?per_page=100&page=${page}`, { headers: auth })).json();
    for (const n of r.data as Array<{ slug: string }>) found.add(n.slug);
    if ((r.data as unknown[]).length < 100) break;
  }
  const lost = acknowledged.filter((s) => !found.has(s));
  expect(acknowledged.length).toBeGreaterThanOrEqual(40);
  expect(lost).toEqual([]);
  again.proc.kill("SIGTERM");
  expect(await again.proc.exited).toBe(0);
}, 90_000);

test("two directories locked at once in a fresh process are both locked (the flock loader is shared, not skipped)", async () => {
  const [a, b] = [mkdtempSync(join(tmpdir(), "cms-lock-a-")), mkdtempSync(join(tmpdir(), "cms-lock-b-"))];
  try {
    const script = `import { lockDataDir } from "./db/lock"; const l = await Promise.all([lockDataDir(${JSON.stringify(a)}, "a"), lockDataDir(${JSON.stringify(b)}, "b")]); console.log(JSON.stringify(l.map((x) => x !== null)));`;
    const proc = Bun.spawn([process.execPath, "-e", script], { cwd: join(import.meta.dir, ".."), stdout: "pipe", stderr: "pipe" });
    const [out, err] = await Promise.all([new Response(proc.stdout).text(), new Response(proc.stderr).text()]);
    expect({ code: await proc.exited, out: out.trim(), err }).toEqual({ code: 0, out: "[true,true]", err: "" });
  } finally {
    for (const d of [a, b]) rmSync(d, { recursive: true, force: true });
  }
});
