import { describe, expect, it } from "vitest";
import { applyPatch } from "../src/sidebar/entity-patch";

describe("applying the host's entity patches", () => {
  const base = { items: [{ id: "a", status: "active" }], "a/b": 1, gone: true };

  it("adds, appends, replaces and removes by JSON Pointer, leaving the input as it was", () => {
    const before = structuredClone(base);
    const out = applyPatch(base, [
      { op: "replace", path: "/a~1b", value: 2 },
      { op: "remove", path: "/gone" },
      { op: "replace", path: "/items/0/status", value: "resolved" },
      { op: "add", path: "/items/-", value: { id: "b" } },
      { op: "add", path: "/new", value: [] },
    ]);
    expect(out).toEqual({ items: [{ id: "a", status: "resolved" }, { id: "b" }], "a/b": 2, new: [] });
    expect(base).toEqual(before);
  });

  it("sets the whole entity with the empty path, from nothing", () => {
    expect(applyPatch(null, [{ op: "replace", path: "", value: { x: 1 } }])).toEqual({ x: 1 });
  });

  it("refuses a patch whole when one operation does not apply", () => {
    expect(applyPatch(base, [{ op: "replace", path: "/a~1b", value: 3 }, { op: "replace", path: "/items/5/status", value: "x" }])).toBeNull();
    expect(applyPatch(base, [{ op: "remove", path: "/missing" }])).toBeNull();
    expect(applyPatch(base, [{ op: "replace", path: "/nope/deeper", value: 1 }])).toBeNull();
    expect(applyPatch(null, [{ op: "add", path: "/items/-", value: 1 }])).toBeNull();
  });
});
