import { describe, expect, it } from "vitest";
import { PartAssembler } from "../src/shared/parts";
import type { PartMessage } from "../src/generated/wire";

function split(id: string, message: unknown, pieces: number): PartMessage[] {
  const text = JSON.stringify(message);
  const size = Math.ceil(text.length / pieces);
  const out: PartMessage[] = [];
  for (let i = 0; i < pieces; i++) {
    out.push({ type: "part", id: `p-${id}-${i}`, part_of: id, index: i, count: pieces, data: text.slice(i * size, (i + 1) * size) });
  }
  return out;
}

const big = { type: "history.export.result", id: "m1", reply_to: "export-1", format: "html", export: "<p>é😀</p>".repeat(1000) };

describe("part reassembly", () => {
  it("reassembles in order and out of order", () => {
    const a = new PartAssembler();
    const parts = split("m1", big, 4);
    for (const p of parts.slice(0, 3)) expect(a.add(p).kind).toBe("pending");
    const last = parts[3];
    if (!last) throw new Error("no part");
    expect(a.add(last)).toEqual({ kind: "complete", value: big });
    const b = new PartAssembler();
    const reversed = [...split("m1", big, 5)].reverse();
    const outcomes = reversed.map((p) => b.add(p));
    expect(outcomes.at(-1)).toEqual({ kind: "complete", value: big });
    expect(b.pendingCount).toBe(0);
  });

  it("keeps interleaved messages apart", () => {
    const a = new PartAssembler();
    const m2 = { ...big, id: "m2", reply_to: "export-2", export: "other" };
    const p1 = split("m1", big, 3);
    const p2 = split("m2", m2, 3);
    const order = [p1[0], p2[0], p2[2], p1[1], p2[1], p1[2]];
    const done = order.map((p) => (p ? a.add(p) : null)).filter((o) => o?.kind === "complete");
    expect(done.map((o) => (o?.kind === "complete" ? (o.value as { id: string }).id : ""))).toEqual(["m2", "m1"]);
  });

  it("refuses inconsistent, repeated, out-of-range and oversized parts", () => {
    const a = new PartAssembler();
    const [p0, p1] = split("m1", big, 3);
    if (!p0 || !p1) throw new Error("no parts");
    a.add(p0);
    expect(a.add({ ...p1, count: 4 }).kind).toBe("error");
    expect(a.pendingCount).toBe(0);
    a.add(p0);
    expect(a.add(p0).kind).toBe("error");
    expect(a.add({ ...p0, index: 3 }).kind).toBe("error");
    expect(a.add({ ...p0, index: -1 }).kind).toBe("error");
    const small = new PartAssembler(100);
    expect(small.add({ ...p0, data: "x".repeat(101) }).kind).toBe("error");
    expect(small.pendingCount).toBe(0);
  });

  it("reports reassembled text that is not JSON", () => {
    const a = new PartAssembler();
    a.add({ type: "part", id: "a", part_of: "z", index: 0, count: 2, data: '{"type":' });
    expect(a.add({ type: "part", id: "b", part_of: "z", index: 1, count: 2, data: "oops" }).kind).toBe("error");
  });

  it("reset drops everything pending", () => {
    const a = new PartAssembler();
    const [p0] = split("m1", big, 2);
    if (!p0) throw new Error("no part");
    a.add(p0);
    a.reset();
    expect(a.pendingCount).toBe(0);
  });
});
