/// <reference types="bun" />
import { describe, expect, test } from "bun:test";
import { childPointer, parsePointer } from "./pointer";
import { createFormStore } from "./store";
import type { EditorDoc } from "./types";

function docWithBlocks(n: number): EditorDoc {
  return {
    title: "Home",
    slug: "home",
    fields: { "a/b": 1, "m~n": 2, tags: ["x", "y"] },
    blocks: Array.from({ length: n }, (_, i) => ({ id: `b${i}`, type: "hero", data: { heading: `Heading ${i}`, body: "" } })),
  };
}

describe("pointers", () => {
  test("~0 and ~1 escape ~ and / inside a token", () => {
    const store = createFormStore(docWithBlocks(1));
    expect(parsePointer("/fields/a~1b")).toEqual(["fields", "a/b"]);
    expect(childPointer("/fields", "m~n")).toBe("/fields/m~0n");
    expect(store.get("/fields/a~1b")).toBe(1);
    expect(store.get("/fields/m~0n")).toBe(2);
    store.set("/fields/a~1b", 3);
    expect(store.getDoc().fields["a/b"]).toBe(3);
    expect(() => store.get("fields")).toThrow();
  });

  test("array indexes read, write and append; missing parents are created", () => {
    const store = createFormStore(docWithBlocks(2));
    expect(store.get("/blocks/1/data/heading")).toBe("Heading 1");
    expect(store.get("/blocks/01/data")).toBeUndefined();
    expect(store.get("/blocks/9/data")).toBeUndefined();
    store.set("/fields/tags/1", "z");
    store.set("/fields/tags/-", "w");
    expect(store.getDoc().fields.tags).toEqual(["x", "z", "w"]);
    store.set("/blocks/0/data/seo/title", "Hi");
    expect(store.getDoc().blocks[0]?.data).toEqual({ heading: "Heading 0", body: "", seo: { title: "Hi" } });
    expect(() => store.set("/blocks/5/data", {})).toThrow();
  });

  test("a set copies the path and shares everything else", () => {
    const store = createFormStore(docWithBlocks(3));
    const before = store.getDoc();
    store.set("/blocks/1/data/heading", "New");
    const after = store.getDoc();
    expect(after).not.toBe(before);
    expect(after.blocks).not.toBe(before.blocks);
    expect(after.blocks[1]).not.toBe(before.blocks[1]);
    expect(after.blocks[0]).toBe(before.blocks[0]);
    expect(after.blocks[2]).toBe(before.blocks[2]);
    expect(after.fields).toBe(before.fields);
    expect(before.blocks[1]?.data.heading).toBe("Heading 1");
  });

  test("undefined removes an object key", () => {
    const store = createFormStore(docWithBlocks(1));
    store.set("/fields/a~1b", undefined);
    expect(Object.keys(store.getDoc().fields)).toEqual(["m~n", "tags"]);
  });
});

describe("subscriptions", () => {
  test("only subscribers whose value changed are called (200 blocks)", () => {
    const store = createFormStore(docWithBlocks(200));
    const calls = new Map<string, number>();
    const watch = (p: string) => store.subscribe(p, () => calls.set(p, (calls.get(p) ?? 0) + 1));
    for (let i = 0; i < 200; i++) {
      watch(`/blocks/${i}/data/heading`);
      watch(`/blocks/${i}/data/body`);
      watch(`/blocks/${i}/type`);
    }
    watch("/blocks");
    watch("/fields/tags");
    watch("/title");
    store.set("/blocks/42/data/heading", "typed");
    expect([...calls.entries()]).toEqual([
      ["/blocks/42/data/heading", 1],
      ["/blocks", 1],
    ]);
  });

  test("setting the same value notifies nobody; a replaced container notifies changed descendants", () => {
    const store = createFormStore(docWithBlocks(3));
    let heading0 = 0;
    let heading1 = 0;
    store.subscribe("/blocks/0/data/heading", () => heading0++);
    store.subscribe("/blocks/1/data/heading", () => heading1++);
    store.set("/blocks/0/data/heading", "Heading 0");
    expect(heading0).toBe(0);
    const [a, b, c] = store.getDoc().blocks;
    store.set("/blocks", [b, a, c]);
    expect([heading0, heading1]).toEqual([1, 1]);
  });

  test("subscribeAll hears every change; unsubscribe stops it", () => {
    const store = createFormStore(docWithBlocks(1));
    let n = 0;
    const off = store.subscribeAll(() => n++);
    store.set("/title", "A");
    store.set("/slug", "a");
    off();
    store.set("/title", "B");
    expect(n).toBe(2);
  });
});

describe("dirty and reset", () => {
  test("dirty compares with the baseline; typing back the old value is clean again", () => {
    const store = createFormStore(docWithBlocks(2));
    expect(store.isDirty()).toBe(false);
    store.set("/blocks/1/data/heading", "x");
    expect(store.isDirty()).toBe(true);
    store.set("/blocks/1/data/heading", "Heading 1");
    expect(store.isDirty()).toBe(false);
    store.set("/fields/new", undefined);
    expect(store.isDirty()).toBe(false);
  });

  test("reset sets a new baseline, clears violations and notifies changed pointers", () => {
    const store = createFormStore(docWithBlocks(2));
    store.set("/title", "Changed");
    store.setViolations([
      { pointer: "/title", message: "too short", rule: "minLength" },
      { pointer: "/title", message: "bad" },
    ]);
    expect(store.violationAt("/title")).toBe("too short; bad");
    let titleCalls = 0;
    let violationCalls = 0;
    store.subscribe("/title", () => titleCalls++);
    store.subscribeViolations(() => violationCalls++);
    const next = { ...docWithBlocks(2), title: "Saved" };
    store.reset(next);
    expect(store.isDirty()).toBe(false);
    expect(store.getDoc()).toBe(next);
    expect(store.violationAt("/title")).toBeNull();
    expect([titleCalls, violationCalls]).toEqual([1, 1]);
    store.set("/title", "Again");
    expect(store.isDirty()).toBe(true);
  });
});
