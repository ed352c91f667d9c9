import fs from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { renderDoc, safeHref } from "../src/sidebar/render";

const text = (t: string) => ({ type: "text", text: t });
const para = (...children: unknown[]) => ({ type: "paragraph", children });
const doc = (...children: unknown[]) => ({ type: "doc", children });

function render(ast: unknown): HTMLElement {
  const host = document.createElement("div");
  host.append(renderDoc(document, ast));
  return host;
}

const ALLOWED_TAGS = new Set(["H2", "H3", "H4", "H5", "H6", "P", "A", "UL", "OL", "LI", "BLOCKQUOTE", "PRE", "CODE", "TABLE", "TBODY", "TR", "TH", "TD"]);

/** Nothing executable: allowed tags only, no attributes except a link's href/target/rel, safe schemes. */
function expectInert(root: HTMLElement): void {
  for (const el of Array.from(root.querySelectorAll("*"))) {
    expect(ALLOWED_TAGS.has(el.tagName), el.tagName).toBe(true);
    for (const attr of Array.from(el.attributes)) {
      expect(attr.name.startsWith("on"), attr.name).toBe(false);
      expect(el.tagName === "A" && ["href", "target", "rel"].includes(attr.name), `${el.tagName} ${attr.name}`).toBe(true);
    }
    if (el.tagName === "A") {
      expect(el.getAttribute("href") ?? "").toMatch(/^(https?:|mailto:)/);
      expect(el.getAttribute("rel")).toBe("noopener noreferrer");
      expect(el.getAttribute("target")).toBe("_blank");
    }
  }
}

describe("render AST → DOM", () => {
  it("renders every node type with DOM elements", () => {
    const root = render(
      doc(
        { type: "heading", level: 1, children: [text("Title")] },
        para(text("Hello "), { type: "link", href: "https://example.com/a", children: [text("link")] }),
        { type: "list", ordered: true, items: [{ type: "list_item", children: [para(text("one"))] }] },
        { type: "blockquote", children: [para(text("quoted"))] },
        { type: "code_block", language: "js", text: "let x = 1;" },
        { type: "table", rows: [{ type: "table_row", cells: [{ type: "table_cell", header: true, children: [text("H")] }, { type: "table_cell", header: false, children: [text("D")] }] }] },
      ),
    );
    expect(root.querySelector("h2")?.textContent).toBe("Title");
    expect(root.querySelector("p a")?.getAttribute("href")).toBe("https://example.com/a");
    expect(root.querySelector("ol li p")?.textContent).toBe("one");
    expect(root.querySelector("blockquote p")?.textContent).toBe("quoted");
    expect(root.querySelector("pre code")?.textContent).toBe("let x = 1;");
    expect(root.querySelector("th")?.textContent).toBe("H");
    expect(root.querySelector("td")?.textContent).toBe("D");
    expectInert(root);
  });

  it("keeps markup in text as text", () => {
    const payload = `<img src=x onerror="alert(1)"><script>alert(2)</script>`;
    const root = render(doc(para(text(payload)), { type: "code_block", text: payload }));
    expect(root.querySelector("img, script")).toBeNull();
    expect(root.querySelector("p")?.textContent).toBe(payload);
    expectInert(root);
  });

  it("drops dangerous links but keeps their words", () => {
    for (const href of ["javascript:alert(1)", " javascript:alert(1)", "JaVaScRiPt:alert(1)", "data:text/html,<script>alert(1)</script>", "vbscript:x", "https://user:pw@example.com/", "/relative", "file:///etc/passwd", 42, null]) {
      const root = render(doc(para({ type: "link", href, children: [text("click")] })));
      expect(root.querySelector("a"), String(href)).toBeNull();
      expect(root.textContent).toBe("click");
    }
    expect(safeHref("mailto:a@example.com")).toBe("mailto:a@example.com");
    expect(safeHref("https://example.com/x?y=1#z")).toBe("https://example.com/x?y=1#z");
  });

  it("ignores unknown nodes, extra fields and non-doc roots", () => {
    const root = render(
      doc(
        { type: "html", html: "<b>x</b>" },
        { type: "paragraph", children: [text("ok")], onclick: "alert(1)", style: "color:red", class: "evil" },
        { type: "image", src: "https://x/y.png" },
        { type: "paragraph", children: [{ type: "strong", children: [text("bold")] }, { type: "text", text: 5 }] },
        "a string",
        null,
      ),
    );
    expect(root.querySelectorAll("p")).toHaveLength(2);
    expect(root.textContent).toBe("ok");
    expectInert(root);
    expect(render({ type: "paragraph", children: [text("no doc")] }).childNodes).toHaveLength(0);
    expect(render("not an object").childNodes).toHaveLength(0);
  });

  it("bounds nesting depth", () => {
    let node: unknown = para(text("deep"));
    for (let i = 0; i < 5000; i++) node = { type: "blockquote", children: [node] };
    const root = render(doc(node));
    expect(root.querySelectorAll("blockquote").length).toBeLessThanOrEqual(33);
    expect(root.textContent).toBe("");
  });

  it("renders the XSS corpora inertly (text, href, code, table cell)", () => {
    const base = process.env.LAIKA_CORPORA ?? path.join(__dirname, "..", "..", "..", "shared", "corpora");
    const files = ["dompurify-fixtures.json", "blns.json"].map((f) => path.join(base, "xss", f));
    if (!files.every((f) => fs.existsSync(f))) {
      if (process.env.LAIKA_REQUIRE_CORPORA === "1") throw new Error(`corpora missing under ${base}`);
      console.log(`skipped: XSS corpora not found under ${base}`);
      return;
    }
    let count = 0;
    for (const f of files) {
      for (const entry of JSON.parse(fs.readFileSync(f, "utf8")) as unknown[]) {
        const p = typeof entry === "string" ? entry : (entry as { payload?: unknown }).payload;
        if (typeof p !== "string") continue;
        count++;
        const root = render(
          doc(
            { type: "heading", level: 2, children: [text(p)] },
            para(text(p), { type: "link", href: p, children: [text(p)] }),
            { type: "code_block", language: p, text: p },
            { type: "table", rows: [{ type: "table_row", cells: [{ type: "table_cell", header: true, children: [text(p)] }] }] },
          ),
        );
        expectInert(root);
        expect(root.querySelector("h3")?.textContent).toBe(p);
      }
    }
    expect(count).toBeGreaterThan(700);
  });
});
