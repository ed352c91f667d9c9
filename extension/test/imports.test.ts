import fs from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";

const SRC = path.join(__dirname, "..", "src");

function sources(dir: string): string[] {
  return fs.readdirSync(dir, { withFileTypes: true }).flatMap((e) => {
    const full = path.join(dir, e.name);
    if (e.isDirectory()) return sources(full);
    return e.name.endsWith(".ts") && !e.name.endsWith(".d.ts") ? [full] : [];
  });
}

/** Each source file's relative imports (type-only ones too: they tie files as much), as paths under src. */
function importGraph(): Map<string, string[]> {
  const graph = new Map<string, string[]>();
  for (const file of sources(SRC)) {
    const text = fs.readFileSync(file, "utf8");
    const targets = [...text.matchAll(/^\s*(?:import|export)\b[^;]*?\bfrom\s+"(\.{1,2}\/[^"]+)"/gms)]
      .map((m) => path.resolve(path.dirname(file), (m[1] ?? "").replace(/\.js$/, ".ts")))
      .filter((t) => fs.existsSync(t));
    graph.set(path.relative(SRC, file), targets.map((t) => path.relative(SRC, t)));
  }
  return graph;
}

/** Groups of files that import each other, directly or around a ring (Tarjan's strongly connected components). */
function circles(graph: Map<string, string[]>): string[][] {
  let next = 0;
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const out: string[][] = [];
  const visit = (v: string): void => {
    index.set(v, next);
    low.set(v, next);
    next++;
    stack.push(v);
    for (const w of graph.get(v) ?? []) {
      if (!index.has(w)) {
        visit(w);
        low.set(v, Math.min(low.get(v) ?? 0, low.get(w) ?? 0));
      } else if (stack.includes(w)) low.set(v, Math.min(low.get(v) ?? 0, index.get(w) ?? 0));
    }
    if (low.get(v) !== index.get(v)) return;
    const group: string[] = [];
    let w: string | undefined;
    do {
      w = stack.pop();
      if (w !== undefined) group.push(w);
    } while (w !== undefined && w !== v);
    if (group.length > 1 || (graph.get(v) ?? []).includes(v)) out.push(group.sort());
  };
  for (const v of graph.keys()) if (!index.has(v)) visit(v);
  return out;
}

describe("the extension's imports", () => {
  it("form no circle: every shared piece has a home both sides import", () => {
    const graph = importGraph();
    expect(graph.get("shared/share.ts")).toEqual(["shared/json.ts"]);
    expect(circles(graph)).toEqual([]);
  });

  it("are all found (the graph is not empty by a parsing slip)", () => {
    const graph = importGraph();
    expect(graph.get("background/run.ts")).toContain("background/calls.ts");
    expect(graph.get("sidebar/index.ts")?.length).toBeGreaterThan(10);
  });
});
