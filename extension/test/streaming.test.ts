import { describe, expect, it } from "vitest";
import { contextMeter, forgetText, readingNote, showText } from "../src/sidebar/streaming";
import type { ContextUsageMessage, TextDeltaMessage } from "../src/generated/wire";
import { checkHostMessage } from "../src/shared/validate";
import { htmlDoc } from "./helpers";

function expectWireValid(msg: unknown): void {
  const r = checkHostMessage(msg);
  expect(r.ok ? "" : r.error).toBe("");
}

function delta(text: string, index = 0, step = 1): TextDeltaMessage {
  return { type: "text_delta", id: "8a3c4e1d-6b1f-4e55-9d0a-3c2b1a0f9e8d", reply_to: "turn-1", conversation_id: "c", turn: 1, step, index, text };
}

function usage(selection: ContextUsageMessage["selection"]): ContextUsageMessage {
  const msg: ContextUsageMessage = {
    type: "context_usage", id: "51929486-8030-4d17-8c8a-ea35ec5914cf", reply_to: "turn-1",
    budget: { max_chars: 15000, max_tokens: 5000 }, used: { chars: 12000, tokens: 3000 },
    documents: [{ doc_id: "conversation", kind: "conversation", chars: 400, tokens: 100, included: true, truncated: false }],
    cut: [], redacted_strings: 0,
  };
  if (selection) msg.selection = selection;
  return msg;
}

describe("streaming text and the context meter", () => {
  it("shows words as they come and keeps a block's text across redraws", () => {
    const doc = htmlDoc("<div id=b></div>");
    const body = doc.getElementById("b") as HTMLElement;
    showText(body, delta("Night <b>trains</b> "));
    showText(body, delta("are back."));
    const el = body.querySelector(".streaming-text");
    expect(el?.textContent).toBe("Night <b>trains</b> are back.");
    expect(body.querySelector("b")).toBeNull();
    // An earlier block's render_delta redraws the area: the text comes back whole.
    body.replaceChildren(doc.createElement("h2"));
    showText(body, delta(" More"));
    expect(body.lastElementChild?.textContent).toBe("Night <b>trains</b> are back. More");
    // The next block starts its own text.
    showText(body, delta("Second", 1));
    expect(body.querySelectorAll(".streaming-text")).toHaveLength(1);
    expect(body.lastElementChild?.textContent).toBe("Second");
    forgetText(body);
    expect(body.querySelector(".streaming-text")).toBeNull();
    expectWireValid(delta("x"));
  });

  it("says how much of a long page was read and what about", () => {
    const selection = { strategy: "ranked" as const, page_chars: 400_000, sent_chars: 14_000, passages_sent: 14, passages_total: 500, chunks: [89], about: ["bridge", "cost"] };
    expect(readingNote(usage(selection))).toBe("Read 4 % of this page: the parts about bridge, cost.");
    expect(readingNote(usage(undefined))).toBeNull();
    const meter = contextMeter(htmlDoc(""), usage(selection));
    expect(meter.querySelector("meter")?.getAttribute("max")).toBe("15000");
    expect(meter.textContent).toContain("Read 4 % of this page");
    expect(meter.textContent).toContain("Earlier turns");
    expectWireValid(usage(selection));
  });

  it("says a page summarized in stages was read whole, in parts", () => {
    const selection = { strategy: "staged" as const, page_chars: 400_000, sent_chars: 400_000, passages_sent: 34, passages_total: 34, chunks: [1, 2, 3], about: [] };
    expect(readingNote(usage(selection))).toBe("Read the whole page in 34 parts, then summarized them.");
    const meter = contextMeter(htmlDoc(""), usage(selection));
    expect(meter.textContent).toContain("Read the whole page in 34 parts");
    expect(meter.textContent).not.toContain("%");
    expect(readingNote(usage({ ...selection, passages_sent: 1, passages_total: 1 }))).toBe("Read the whole page in 1 part, then summarized them.");
    expectWireValid(usage(selection));
  });
});
