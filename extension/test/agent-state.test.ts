import { describe, expect, it } from "vitest";
import { AgentStateView, agentStateSummary } from "../src/sidebar/agent-state";
import type { EntityPatchMessage, ConversationAgentState } from "../src/generated/wire";
import { checkHostMessage } from "../src/shared/validate";
import { htmlDoc } from "./helpers";

function state(): ConversationAgentState {
  return {
    sessionId: "c-1",
    current_understanding: {
      entities: [{ id: "col-1", kind: "collection", name: "Oslo <b>trip</b>" }, { id: "https://example.com/", kind: "page" }],
      dependencies: [],
    },
    assumptions: [
      { id: "a1", hypothesis: "The user travels in May", confidence: 0.7 },
      { id: "a2", hypothesis: "The user flies", confidence: 0 },
    ],
    expectations: [],
    tentative_hypotheses: [{ id: "h1", hypothesis: "A night train instead", reason: "cheaper" }],
    items: [
      { id: "q1", kind: "question", title: "Which hotel?", status: "active", createdAt: "2026-11-24T10:00:00.000Z", updatedAt: "2026-11-24T10:00:00.000Z" },
      { id: "q2", kind: "task", title: "Book", status: "resolved", createdAt: "2026-11-24T10:00:00.000Z", updatedAt: "2026-11-24T10:00:00.000Z" },
    ],
    lastSummarizedAt: "2026-11-24T10:00:01.000Z",
  };
}

describe("the agent state disclosure", () => {
  it("is a valid host message on the wire", () => {
    const msg: EntityPatchMessage = {
      type: "entity_patch", id: "8a3c4e1d-6b1f-4e55-9d0a-3c2b1a0f9e8d", reply_to: "turn-1",
      conversation_id: "c-1", turn: 1, source: "summarizer", entity: "agent_state", entity_id: "c-1",
      patch: [{ op: "replace", path: "", value: state() }],
    };
    const r = checkHostMessage(msg);
    expect(r.ok ? "" : r.error).toBe("");
  });

  it("is collapsed by default and opens with its button", () => {
    const doc = htmlDoc("<div id=m></div>");
    const view = new AgentStateView(doc);
    doc.getElementById("m")?.append(view.root);
    expect(view.root.hidden).toBe(true);
    view.show(state());
    expect(view.root.hidden).toBe(false);
    const toggle = view.root.querySelector("button") as HTMLButtonElement;
    const panel = view.root.querySelector(".agent-state-panel") as HTMLElement;
    expect(toggle.getAttribute("aria-expanded")).toBe("false");
    expect(toggle.getAttribute("aria-controls")).toBe(panel.id);
    expect(panel.hidden).toBe(true);
    expect(toggle.textContent).toBe("What Laika keeps in mind: 1 open item, 1 assumption, 2 known");
    toggle.click();
    expect(toggle.getAttribute("aria-expanded")).toBe("true");
    expect(panel.hidden).toBe(false);
    const lines = Array.from(panel.querySelectorAll("li")).map((li) => li.textContent);
    expect(lines).toContain("Which hotel? (question, provisional)");
    expect(lines).toContain("The user travels in May (70 % sure)");
    expect(lines).toContain("The user flies (retracted)");
    expect(lines).toContain("Oslo <b>trip</b> (collection)");
    expect(lines).toContain("https://example.com/ (page)");
    expect(lines).toContain("A night train instead (cheaper)");
    // Text only: markup in the state is never parsed.
    expect(panel.querySelector("b")).toBeNull();
    // A new snapshot keeps the panel open; a new conversation closes and hides it.
    view.show({ ...state(), items: [] });
    expect(panel.hidden).toBe(false);
    expect(toggle.textContent).toBe("What Laika keeps in mind: 1 assumption, 2 known");
    view.clear();
    expect(view.root.hidden).toBe(true);
    expect(toggle.getAttribute("aria-expanded")).toBe("false");
  });

  it("counts only what is open or held", () => {
    expect(agentStateSummary({ ...state(), assumptions: [] })).toBe("1 open item, 2 known");
    const none = { ...state(), items: [], assumptions: [], current_understanding: { ...state().current_understanding, entities: [] } };
    expect(agentStateSummary(none)).toBe("");
    const view = new AgentStateView(document);
    view.show(none);
    expect(view.root.hidden).toBe(true);
  });

  it("has a Forget button that asks once and waits for the host's patch", () => {
    const doc = htmlDoc("<div id=m></div>");
    let asked = 0;
    const view = new AgentStateView(doc, () => asked++);
    view.show(state());
    const forget = view.root.querySelector(".agent-state-forget") as HTMLButtonElement;
    expect(forget.textContent).toBe("Forget what you assumed");
    expect(forget.disabled).toBe(false);
    forget.click();
    expect(asked).toBe(1);
    // Nothing changes before the host's patch: the button only waits.
    expect(forget.disabled).toBe(true);
    expect(view.root.querySelector(".agent-state-panel")?.textContent).toContain("The user travels in May");
    view.forgetFailed();
    expect(forget.disabled).toBe(false);
    // The state the host sends back holds nothing to forget.
    const forgotten: ConversationAgentState = {
      ...state(),
      assumptions: [],
      tentative_hypotheses: [],
      items: state().items.map((i) => (i.status === "active" ? { ...i, status: "discarded" } : i)),
    };
    view.show(forgotten);
    expect(forget.disabled).toBe(true);
    expect(view.root.querySelector(".agent-state-panel")?.textContent).not.toContain("The user travels in May");
  });
});
