// Shared by the delivery test files.
import type { Db, DbHandle } from "../db/client";
import type { TestHarness, TestResponse } from "./helpers";

/** An anonymous delivery read (no admin key). */
export function get(h: TestHarness, path: string, headers: Record<string, string> = {}): Promise<TestResponse> {
  return h.request("GET", path, { key: null, headers });
}

export async function translate(h: TestHarness, ref: string, nodeId: string, locale: string, body: Record<string, unknown>): Promise<void> {
  const res = await h.request("PUT", `/admin/p/${ref}/nodes/${nodeId}/translations/${locale}`, { body });
  if (res.status !== 200) throw new Error(`translate failed: ${res.status} ${res.text}`);
}

export async function transition(h: TestHarness, ref: string, nodeId: string, action: "publish" | "unpublish" | "archive" | "restore"): Promise<void> {
  const res = await h.request("POST", `/admin/p/${ref}/nodes/${nodeId}/${action}`);
  if (res.status !== 200) throw new Error(`${action} failed: ${res.status} ${res.text}`);
}

export async function patchNode(h: TestHarness, ref: string, nodeId: string, body: Record<string, unknown>): Promise<void> {
  const res = await h.request("PATCH", `/admin/p/${ref}/nodes/${nodeId}`, { body });
  if (res.status !== 200) throw new Error(`patch failed: ${res.status} ${res.text}`);
}

/** Polls `read` until `done` holds or `ms` pass; returns the last value and the time it took. */
export async function until<T>(read: () => Promise<T>, done: (v: T) => boolean, ms: number): Promise<{ value: T; elapsed: number }> {
  const start = performance.now();
  for (;;) {
    const value = await read();
    const elapsed = performance.now() - start;
    if (done(value) || elapsed > ms) return { value, elapsed };
    await new Promise((r) => setTimeout(r, 20));
  }
}

/**
 * A small XML well-formedness check (enough for sitemaps): one root, balanced and properly nested
 * tags, quoted attributes without duplicates, only the five predefined entities or character
 * references, no stray `<` or `&`. Returns the problem, or null.
 */
export function xmlProblem(xml: string): string | null {
  let i = 0;
  if (xml.startsWith("<?xml")) {
    const end = xml.indexOf("?>");
    if (end < 0) return "unterminated XML declaration";
    i = end + 2;
  }
  const stack: string[] = [];
  let roots = 0;
  const NAME = /^[A-Za-z_][\w.:-]*/;
  const textOk = (s: string): boolean => !/[<>]/.test(s) && !/&(?!(?:amp|lt|gt|quot|apos|#\d+|#x[0-9a-fA-F]+);)/.test(s);
  while (i < xml.length) {
    const lt = xml.indexOf("<", i);
    const text = lt < 0 ? xml.slice(i) : xml.slice(i, lt);
    if (!textOk(text)) return `bad character data near ${i}`;
    if (text.trim() !== "" && stack.length === 0) return `text outside the root near ${i}`;
    if (lt < 0) break;
    const gt = xml.indexOf(">", lt);
    if (gt < 0) return `unterminated tag at ${lt}`;
    const tag = xml.slice(lt + 1, gt);
    i = gt + 1;
    if (tag.startsWith("/")) {
      const name = tag.slice(1).trim();
      if (stack.pop() !== name) return `mismatched </${name}> at ${lt}`;
      continue;
    }
    const selfClosing = tag.endsWith("/");
    const body = selfClosing ? tag.slice(0, -1) : tag;
    const m = NAME.exec(body);
    if (!m) return `bad tag name at ${lt}`;
    const attrs = body.slice(m[0].length);
    const seen = new Set<string>();
    const ATTR = /\s+([A-Za-z_][\w.:-]*)\s*=\s*("([^"<]*)"|'([^'<]*)')/y;
    let pos = 0;
    while (pos < attrs.trimEnd().length) {
      ATTR.lastIndex = pos;
      const a = ATTR.exec(attrs);
      if (!a) return `bad attribute syntax in <${m[0]}> at ${lt}`;
      if (seen.has(a[1]!)) return `duplicate attribute ${a[1]} at ${lt}`;
      seen.add(a[1]!);
      if (!textOk(a[3] ?? a[4] ?? "")) return `bad attribute value at ${lt}`;
      pos = ATTR.lastIndex;
    }
    if (stack.length === 0) roots += 1;
    if (roots > 1) return "more than one root element";
    if (!selfClosing) stack.push(m[0]);
  }
  if (stack.length > 0) return `unclosed <${stack[stack.length - 1]}>`;
  return roots === 1 ? null : "no root element";
}

function decodeXml(s: string): string {
  return s.replace(/&(amp|lt|gt|quot|apos);/g, (_, e: string) => ({ amp: "&", lt: "<", gt: ">", quot: '"', apos: "'" })[e]!);
}

/** The <url> entries of a urlset: loc, lastmod and the hreflang → href alternates. */
export function urlsOf(xml: string): { loc: string; lastmod: string; alternates: Record<string, string> }[] {
  return [...xml.matchAll(/<url>([\s\S]*?)<\/url>/g)].map((m) => {
    const alternates: Record<string, string> = {};
    for (const l of m[1]!.matchAll(/<xhtml:link rel="alternate" hreflang="([^"]+)" href="([^"]+)"\/>/g)) alternates[decodeXml(l[1]!)] = decodeXml(l[2]!);
    return {
      loc: decodeXml(/<loc>([^<]*)<\/loc>/.exec(m[1]!)?.[1] ?? ""),
      lastmod: /<lastmod>([^<]*)<\/lastmod>/.exec(m[1]!)?.[1] ?? "",
      alternates,
    };
  });
}

/**
 * The Db with every query it runs seen first by `before` (which may throw to fail it as a
 * vanished server would): select/execute calls and the prepared statements delivery reads run
 * through the session (src/delivery/prepared.ts).
 */
export function watchedDb(db: Db, before: () => void): Db {
  const session = (s: object): object =>
    new Proxy(s, {
      get(target, prop, receiver) {
        const v = Reflect.get(target, prop, receiver);
        if (prop !== "prepareQuery" || typeof v !== "function") return v;
        return (...args: unknown[]) => {
          before();
          return (v as (...a: unknown[]) => unknown).apply(target, args);
        };
      },
    });
  return new Proxy(db, {
    get(target, prop, receiver) {
      const v = Reflect.get(target, prop, receiver);
      if (prop === "session") return session(v as object);
      if (typeof v !== "function" || (prop !== "select" && prop !== "execute")) return v;
      return (...args: unknown[]) => {
        before();
        return (v as (...a: unknown[]) => unknown).apply(target, args);
      };
    },
  });
}

/** The Db with its queries counted. */
export function countingDb(db: Db): { db: Db; calls: () => number } {
  let n = 0;
  return { db: watchedDb(db, () => void (n += 1)), calls: () => n };
}

/** The same database with NOTIFY never delivered: only the version check or the writer's own announcement refreshes. */
export function deafHandle(handle: DbHandle): DbHandle {
  return { ...handle, listen: async () => async () => {} };
}

/** The Db with its queries counted; once armed, the queries past the allowance fail as if the server were gone. */
export function breakableDb(db: Db): { db: Db; calls: () => number; failAfter: (allowed: number | null) => void } {
  let n = 0;
  let left: number | null = null;
  const watched = watchedDb(db, () => {
    n += 1;
    if (left !== null && left-- <= 0) throw Object.assign(new Error("connect ECONNREFUSED"), { code: "ECONNREFUSED" });
  });
  return { db: watched, calls: () => n, failAfter: (allowed) => void (left = allowed) };
}
