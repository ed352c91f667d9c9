import { describe, expect, it } from "vitest";
import { HandleRegistry } from "../src/content/handles";
import { buildObservation } from "../src/content/observe";
import { highlight, runPageTool } from "../src/content/tools";
import { htmlDoc } from "./helpers";

function setup() {
  const doc = htmlDoc(`<main><p>The price is $89.00 today.</p><button id=b>Buy now</button>
    <input id=q name=q type=text aria-label=Query><select id=s aria-label=Size><option value=s>Small</option><option value=l>Large</option></select>
    <button id=off disabled>Disabled</button></main>`);
  const reg = new HandleRegistry();
  const obs = buildObservation(doc, reg);
  const handle = (text: string) => obs.summary.elements?.find((e) => e.text === text || e.label === text)?.handle_id ?? "";
  return { doc, reg, handle };
}

describe("page tools", () => {
  it("clicks, types and selects only through known handles", () => {
    const { doc, reg, handle } = setup();
    let clicks = 0;
    doc.getElementById("b")?.addEventListener("click", () => clicks++);
    expect(runPageTool(doc, reg, "browser.click", { handleId: handle("Buy now") })).toMatchObject({ ok: true });
    expect(clicks).toBe(1);
    let inputs = 0;
    doc.getElementById("q")?.addEventListener("input", () => inputs++);
    expect(runPageTool(doc, reg, "browser.type", { handleId: handle("Query"), text: "backpack" })).toMatchObject({ ok: true });
    expect((doc.getElementById("q") as HTMLInputElement).value).toBe("backpack");
    expect(inputs).toBe(1);
    expect(runPageTool(doc, reg, "browser.select", { handleId: handle("Size"), value: "Large" })).toMatchObject({ ok: true });
    expect((doc.getElementById("s") as HTMLSelectElement).value).toBe("l");
    // Forged, missing and stale handles are refused.
    expect(runPageTool(doc, reg, "browser.click", { handleId: "b" })).toMatchObject({ ok: false });
    expect(runPageTool(doc, reg, "browser.click", {})).toMatchObject({ ok: false });
    expect(runPageTool(doc, reg, "browser.click", { handleId: handle("Disabled") })).toMatchObject({ ok: false });
    expect(runPageTool(doc, reg, "browser.type", { handleId: handle("Buy now"), text: "x" })).toMatchObject({ ok: false });
    doc.getElementById("b")?.remove();
    expect(runPageTool(doc, reg, "browser.click", { handleId: handle("Buy now") })).toMatchObject({ ok: false });
    expect(clicks).toBe(1);
    expect(runPageTool(doc, reg, "browser.navigate", { url: "https://x" })).toMatchObject({ ok: false });
  });

  it("highlights a cited quote and marks the smallest element holding it", () => {
    const { doc, reg } = setup();
    expect(highlight(doc, reg, undefined, "price is $89.00")).toMatchObject({ ok: true });
    const marked = doc.querySelector("[data-laika-highlighted]");
    expect(marked?.tagName).toBe("P");
    expect(highlight(doc, reg, undefined, "not on this page at all")).toMatchObject({ ok: false });
  });
});
