// The DATA_DIR lock holds across runtimes: while a Bun, Node or Deno process holds a directory,
// the other runtimes are refused naming the holder (and the service itself refuses to start,
// exit 2, one line); after the holder is killed with SIGKILL, the next process of another
// runtime takes the directory at once.
import { afterAll, expect, test } from "bun:test";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { command, type Runtime, root, run, runtimesMissing } from "./runtimes.helpers";

const RUNTIMES: Runtime[] = ["bun", "node", "deno"];
const work = mkdtempSync(join(tmpdir(), "cms-xrt-lock-"));
const running: Array<ReturnType<typeof Bun.spawn>> = [];
afterAll(() => {
  for (const p of running) p.kill("SIGKILL");
  rmSync(work, { recursive: true, force: true });
});

async function hold(rt: Runtime, dir: string): Promise<ReturnType<typeof Bun.spawn>> {
  const proc = Bun.spawn([...command(rt, "tests/runtimes/lock-probe.ts"), dir, `holder-${rt}`], { cwd: root, stdout: "pipe", stderr: "inherit" });
  running.push(proc);
  const reader = (proc.stdout as ReadableStream<Uint8Array>).getReader();
  const { value } = await reader.read();
  expect(new TextDecoder().decode(value)).toBe("locked\n");
  return proc;
}

for (const holder of RUNTIMES) {
  test.skipIf(runtimesMissing)(
    `held by ${holder}: the other runtimes are refused; after kill -9 they lock at once (needs XRT_NODE and XRT_DENO, the Node and Deno binaries)`,
    async () => {
      const dir = mkdtempSync(join(work, `${holder}-`));
      const proc = await hold(holder, dir);
      // The three runtimes try at once (child processes: they use every core).
      const tries = await Promise.all(RUNTIMES.map((other) => run([...command(other, "tests/runtimes/lock-probe.ts"), dir, `second-${other}`])));
      for (const [i, r] of tries.entries()) {
        expect(r.code, `${RUNTIMES[i]}: ${r.out}`).toBe(3);
        expect(r.out).toContain(`refused: DATA_DIR ${dir} is in use by holder-${holder} (pid ${proc.pid})`);
      }
      proc.kill("SIGKILL");
      await proc.exited;
      const next = RUNTIMES[(RUNTIMES.indexOf(holder) + 1) % RUNTIMES.length] as Runtime;
      const after = await hold(next, dir);
      after.kill("SIGKILL");
      await after.exited;
    },
    120_000,
  );
}

test.skipIf(runtimesMissing)(
  "the service on Node and on Deno refuses a held DATA_DIR: exit 2, one line naming the holder (needs XRT_NODE and XRT_DENO, the Node and Deno binaries)",
  async () => {
    const dir = mkdtempSync(join(work, "service-"));
    const proc = await hold("bun", dir);
    const starts = await Promise.all(
      (["node", "deno"] as const).map((rt) => run(command(rt, "src/main.ts"), { DATA_DIR: dir, PORT: "0", SEED_DEMO: "false", LOG_LEVEL: "warn", DATABASE_URL: undefined })),
    );
    for (const r of starts) {
      expect(r.code, r.out).toBe(2);
      expect(r.out.trim().split("\n")).toHaveLength(1);
      expect(r.out).toContain(`DATA_DIR ${dir} is in use by holder-bun (pid ${proc.pid})`);
    }
    expect(proc.exitCode).toBeNull(); // the holder was never disturbed
  },
  120_000,
);
