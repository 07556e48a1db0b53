import { expect, test } from "bun:test";
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";

const root = join(import.meta.dir, "..");
const dockerfile = readFileSync(join(root, "Dockerfile"), "utf8");
const pkg = JSON.parse(readFileSync(join(root, "package.json"), "utf8"));

test("the Dockerfile copies only what exists and builds the binary the build script makes", () => {
  const stages = dockerfile.split(/^FROM /m).slice(1);
  expect(stages).toHaveLength(2);
  const buildCopies = [...stages[0]!.matchAll(/^COPY (?!--from)(.+)$/gm)].flatMap((m) => m[1]!.trim().split(/\s+/).slice(0, -1));
  expect(buildCopies.length).toBeGreaterThan(0);
  for (const src of buildCopies) expect({ src, exists: existsSync(join(root, src)) }).toEqual({ src, exists: true });
  const script = /ARG BUILD_SCRIPT=(\S+)/.exec(stages[0]!)?.[1] ?? "";
  expect(pkg.scripts[script]).toContain("--compile");
  const out = /--outfile (\S+)/.exec(pkg.scripts[script])?.[1];
  expect(out).toBe("dist/content-service");
  expect(stages[1]).toContain("COPY --from=build /out/content-service /app/content-service");
});

test("the runtime stage is minimal, non-root, exposes 3000 with a data volume and a health check", () => {
  const run = dockerfile.split(/^FROM /m)[2];
  expect(run).toMatch(/^(gcr\.io\/distroless|debian:\S+-slim)/);
  expect(run).toMatch(/^USER (?!root|0\b)\S+/m);
  expect(run).toContain("EXPOSE 3000");
  expect(run).toMatch(/VOLUME \["\/data"\]/);
  expect(run).toContain("DATA_DIR=/data");
  expect(run).toMatch(/HEALTHCHECK .*healthcheck/);
  expect(readFileSync(join(root, "src", "main.ts"), "utf8")).toContain('process.argv[2] === "healthcheck"');
});
