import { describe, expect, it } from "vitest";
import { HandleRegistry } from "../src/content/handles";
import { buildObservation } from "../src/content/observe";
import { describeFrame, frameDocument, listFrames, MAX_FRAME_DEPTH, MAX_FRAMES } from "../src/content/frames";
import { checkExtensionMessage } from "../src/shared/validate";
import type { Observation } from "../src/generated/wire";
import { htmlDoc } from "./helpers";

/** jsdom loads no frame documents: fill a same-origin frame by hand. */
function fill(frame: Element | null, html: string, title = ""): Document {
  const doc = frameDocument(frame as Element);
  if (doc === null) throw new Error("frame has no document");
  const parsed = htmlDoc(html).body;
  doc.body.replaceChildren(...Array.from(parsed.childNodes).map((n) => doc.importNode(n, true)));
  if (title) doc.title = title;
  return doc;
}

/** What the top frame sees of another origin's frame: no document. */
function crossOrigin(frame: Element | null): void {
  Object.defineProperty(frame, "contentDocument", { get: () => null });
}

function wireValid(obs: Observation): string {
  const r = checkExtensionMessage({ type: "turn", id: "t-1", message: { text: "x" }, task: { name: "web.answer" }, observation: obs });
  return r.ok ? "" : r.error;
}

describe("embedded frames", () => {
  it("reads a same-origin frame's text in place and names another origin's frame as not read", () => {
    const doc = htmlDoc(
      `<main><h1>Shop</h1><p>Before the frame.</p>
       <iframe id=same title="Opening hours"></iframe>
       <iframe id=other src="https://maps.example:8443/embed?q=1" title="Store map"></iframe>
       <iframe id=hidden style="display:none"></iframe>
       <p>After the frame.</p></main>`,
      "https://shop.example/page",
    );
    fill(doc.getElementById("same"), "<h2>Hours</h2><p>The shop opens at 07:45 on Sundays.</p><script>SCRIPT-IN-FRAME</script>");
    fill(doc.getElementById("hidden"), "<p>HIDDEN-FRAME-TEXT</p>");
    crossOrigin(doc.getElementById("other"));

    const obs = buildObservation(doc, new HandleRegistry());
    const lines = (obs.summary.text ?? "").split("\n");
    // The frame's blocks sit between the text before and after it.
    expect(lines).toEqual(["H1: Shop", "Before the frame.", "H2: Hours", "The shop opens at 07:45 on Sundays.", "After the frame."]);
    expect(JSON.stringify(obs)).not.toContain("SCRIPT-IN-FRAME");
    expect(JSON.stringify(obs)).not.toContain("HIDDEN-FRAME-TEXT");
    expect(obs.summary.frames).toEqual([
      { origin: "", title: "Opening hours", read: true },
      { origin: "https://maps.example:8443", title: "Store map", read: false },
    ]);
    expect(obs.summary.signals).toContain("cross_origin_iframe");
    expect(wireValid(obs)).toBe("");
  });

  it("has no frames field on a page without frames", () => {
    const obs = buildObservation(htmlDoc("<p>Plain page with no frames at all.</p>"), new HandleRegistry());
    expect(obs.summary.frames).toBeUndefined();
  });

  it("titles an untitled frame from its name or document, and drops non-web origins", () => {
    const doc = htmlDoc(`<iframe name="  side   panel "></iframe><iframe id=t></iframe><iframe id=x src="javascript:void 0"></iframe>`);
    fill(doc.getElementById("t"), "<p>x</p>", "Inner title");
    crossOrigin(doc.getElementById("x"));
    const frames = Array.from(doc.querySelectorAll("iframe")).map((f) => describeFrame(f, doc.URL));
    expect(frames).toEqual([
      { origin: "", title: "side panel", read: true },
      { origin: "", title: "Inner title", read: true },
      { origin: "", title: "", read: false },
    ]);
  });

  it("is bounded in count and in nesting depth", () => {
    const many = htmlDoc("<iframe></iframe>".repeat(MAX_FRAMES + 10));
    expect(listFrames(many, many.URL, () => true)).toHaveLength(MAX_FRAMES);

    // Each frame holds a paragraph and the next frame, deeper than the bound.
    const doc = htmlDoc("<iframe id=f></iframe>");
    let frame: Element | null = doc.getElementById("f");
    for (let level = 1; level <= MAX_FRAME_DEPTH + 2; level++) {
      const inner = fill(frame, `<p>Level ${level} text.</p><iframe id=f></iframe>`);
      frame = inner.getElementById("f");
    }
    const text = buildObservation(doc, new HandleRegistry()).summary.text ?? "";
    expect(text).toContain(`Level ${MAX_FRAME_DEPTH} text.`);
    expect(text).not.toContain(`Level ${MAX_FRAME_DEPTH + 1} text.`);
    expect(listFrames(doc, doc.URL, () => true)).toHaveLength(MAX_FRAME_DEPTH);
  });

  it("never throws on a frame whose document access throws", () => {
    const doc = htmlDoc("<iframe src='https://other.example/'></iframe>");
    const f = doc.querySelector("iframe");
    Object.defineProperty(f, "contentDocument", {
      get: () => {
        throw new Error("SecurityError");
      },
    });
    expect(frameDocument(f as Element)).toBeNull();
    expect(buildObservation(doc, new HandleRegistry()).summary.frames).toEqual([{ origin: "https://other.example", title: "", read: false }]);
  });
});
