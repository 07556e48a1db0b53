// The README is what a newcomer reads first and the guides in docs/ hold the reference: these
// checks keep both honest (the two commands on the first screen, the configuration table complete,
// every guide reachable from the README, no relative link or #anchor pointing at nothing).
import { expect, test } from "bun:test";
import { existsSync, readdirSync, readFileSync, statSync } from "node:fs";
import { dirname, join, relative, resolve } from "node:path";
import { ENV_DOCS } from "../src/config";

const root = join(import.meta.dir, "..");
const readmePath = join(root, "README.md");
const docsDir = join(root, "docs");
const guides = readdirSync(docsDir)
  .filter((f) => f.endsWith(".md"))
  .sort()
  .map((f) => join(docsDir, f));
const read = (file: string): string => readFileSync(file, "utf8");

/** The lines of a Markdown file outside fenced code blocks (their links and headings are not links or headings). */
function prose(markdown: string): string[] {
  const out: string[] = [];
  let fence: string | null = null;
  for (const line of markdown.split("\n")) {
    const marker = /^\s*(`{3,}|~{3,})/.exec(line)?.[1];
    if (marker !== undefined && (fence === null || (marker[0] === fence[0] && marker.length >= fence.length))) {
      fence = fence === null ? marker : null;
      continue;
    }
    if (fence === null) out.push(line);
  }
  return out;
}

/** Inline code spans hold text, not links: `[a](b)` inside backticks is left alone. */
const withoutCode = (line: string): string => line.replace(/(`+)[^`]*?\1/g, "");

/** The link targets of a Markdown file: inline links and images, and reference definitions. */
function linkTargets(markdown: string): string[] {
  const targets: string[] = [];
  for (const line of prose(markdown).map(withoutCode)) {
    for (const m of line.matchAll(/!?\[[^\]]*\]\(\s*<?([^)\s>]+)>?(?:\s+"[^"]*")?\s*\)/g)) if (m[1]) targets.push(m[1]);
    const def = /^\s{0,3}\[[^\]]+\]:\s*<?(\S+?)>?(?:\s|$)/.exec(line);
    if (def?.[1]) targets.push(def[1]);
  }
  return targets;
}

/** The anchors GitHub gives a file's headings: lower case, punctuation dropped, spaces as hyphens, repeats numbered. */
function headingAnchors(markdown: string): Set<string> {
  const anchors = new Set<string>();
  const seen = new Map<string, number>();
  for (const line of prose(markdown)) {
    const text = /^ {0,3}#{1,6}\s+(.*?)(?:\s+#+)?\s*$/.exec(line)?.[1];
    if (text === undefined) continue;
    const plain = text
      .replace(/!?\[([^\]]*)\]\([^)]*\)/g, "$1")
      .replace(/<[^>]+>/g, "")
      .toLowerCase()
      .replace(/[^\p{L}\p{M}\p{N}\p{Pc} -]/gu, "")
      .replace(/ /g, "-");
    const n = seen.get(plain) ?? 0;
    seen.set(plain, n + 1);
    anchors.add(n === 0 ? plain : `${plain}-${n}`);
  }
  return anchors;
}

const isExternal = (target: string): boolean => /^[a-z][a-z0-9+.-]*:/i.test(target) || target.startsWith("//");

/** What is wrong with each relative link of `file`: a target that does not exist, or an anchor its target lacks. */
function brokenLinks(file: string, markdown: string): string[] {
  const broken: string[] = [];
  for (const target of linkTargets(markdown)) {
    if (isExternal(target)) continue;
    const [rawPath = "", anchor] = target.split("#", 2);
    const path = decodeURIComponent(rawPath);
    const resolved = path === "" ? file : resolve(dirname(file), path);
    const name = `${relative(root, file)}: ${target}`;
    if (!existsSync(resolved)) {
      broken.push(`${name} (no such file)`);
      continue;
    }
    if (anchor === undefined || anchor === "" || !resolved.endsWith(".md") || statSync(resolved).isDirectory()) continue;
    const headings = headingAnchors(path === "" ? markdown : read(resolved));
    if (!headings.has(decodeURIComponent(anchor).toLowerCase())) broken.push(`${name} (no heading with that anchor)`);
  }
  return broken;
}

test("README's first screen holds the two commands", () => {
  const firstScreen = read(readmePath).split("\n").slice(0, 25).join("\n");
  expect(firstScreen).toContain("npm install && npm start");
  expect(firstScreen).toContain("npm test");
});

test("docs/configuration.md's table lists every variable of src/config.ts with its default", () => {
  const table = read(join(docsDir, "configuration.md"));
  const missing = ENV_DOCS.filter(([name, def]) => !table.includes(`| \`${name}\` | ${def} |`)).map(([name, def]) => `| \`${name}\` | ${def} |`);
  expect(missing).toEqual([]);
});

test("README links every guide in docs/", () => {
  const linked = new Set(
    linkTargets(read(readmePath))
      .filter((t) => !isExternal(t))
      .map((t) => resolve(root, decodeURIComponent(t.split("#")[0] ?? ""))),
  );
  expect(guides.length).toBeGreaterThan(0);
  expect(guides.filter((g) => !linked.has(g)).map((g) => relative(root, g))).toEqual([]);
});

test("every relative link and #anchor in README.md and docs/*.md points at something that exists", () => {
  const broken = [readmePath, ...guides].flatMap((file) => brokenLinks(file, read(file)));
  expect(broken).toEqual([]);
});

test("the link check finds a broken file link and a broken anchor, and reads links as GitHub does", () => {
  const file = join(docsDir, "configuration.md");
  const sample = [
    "# A title (with `code`, punctuation!)",
    "## Repeated",
    "## Repeated",
    "See [the README](../README.md), [a section](#a-title-with-code-punctuation), [again](#repeated-1),",
    "[gone](missing.md), [no anchor](../README.md#no-such-heading) and [a site](https://example.com).",
    "`[in code](nowhere.md)` is not a link.",
    "```md",
    "[in a fence](nowhere.md)",
    "```",
  ].join("\n");
  expect(brokenLinks(file, sample)).toEqual(["docs/configuration.md: missing.md (no such file)", "docs/configuration.md: ../README.md#no-such-heading (no heading with that anchor)"]);
});
