import { describe, expect, it } from "vitest";
import { HandleRegistry } from "../src/content/handles";
import { buildObservation, chunkText, parseCount, resolveLimits } from "../src/content/observe";
import { checkExtensionMessage } from "../src/shared/validate";
import type { Observation } from "../src/generated/wire";
import { fixture, htmlDoc } from "./helpers";

/** The observation inside a turn must pass the wire schema (same fields the host accepts). */
function expectWireValid(obs: Observation): void {
  const turn = { type: "turn", id: "t-1", message: { text: "x" }, task: { name: "web.summarize" }, observation: obs };
  const r = checkExtensionMessage(turn);
  expect(r.ok ? "" : r.error).toBe("");
}

describe("observation builder: article", () => {
  const doc = fixture("article.html");
  const reg = new HandleRegistry();
  const obs = buildObservation(doc, reg);
  const s = obs.summary;
  const json = JSON.stringify(obs);

  it("writes structured text with the seed's prefixes", () => {
    const lines = (s.text ?? "").split("\n");
    expect(lines).toContain("H1: Solar panels on city roofs");
    expect(lines).toContain("H2: How much power");
    expect(lines).toContain("- A typical school roof produces 120 MWh per year.");
    expect(lines).toContain("  - Most of it is used on site.");
    expect(lines).toContain("> Every flat roof is a power plant waiting to happen.");
    expect(lines).toContain("Code: output = area * irradiance * efficiency");
    expect(lines).toContain("Code: print(output)");
    expect(lines).toContain("Term: kWp");
    expect(lines).toContain("Definition: Peak power under standard test conditions.");
    expect(lines).toContain("Caption: The roof of the Hillside school.");
    expect(s.text).toContain("Cities are covering flat roofs");
  });

  it("never captures form values, hidden text or script text", () => {
    for (const secret of ["SECRET-VALUE-EMAIL", "SECRET-HIDDEN-TOKEN", "SECRET-TEXTAREA", "SECRET-SELECTED", "SCRIPT-TEXT", "HIDDEN-CSS-TEXT", "HIDDEN-ATTR-TEXT", "ARIA-HIDDEN-TEXT"]) {
      expect(json).not.toContain(secret);
    }
    expect(json).not.toContain("Invisible button");
  });

  it("describes interactive elements with handles that resolve to them", () => {
    const els = s.elements ?? [];
    const ids = els.map((e) => e.handle_id);
    expect(new Set(ids).size).toBe(ids.length);
    for (const e of els) {
      expect(e.handle_id).toMatch(/^laika-\d+$/);
      expect(reg.resolve(e.handle_id)).not.toBeNull();
    }
    const email = els.find((e) => e.name === "email");
    expect(email).toMatchObject({ role: "textbox", tag: "input", input_type: "email", autocomplete: "email", label: "Email address", text: "" });
    const card = els.find((e) => e.name === "card");
    expect(card).toMatchObject({ autocomplete: "cc-number", label: "Card number" });
    expect(els.find((e) => e.name === "token")).toBeUndefined();
    // Form membership and the submit type let the host's gate see a form submission.
    expect(els.find((e) => e.text === "Send")).toMatchObject({ role: "button", tag: "button", input_type: "submit", form: "form-1" });
    expect(email?.form).toBe("form-1");
    expect(reg.resolve(els.find((e) => e.text === "Send")?.handle_id ?? "")?.tagName).toBe("BUTTON");
    // javascript: links keep their words and only their scheme (so the gate
    // sees a script link); credentials are stripped.
    const bad = els.find((e) => e.text === "Bad link");
    expect(bad?.href).toBe("javascript:");
    expect(els.find((e) => e.text?.startsWith("Read more"))?.href).toBe("https://example.org/more?x=1");
  });

  it("keeps handles out of the DOM", () => {
    expect(new doc.defaultView!.XMLSerializer().serializeToString(doc)).not.toContain("laika-");
  });

  it("has a primary block with a handle, an outline and no access signals", () => {
    expect(s.primary?.text).toContain("payback period has fallen");
    // Blocks stay on their own lines: a heading never runs into a paragraph.
    expect(s.primary?.text).toMatch(/(^|\n)How much power\n/);
    expect(s.primary?.handle_id).toMatch(/^laika-\d+$/);
    expect(s.outline?.map((o) => `${o.level}:${o.text}`)).toEqual(["1:Solar panels on city roofs", "2:How much power"]);
    expect(s.signals ?? []).toEqual([]);
  });

  it("matches the wire schema exactly (no unknown fields)", () => {
    expectWireValid(obs);
  });

  it("keeps an element's handle across observations and forgets all on clear", () => {
    const again = buildObservation(doc, reg);
    expect(again.summary.elements?.map((e) => e.handle_id)).toEqual(s.elements?.map((e) => e.handle_id));
    const first = s.elements?.[0]?.handle_id ?? "";
    reg.clear();
    expect(reg.resolve(first)).toBeNull();
  });
});

