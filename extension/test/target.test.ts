import { describe, expect, it } from "vitest";
import { HandleRegistry } from "../src/content/handles";
import { buildObservation } from "../src/content/observe";
import { targetMismatch } from "../src/content/target";
import { runPageTool } from "../src/content/tools";
import type { ToolTarget } from "../src/generated/wire";
import { htmlDoc } from "./helpers";

function setup() {
  const doc = htmlDoc(`<main><button id=b>Show more comments</button><a id=l href="/next">Next page</a>
    <input id=q type=search aria-label="Search the shop">
    <form id=f1><input id=note name=note aria-label="Note"></form><form id=f2></form></main>`);
  const reg = new HandleRegistry();
  const obs = buildObservation(doc, reg);
  // The target the host sends: every part of the element its verdict rested on.
  const target = (text: string): ToolTarget => {
    const e = obs.summary.elements?.find((x) => x.text === text || x.label === text);
    if (!e) throw new Error(`no ${text}`);
    const { handle_id, role, text: t, href, label, name, id, form, input_type, autocomplete } = e;
    return { handle_id, role: role ?? "", text: t ?? "", href, label, name, id, form, input_type, autocomplete };
  };
  return { doc, reg, target };
}

describe("the target re-check", () => {
  it("acts when the handle still points at the gated element", () => {
    const { doc, reg, target } = setup();
    let clicks = 0;
    doc.getElementById("b")?.addEventListener("click", () => clicks++);
    const t = target("Show more comments");
    expect(runPageTool(doc, reg, "browser.click", { handleId: t.handle_id }, t)).toMatchObject({ ok: true });
    expect(clicks).toBe(1);
    // An input's text is its (empty) accessible name: typing changes its value, not its text.
    const q = { ...target("Search the shop") };
    expect(runPageTool(doc, reg, "browser.type", { handleId: q.handle_id, text: "pack" }, q)).toMatchObject({ ok: true });
    expect(runPageTool(doc, reg, "browser.type", { handleId: q.handle_id, text: "tent" }, q)).toMatchObject({ ok: true });
  });

  it("refuses with STALE_HANDLE when the text changed", () => {
    const { doc, reg, target } = setup();
    const t = target("Show more comments");
    let clicks = 0;
    const b = doc.getElementById("b");
    b?.addEventListener("click", () => clicks++);
    if (b) b.textContent = "Delete my account";
    const r = runPageTool(doc, reg, "browser.click", { handleId: t.handle_id }, t);
    expect(r).toMatchObject({ ok: false, code: "STALE_HANDLE" });
    expect(r.ok ? "" : r.error).toContain("Delete my account");
    expect(clicks).toBe(0);
  });

  it("refuses with STALE_HANDLE when the role changed", () => {
    const { doc, reg, target } = setup();
    const t = target("Next page");
    doc.getElementById("l")?.setAttribute("role", "button");
    expect(targetMismatch(doc.getElementById("l") as Element, t)).toContain("now button");
    expect(runPageTool(doc, reg, "browser.click", { handleId: t.handle_id }, t)).toMatchObject({ ok: false, code: "STALE_HANDLE" });
  });

  it("refuses a removed element, or a handle other than the gated one", () => {
    const { doc, reg, target } = setup();
    const t = target("Show more comments");
    const other = target("Next page");
    expect(runPageTool(doc, reg, "browser.click", { handleId: other.handle_id }, t)).toMatchObject({ ok: false, code: "STALE_HANDLE" });
    doc.getElementById("b")?.remove();
    expect(runPageTool(doc, reg, "browser.click", { handleId: t.handle_id }, t)).toMatchObject({ ok: false, code: "STALE_HANDLE" });
  });

  it("refuses with STALE_HANDLE when the link, label, name or form changed", () => {
    const { doc, reg, target } = setup();
    const link = target("Next page");
    doc.getElementById("l")?.setAttribute("href", "https://evil.example/steal");
    expect(targetMismatch(doc.getElementById("l") as Element, link)).toContain("href");
    expect(runPageTool(doc, reg, "browser.click", { handleId: link.handle_id }, link)).toMatchObject({ ok: false, code: "STALE_HANDLE" });

    const note = target("Note");
    const field = doc.getElementById("note") as HTMLInputElement;
    expect(targetMismatch(field, note)).toBeNull();
    field.setAttribute("aria-label", "Email address");
    expect(targetMismatch(field, note)).toContain("label");
    field.setAttribute("aria-label", "Note");
    field.setAttribute("name", "email");
    expect(targetMismatch(field, note)).toContain("name");
    field.setAttribute("name", "note");
    doc.getElementById("f2")?.appendChild(field);
    expect(targetMismatch(field, note)).toContain("form");
    expect(runPageTool(doc, reg, "browser.type", { handleId: note.handle_id, text: "hi" }, note)).toMatchObject({
      ok: false,
      code: "STALE_HANDLE",
    });
    expect(field.value).toBe("");
  });

  it("uses the same role and text as observations", () => {
    const { doc, target } = setup();
    const t = target("Show more comments");
    expect(targetMismatch(doc.getElementById("b") as Element, t)).toBeNull();
    expect(targetMismatch(doc.getElementById("b") as Element, { ...t, text: "Show more" })).not.toBeNull();
  });
});
