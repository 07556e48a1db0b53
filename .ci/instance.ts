// CI: one started instance of the single executable (dist/content-service), shared by binary.ts
// and scale-checks.ts.
import { join, resolve } from "node:path";

const binary = join(resolve(import.meta.dir, ".."), "dist", "content-service");

export interface Instance {
  url: string;
  output: () => string;
  stop(): Promise<number>;
}

export async function freePort(): Promise<number> {
  const s = Bun.serve({ port: 0, fetch: () => new Response() });
  const port = s.port!;
  s.stop(true);
  return port;
}

export async function start(env: Record<string, string>, cwd: string): Promise<Instance> {
  const port = await freePort();
  const proc = Bun.spawn([binary], { cwd, env: { PORT: String(port), PATH: process.env.PATH ?? "", ...env }, stdout: "pipe", stderr: "pipe" });
  let out = "";
  const decoder = new TextDecoder();
  void (async () => {
    for await (const chunk of proc.stdout) out += decoder.decode(chunk);
  })();
  void (async () => {
    for await (const chunk of proc.stderr) out += decoder.decode(chunk);
  })();
  const url = `http://127.0.0.1:${port}`;
  for (let i = 0; i < 120; i++) {
    if (proc.exitCode !== null) throw new Error(`binary exited with ${proc.exitCode}:\n${out}`);
    const ok = await fetch(`${url}/readyz`)
      .then((r) => r.ok)
      .catch(() => false);
    if (ok) return { url, output: () => out, stop: async () => (proc.kill("SIGTERM"), await proc.exited) };
    await Bun.sleep(250);
  }
  proc.kill("SIGKILL");
  throw new Error(`binary never became ready:\n${out}`);
}

export function check(cond: unknown, what: string): void {
  if (!cond) throw new Error(`check failed: ${what}`);
  console.log(`ok - ${what}`);
}