describe("observation builder: listing, comments, signals, chunks", () => {
  it("finds listing items with comment counts and ranks discussions", () => {
    const obs = buildObservation(fixture("listing.html"), new HandleRegistry());
    const items = obs.summary.items ?? [];
    expect(items.map((i) => i.title)).toEqual([
      "Rust 2.0 released with a new borrow checker",
      "A tiny SQLite extension for vectors",
      "Why we moved our CI to a single machine",
      "Show: a sidebar that reads pages locally",
    ]);
    expect(items.map((i) => i.comment_count)).toEqual([136, 12, 1204, undefined]);
    expect(obs.summary.top_discussions?.map((d) => d.comment_count)).toEqual([1204, 136, 12]);
    expectWireValid(obs);
  });

  it("parses comment counts", () => {
    expect(parseCount("1,204 comments")).toBe(1204);
    expect(parseCount("2.5k comments")).toBe(2500);
    expect(parseCount("1 comment")).toBe(1);
    expect(parseCount("discuss")).toBeUndefined();
  });

  it("extracts threaded comments with author, age, score and depth", () => {
    const obs = buildObservation(fixture("comments.html"), new HandleRegistry());
    const cs = obs.summary.comments ?? [];
    expect(cs).toHaveLength(3);
    expect(cs[0]).toMatchObject({ author: "ann", age: "3 hours ago", score: "42 points", depth: 1, text: "Two full days with light use, about 41 hours in my test." });
    expect(cs[1]).toMatchObject({ author: "bob", depth: 2, text: "Same here, but gaming drains it by dinner time." });
    expect(cs[2]).toMatchObject({ author: "cy", depth: 1 });
    expect(cs[2]?.score).toBeUndefined();
    expect(JSON.stringify(obs)).not.toContain("SECRET-DRAFT");
    expectWireValid(obs);
  });

  it("detects access gates and cross-origin frames", () => {
    const obs = buildObservation(fixture("gated.html", "https://paper.example.com/a"), new HandleRegistry());
    const signals = obs.summary.signals ?? [];
    for (const s of ["paywall", "consent_banner", "overlay_or_dialog", "captcha", "age_gate", "cross_origin_iframe", "sparse_text"]) {
      expect(signals).toContain(s);
    }
    expect(signals).not.toContain("pdf_viewer");
  });

  it("flags a login wall and a PDF viewer", () => {
    const login = buildObservation(htmlDoc("<p>Please sign in to continue.</p><input type=password name=pw>"), new HandleRegistry());
    expect(login.summary.signals).toContain("login_required");
    const pdf = buildObservation(htmlDoc("<embed type='application/pdf' src='a.pdf'>"), new HandleRegistry());
    expect(pdf.summary.signals).toContain("pdf_viewer");
  });

  it("splits long pages into ordered chunks within the limits", () => {
    const paras = Array.from({ length: 400 }, (_, i) => `<p>Paragraph ${i} talks about the topic at some length to fill space.</p>`).join("");
    const obs = buildObservation(htmlDoc(`<main>${paras}</main>`), new HandleRegistry(), { maxChars: 2000 });
    expect((obs.summary.text ?? "").length).toBeLessThanOrEqual(2000);
    const chunks = obs.chunks ?? [];
    expect(chunks.length).toBeGreaterThan(1);
    chunks.forEach((c, i) => {
      expect(c.chunk_index).toBe(i + 1);
      expect(c.chunk_count).toBe(chunks.length);
      expect((c.text ?? "").length).toBeLessThanOrEqual(4000);
    });
    // Chunks continue where the summary stopped.
    expect(chunks[0]?.text?.startsWith("Paragraph")).toBe(true);
    expect(obs.summary.text).toContain("Paragraph 0 ");
    expect(obs.summary.text).not.toContain(chunks[0]?.text?.split("\n")[0] ?? "x");
    expectWireValid(obs);
  });

  it("reads a 400,000-character page whole, to its last paragraph", () => {
    const words = "the council discussed budgets, roads, schools and parks once more. ".repeat(6);
    const paras = Array.from({ length: 1000 }, (_, i) => `<p>Paragraph ${i}: ${words}</p>`).join("");
    const obs = buildObservation(htmlDoc(`<main>${paras}<p>The bridge will cost 48 million euros.</p></main>`), new HandleRegistry());
    const chunks = obs.chunks ?? [];
    const total = (obs.summary.text ?? "").length + chunks.reduce((n, c) => n + (c.text ?? "").length, 0);
    expect(total).toBeGreaterThan(300_000);
    expect(chunks.at(-1)?.text).toContain("48 million euros");
    expect(obs.summary.signals ?? []).not.toContain("text_truncated");
    expectWireValid(obs);
  });

  it("says when a page is longer than it reads", () => {
    const words = "the council discussed budgets, roads, schools and parks once more. ".repeat(6);
    const paras = Array.from({ length: 2000 }, (_, i) => `<p>Paragraph ${i}: ${words}</p>`).join("");
    const obs = buildObservation(htmlDoc(`<main>${paras}<p>The bridge will cost 48 million euros.</p></main>`), new HandleRegistry());
    expect(obs.summary.signals).toContain("text_truncated");
    expect(JSON.stringify(obs)).not.toContain("48 million euros");
    expect(obs.chunks?.every((c) => c.chunk_count === obs.chunks?.length)).toBe(true);
    expectWireValid(obs);
  });

  it("bounds hostile limits and element counts", () => {
    expect(resolveLimits({ maxElements: 1e9, maxChars: -5, maxItems: Number.NaN }).maxElements).toBe(1600);
    expect(resolveLimits({ maxChars: -5 }).maxChars).toBe(8000);
    expect(resolveLimits({ maxItems: Number.NaN }).maxItems).toBe(40);
    const buttons = Array.from({ length: 300 }, (_, i) => `<button>b${i}</button>`).join("");
    const small = buildObservation(htmlDoc(buttons), new HandleRegistry(), { maxElements: 5 });
    expect(small.summary.elements?.map((e) => e.text)).toEqual(["b0", "b1", "b2", "b3", "b4"]);
  });

  it("chunkText cuts over-long lines", () => {
    const parts = chunkText("x".repeat(25), 10, 10);
    expect(parts).toEqual(["x".repeat(10), "x".repeat(10), "x".repeat(5)]);
  });
});

