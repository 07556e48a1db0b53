// The other runtimes, for tests that run the same sources under Bun, Node and Deno as child
// processes: XRT_NODE (Node >= 22.5) and XRT_DENO (Deno 2) name the binaries (.ci/run installs
// them from npm). Missing in CI (CI set) the tests fail; elsewhere they are skipped with a warning.
import { join } from "node:path";

export const root = join(import.meta.dir, "..");
export type Runtime = "bun" | "node" | "deno";

const missing = (["XRT_NODE", "XRT_DENO"] as const).filter((v) => !process.env[v]);
if (missing.length > 0) {
  const text = `${missing.join(" and ")} unset: the cross-runtime tests need Node >= 22.5 and Deno 2 binaries`;
  if (process.env.CI) throw new Error(text);
  console.warn(`SKIPPED (not CI): ${text}`);
}
export const runtimesMissing = missing.length > 0;

/** The command that runs a TypeScript file of this repository under `rt`. */
export function command(rt: Runtime, file: string): string[] {
  if (rt === "bun") return [process.execPath, file];
  if (rt === "node") return [process.env.XRT_NODE ?? "node", "--disable-warning=ExperimentalWarning", "--import", "tsx", file];
  return [process.env.XRT_DENO ?? "deno", "run", "--sloppy-imports", "--node-modules-dir=manual", "--allow-all", file];
}

/** Runs to the end; stdout and stderr together. An `undefined` in env removes that variable. */
export async function run(cmd: string[], env: Record<string, string | undefined> = {}, timeoutMs = 60_000): Promise<{ code: number; out: string }> {
  const merged: Record<string, string | undefined> = { ...process.env, ...env };
  for (const [k, v] of Object.entries(merged)) if (v === undefined) delete merged[k];
  const proc = Bun.spawn(cmd, { cwd: root, env: merged as Record<string, string>, stdout: "pipe", stderr: "pipe" });
  const timer = setTimeout(() => proc.kill("SIGKILL"), timeoutMs);
  const [out, err] = await Promise.all([new Response(proc.stdout).text(), new Response(proc.stderr).text()]);
  clearTimeout(timer);
  return { code: await proc.exited, out: out + err };
}
