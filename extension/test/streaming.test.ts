import { describe, expect, it } from "vitest";
import { contextMeter, readingNote } from "../src/sidebar/streaming";
import type { ContextUsageMessage } from "../src/generated/wire";
import { checkHostMessage } from "../src/shared/validate";
import { htmlDoc } from "./helpers";

function expectWireValid(msg: unknown): void {
  const r = checkHostMessage(msg);
  expect(r.ok ? "" : r.error).toBe("");
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

describe("the context meter", () => {
  it("says how much of a long page was read and what about", () => {
    const selection = { strategy: "ranked" as const, page_chars: 400_000, sent_chars: 14_000, passages_sent: 14, passages_total: 500, chunks: [89], about: ["bridge", "cost"] };
    expect(readingNote(usage(selection))).toBe("Read 4 % of this page: the parts about bridge, cost.");
    expect(readingNote(usage(undefined))).toBeNull();
    const meter = contextMeter(htmlDoc(""), usage(selection));
    expect(meter?.querySelector("meter")?.getAttribute("max")).toBe("15000");
    expect(meter?.textContent).toContain("Read 4 % of this page");
    expect(meter?.textContent).toContain("Earlier turns");
    // Without a model there is no context to fill: the note alone, or nothing.
    const offline = contextMeter(htmlDoc(""), usage(selection), false);
    expect(offline?.querySelector("meter")).toBeNull();
    expect(offline?.textContent).toContain("Read 4 % of this page");
    // Sent from its start until the budget was full: said so.
    const start = {
      ...usage(undefined),
      documents: [
        { doc_id: "doc:web:summary", kind: "web.observation.summary.v1", chars: 6000, tokens: 1500, included: true, truncated: false },
        { doc_id: "doc:web:chunk:1", kind: "web.observation.chunk.v1", chars: 4000, tokens: 1000, included: true, truncated: false },
        { doc_id: "doc:web:chunk:2", kind: "web.observation.chunk.v1", chars: 4000, tokens: 1000, included: false, truncated: false },
      ],
      cut: [{ doc_id: "doc:web:chunk:2", chars_removed: 4000 }, ...Array.from({ length: 20 }, (_, i) => ({ doc_id: `doc:web:chunk:${i + 3}`, chars_removed: 4500 }))],
    };
    expect(readingNote(start)).toBe("Read only the start of this page (10 %).");
    expectWireValid(start);
    const bare = { ...usage(undefined), documents: [] };
    expect(contextMeter(htmlDoc(""), bare, false)).toBeNull();
    expectWireValid(usage(selection));
  });

  it("says a page summarized in stages was read whole, in parts", () => {
    const selection = { strategy: "staged" as const, page_chars: 400_000, sent_chars: 400_000, passages_sent: 34, passages_total: 34, chunks: [1, 2, 3], about: [] };
    expect(readingNote(usage(selection))).toBe("Read the whole page in 34 parts, then summarized them.");
    expect(readingNote(usage(selection), "reading")).toBe("Reading the whole page in 34 parts, then summarizing them…");
    // While the user chooses on the estimate, nothing is said about reading.
    expect(readingNote(usage(selection), "asking")).toBeNull();
    expect(contextMeter(htmlDoc(""), usage(selection), true, "asking")?.textContent).toBe("Earlier turns of this conversation were included.");
    // A turn that ended without its answer (stopped, not chosen) never says the page was read.
    expect(readingNote(usage(selection), "unread")).toBe("The whole page (34 parts) was not read.");
    expect(contextMeter(htmlDoc(""), usage(selection), true, "unread")?.textContent).not.toContain("Read the whole page");
    expect(contextMeter(htmlDoc(""), usage(selection), true, "reading")?.textContent).toContain("Reading the whole page in 34 parts");
    const meter = contextMeter(htmlDoc(""), usage(selection));
    expect(meter?.textContent).toContain("Read the whole page in 34 parts");
    expect(meter?.textContent).not.toContain("%");
    expect(readingNote(usage({ ...selection, passages_sent: 1, passages_total: 1 }))).toBe("Read the whole page in 1 part, then summarized them.");
    expectWireValid(usage(selection));
  });
});