describe("observation builder: where a control sits, for the gate's click judgement", () => {
  const doc = htmlDoc(`<!doctype html><html lang="de-CH"><head><title>Konto</title></head><body>
    <button aria-expanded="false" aria-controls="more-panel">Details</button><div id="more-panel">x</div>
    <button aria-controls="nowhere">Ghost</button>
    <nav aria-label="Pagination"><a href="/p/2">2</a></nav>
    <fieldset><legend>Filter by brand</legend><label><input type="checkbox" name="b"> Acme</label></fieldset>
    <form method="GET"><input type="search" name="q"><button>Search</button></form>
    <form><input name="n"><button type="button">Continue</button></form>
    <div role="dialog" aria-label="Delete repository"><p>This cannot be undone.</p><button>OK</button></div>
    <div role="menuitemcheckbox" aria-checked="true">Auto-renew</div>
  </body></html>`);
  const s = buildObservation(doc, new HandleRegistry()).summary;
  const els = s.elements ?? [];
  const byText = (t: string) => els.find((e) => e.text === t || e.label === t);

  it("reports the page's language", () => {
    expect(s.lang).toBe("de-CH");
  });

  it("reports disclosures, and whether aria-controls names an element on the page", () => {
    expect(byText("Details")).toMatchObject({ expanded: false, controls: true });
    expect(byText("Ghost")).toMatchObject({ controls: false });
    expect(byText("Ghost")?.expanded).toBeUndefined();
  });

  it("reports the group a control sits in", () => {
    expect(byText("2")?.group).toBe("Pagination");
    expect(byText("Acme")).toMatchObject({ role: "checkbox", group: "Filter by brand" });
  });

  it("reports a form's method only when the page wrote one", () => {
    expect(byText("Search")).toMatchObject({ form_method: "get" });
    expect(byText("Continue")?.form).toBeDefined();
    expect(byText("Continue")?.form_method).toBeUndefined();
  });

  it("reports the dialog around a control, and checked menu items", () => {
    expect(byText("OK")?.dialog).toBe("Delete repository This cannot be undone. OK");
    expect(byText("Auto-renew")?.role).toBe("menuitemcheckbox");
    expectWireValid({ summary: s });
  });
});
