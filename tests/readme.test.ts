import { expect, test } from "bun:test";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { ENV_DOCS } from "../src/config";

const read = (path: string): string => readFileSync(join(import.meta.dir, "..", path), "utf8");

test("README's first screen holds the two commands", () => {
  const firstScreen = read("README.md").split("\n").slice(0, 25).join("\n");
  expect(firstScreen).toContain("npm install && npm start");
  expect(firstScreen).toContain("npm test");
});

test("docs/configuration.md's table lists every variable of src/config.ts with its default", () => {
  const table = read("docs/configuration.md");
  for (const [name, def] of ENV_DOCS) expect(table).toContain(`| \`${name}\` | ${def} |`);
});
