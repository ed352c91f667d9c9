/**
 * The conversation's agent state (docs/conversation.md#agent-state: what the
 * agent knows, assumes and expects), as the host's `session` and
 * `entity_patch` events leave it (`state.ts`), under the conversation as a disclosure: a button with
 * `aria-expanded`, collapsed by default, that opens a panel of plain text.
 *
 * Everything is text through `textContent`: the state repeats model output
 * and page titles, so nothing of it is parsed as HTML.
 *
 * Open items are provisional: the agent's reading of what the user may want,
 * kept until the user's intent is clear. "Forget what you assumed" asks the
 * host to clear the assumptions, the hypotheses and those items; the panel
 * changes when the host's `entity_patch` arrives, never before.
 */
import type { ConversationAgentState } from "../generated/wire.js";

/** One line saying what the state holds ("2 open items, 1 assumption, 3 known"): what it has none of goes unsaid; "" when it holds nothing. */
export function agentStateSummary(state: ConversationAgentState): string {
  const open = state.items.filter((i) => i.status === "active").length;
  const held = state.assumptions.filter((a) => a.confidence > 0).length;
  const known = state.current_understanding.entities.length;
  const count = (n: number, one: string, many: string): string | null => (n ? `${n} ${n === 1 ? one : many}` : null);
  return [count(open, "open item", "open items"), count(held, "assumption", "assumptions"), known ? `${known} known` : null]
    .filter((p): p is string => p !== null)
    .join(", ");
}

/** Whether the state holds anything "Forget what you assumed" would clear. */
export function hasAssumed(state: ConversationAgentState): boolean {
  return state.assumptions.length > 0 || state.tentative_hypotheses.length > 0 || state.items.some((i) => i.status === "active");
}

let nextId = 0;

export class AgentStateView {
  readonly root: HTMLElement;
  private readonly toggle: HTMLButtonElement;
  private readonly panel: HTMLElement;
  private readonly forgetButton: HTMLButtonElement;

  /** `forget`: the user pressed "Forget what you assumed". */
  constructor(
    private readonly doc: Document,
    forget: () => void = () => undefined,
  ) {
    this.root = doc.createElement("div");
    this.root.className = "agent-state";
    this.root.hidden = true;
    this.toggle = doc.createElement("button");
    this.toggle.type = "button";
    this.toggle.className = "agent-state-toggle";
    this.panel = doc.createElement("div");
    this.panel.className = "agent-state-panel";
    this.panel.id = `agent-state-${++nextId}`;
    this.panel.hidden = true;
    this.toggle.setAttribute("aria-controls", this.panel.id);
    this.toggle.setAttribute("aria-expanded", "false");
    this.toggle.addEventListener("click", () => this.setOpen(this.toggle.getAttribute("aria-expanded") !== "true"));
    this.forgetButton = doc.createElement("button");
    this.forgetButton.type = "button";
    this.forgetButton.className = "agent-state-forget";
    this.forgetButton.textContent = "Forget what you assumed";
    this.forgetButton.addEventListener("click", () => {
      this.forgetButton.disabled = true;
      forget();
    });
    this.root.append(this.toggle, this.panel);
  }

  /** Shows `state`; an open panel stays open. */
  show(state: ConversationAgentState): void {
    const summary = agentStateSummary(state);
    // A state that holds nothing gets no line under the answer.
    this.root.hidden = summary === "";
    if (!summary) this.setOpen(false);
    this.toggle.textContent = `What Laika keeps in mind: ${summary}`;
    this.forgetButton.disabled = !hasAssumed(state);
    this.panel.replaceChildren(...this.sections(state), this.forgetButton);
  }

  /** The host refused to forget: the button may be pressed again. */
  forgetFailed(): void {
    this.forgetButton.disabled = false;
  }

  /** Hides it (a new conversation). */
  clear(): void {
    this.root.hidden = true;
    this.setOpen(false);
    this.panel.replaceChildren();
  }

  private setOpen(open: boolean): void {
    this.panel.hidden = !open;
    this.toggle.setAttribute("aria-expanded", String(open));
  }

  private sections(state: ConversationAgentState): HTMLElement[] {
    const out: HTMLElement[] = [];
    const section = (title: string, lines: string[]): void => {
      if (!lines.length) return;
      const h = this.doc.createElement("h3");
      h.textContent = title;
      const ul = this.doc.createElement("ul");
      for (const line of lines) {
        const li = this.doc.createElement("li");
        li.textContent = line;
        ul.append(li);
      }
      out.push(h, ul);
    };
    section(
      "Items",
      state.items.map((i) => `${i.title} (${i.kind}, ${i.status === "active" ? "provisional" : i.status})${i.details ? `: ${i.details}` : ""}`),
    );
    section(
      "Assumptions",
      state.assumptions.map((a) =>
        a.confidence > 0
          ? `${a.hypothesis} (${Math.round(a.confidence * 100)} % sure)`
          : `${a.hypothesis} (retracted)`,
      ),
    );
    section(
      "Known",
      state.current_understanding.entities.map((e) => `${e.name || e.id} (${e.kind})`),
    );
    section(
      "Expected",
      state.expectations.map((x) => `${x.action}: ${x.expected_outcome}${x.invariant ? ` (${x.invariant})` : ""}`),
    );
    section(
      "To explore",
      state.tentative_hypotheses.map((t) => `${t.hypothesis}${t.reason ? ` (${t.reason})` : ""}`),
    );
    return out;
  }
}
