/**
 * One turn in the chat, drawn from its state (`state.ts`): the question, the
 * pages it read, the progress line, the context meters, the steps, the
 * answer area, the runtime badge, and once it is done the stop reason and
 * the answer's actions. Each render compares the turn's new state with the
 * one drawn last and touches only what changed. The step list is the
 * exception: it is a component fed the host's step events themselves
 * (`steps.ts`), since its approval cards keep their own countdowns.
 *
 * Everything reaches the DOM through createElement/textContent (render AST
 * via `renderDoc`).
 */
import type { AssistantMessage, ContextUsageMessage } from "../generated/wire.js";
import { isObject } from "../shared/json.js";
import type { SidebarRequest } from "../shared/messages.js";
import { answerActions } from "./actions.js";
import { setBadge } from "./badge.js";
import { citedPlace, isStructuredData, placeMarkers, renderCitations } from "./citations.js";
import { announce, h } from "./dom.js";
import { errorAdvice, retryCard, RUNTIME_CODES, runtimeErrorCard, STRUCTURED_DATA_CITATION } from "./errors.js";
import { replyButtons, retireReplies } from "./replies.js";
import { PlanCard } from "./plan-card.js";
import { plainText, renderDoc } from "./render.js";
import type { Ask, BodyItem, SidebarAction, TurnState } from "./state.js";
import { StepList, stopReasonText } from "./steps.js";
import { contextMeter, type Reading } from "./streaming.js";

/** What a turn's buttons do beyond the turn itself. */
export interface TurnActions {
  send(req: SidebarRequest): void;
  /** Ask the same again (regenerate, Retry). */
  ask(again: Ask): void;
  /** Switch to the offline runtime and ask again. */
  useOffline(again: Ask): void;
  /** Put the question back in the composer. */
  edit(ask: Ask): void;
  /** Say something in the status line (a citation with nothing to highlight). */
  inform(text: string): void;
}

function renderData(data: Record<string, unknown>): HTMLElement {
  const table = h("table", "data-table");
  const tbody = h("tbody");
  for (const [key, value] of Object.entries(data)) {
    const tr = h("tr");
    const shown = value === null ? "not on the page" : typeof value === "string" ? value : JSON.stringify(value);
    tr.append(h("th", undefined, key), h("td", value === null ? "notice" : undefined, shown));
    tbody.append(tr);
  }
  table.append(tbody);
  return table;
}

export class TurnView {
  readonly root: HTMLElement;
  private readonly progress: HTMLElement;
  private readonly steps: StepList;
  /** The plan's checklist, once the model proposed one. */
  private plan: PlanCard | null = null;
  /** The answer: the last step's `assistant` (or its streamed preview). */
  private readonly body: HTMLElement;
  /** Which runtime and model answered, and where the page went. */
  private readonly badge: HTMLElement;
  /** The context meter drawn, and the reading it was drawn for (redrawn as the reading moves on). */
  private meter: { el: HTMLElement | null; usage: ContextUsageMessage; reading: Reading } | null = null;
  /** The DOM nodes of each body item drawn, so an unchanged item keeps its nodes. */
  private drawn = new WeakMap<BodyItem, Node[]>();

  constructor(
    /** The state drawn last. */
    private turn: TurnState,
    private readonly actions: TurnActions,
  ) {
    const { ask } = turn;
    this.root = h("article", "turn");
    this.root.setAttribute("aria-label", ask.label);
    this.root.setAttribute("aria-busy", "true");
    this.root.append(h("div", "user", ask.label));
    if (ask.selection) {
      this.root.append(h("blockquote", "selection-quote", ask.selection.length > 300 ? `${ask.selection.slice(0, 300)}…` : ask.selection));
    }
    this.progress = h("div", "progress", turn.progress);
    this.steps = new StepList(document, (callId, approved, startOnly) =>
      actions.send(startOnly ? { kind: "approval", call_id: callId, approved, start_only: true } : { kind: "approval", call_id: callId, approved }),
    );
    this.body = h("div", "answer");
    this.badge = h("div", "badge");
    this.badge.hidden = true;
    this.root.append(this.progress, this.steps.el, this.body, this.badge);
  }

  /** Draws `next` over the state drawn last; `action` is what moved it (the step list takes host events as they come). */
  render(next: TurnState, action: SidebarAction): void {
    const prev = this.turn;
    this.turn = next;
    if (action.kind === "stop") {
      this.steps.stop();
      this.plan?.close("Not run: you stopped the turn.");
    }
    if (action.kind === "approval.answer") {
      if (next.plan?.callId === action.call_id) this.plan?.answered(action.accepted, action.code, action.message);
      else this.steps.approvalAnswer(action.call_id, action.accepted, action.approved, action.code, action.message);
    }
    this.renderPlan(next, prev, action);
    for (const page of next.pages.slice(prev.pages.length)) this.root.insertBefore(h("div", "page", page), this.progress);
    this.renderMeter(next);
    for (const note of prev.notes) if (!next.notes.includes(note)) this.steps.dropNote(note.step);
    for (const note of next.notes) if (!prev.notes.includes(note)) this.steps.note(note.step, plainText(note.render));
    if (action.kind === "host") this.stepEvent(action);
    if (next.body !== prev.body) this.renderBody(next);
    if (next.progress !== prev.progress) this.progress.textContent = next.progress;
    if (next.done && !prev.done) this.renderDone(next);
    if (next.runtime !== prev.runtime && next.runtime) {
      setBadge(this.badge, next.runtime.info, next.runtime.endpoint);
      this.badge.hidden = false;
    }
    if (next.ends > prev.ends) {
      this.progress.hidden = true;
      this.steps.end();
      this.plan?.close();
      this.root.setAttribute("aria-busy", "false");
    }
    if (next.done && !prev.done && next.done.msg.status === "ok") {
      announce(`Answer ready. ${plainText(next.done.answer?.render ?? null).slice(0, 300)}`);
    }
  }

  /**
   * The meter of the request the model gets last (a start-only answer's
   * usage replaces the plan its estimate was made from), its note saying
   * where the reading stands now.
   */
  private renderMeter(turn: TurnState): void {
    const usage = turn.usage.at(-1);
    const now = reading(turn);
    if (!usage || (this.meter?.usage === usage && this.meter.reading === now)) return;
    const el = contextMeter(document, usage, turn.runtime?.info.kind !== "builtin", now);
    this.meter?.el?.remove();
    if (el) this.progress.after(el);
    this.meter = { el, usage, reading: now };
  }

  /** The plan's card, made from the `plan` event, redrawn as the host's patches move the turn's plan. */
  private renderPlan(turn: TurnState, prev: TurnState, action: SidebarAction): void {
    const shown = turn.plan;
    if (!shown) return;
    if (!this.plan && action.kind === "host" && action.msg.type === "plan") {
      const callId = shown.callId;
      this.plan = new PlanCard(document, action.msg, (approved, edit) =>
        this.actions.send(edit ? { kind: "approval", call_id: callId, approved, plan: edit } : { kind: "approval", call_id: callId, approved }),
      );
      this.root.insertBefore(this.plan.root, this.steps.el);
    }
    if (prev.plan?.plan !== shown.plan) this.plan?.update(shown.plan);
  }

  private stepEvent(action: Extract<SidebarAction, { kind: "host" }>): void {
    const msg = action.msg;
    if (msg.type === "tool_call") this.steps.toolCall(msg);
    else if (msg.type === "estimate") this.steps.estimate(msg);
    else if (msg.type === "agent_state") this.steps.agentState(msg);
    else if (msg.type === "operation") this.steps.operation(msg);
    else if (msg.type === "tool_result") this.steps.toolResult(msg);
  }

  /** The answer area: items drawn before keep their nodes; only new ones are drawn. */
  private renderBody(turn: TurnState): void {
    // Checked by class, not `instanceof`: the element may come from another realm.
    const last = this.body.lastElementChild as HTMLElement | null;
    const nodes = turn.body.flatMap((item, i) => {
      const known = this.drawn.get(item);
      if (known) return known;
      // The block being written keeps its paragraph while its words come.
      const reuse = i === turn.body.length - 1 && last?.classList.contains("streaming-text") ? last : null;
      const drawn = this.draw(item, turn, reuse);
      this.drawn.set(item, drawn);
      return drawn;
    });
    const current = Array.from(this.body.childNodes);
    if (current.length <= nodes.length && current.every((n, i) => n === nodes[i])) {
      this.body.append(...nodes.slice(current.length));
    } else {
      this.body.replaceChildren(...nodes);
    }
  }

  private draw(item: BodyItem, turn: TurnState, reuse: HTMLElement | null): Node[] {
    switch (item.kind) {
      case "preview":
        return Array.from(renderDoc(document, { type: "doc", children: item.blocks }).childNodes);
      case "answer":
        return this.drawAnswer(item.msg, turn);
      case "text": {
        const el = reuse ?? h("p", "streaming-text");
        el.setAttribute("data-index", String(item.index));
        el.textContent = item.text;
        return [el];
      }
      case "error":
        if (RUNTIME_CODES.has(item.code)) {
          return [runtimeErrorCard(item.code, item.message, () => this.actions.ask(turn.ask), () => this.actions.useOffline(turn.ask))];
        }
        return [h("p", item.code === "CANCELLED" ? "notice" : "error", errorAdvice(item.code, item.message))];
      case "failure":
        return [item.retry ? retryCard(item.text, () => this.actions.ask(turn.ask)) : h("p", "error", item.text)];
      case "notice":
        return [h("p", "notice", item.text)];
    }
  }

  /** An `assistant`: its render, its data (unless it shows a table already), its citations. */
  private drawAnswer(msg: AssistantMessage, turn: TurnState): Node[] {
    const box = h("div");
    const doc = renderDoc(document, msg.render);
    // An answer that already shows its data as a table gets one table, not two.
    const shown = doc.querySelector("table") !== null;
    box.append(doc);
    if (isObject(msg.data) && !shown) box.append(renderData(msg.data));
    const sources = { others: turn.others, page: turn.page, places: turn.places };
    // Structured data is the page's metadata, not its text: nothing to highlight.
    const show = (c: AssistantMessage["citations"][number], tabId?: number) => {
      if (isStructuredData(c)) {
        this.actions.inform(STRUCTURED_DATA_CITATION);
        return;
      }
      this.actions.send({
        kind: "highlight",
        turn_id: msg.reply_to ?? "",
        handle_id: tabId === undefined ? (c.handle_id ?? undefined) : undefined,
        quote: c.quote,
        tab_id: tabId,
        chunk: tabId === undefined ? citedPlace(c, sources)?.chunk : undefined,
      });
    };
    placeMarkers(box, msg.citations, sources, show);
    const cites = renderCitations(msg.citations, sources, show, box.textContent ?? "");
    if (cites) box.append(cites);
    // A clarifying question's choices: the one clicked is the next message.
    if (msg.choices?.length) {
      box.append(replyButtons(msg.choices, { kind: "choices", label: "Choose an answer", pick: (text) => this.actions.ask({ task: "web.answer", text, label: text }) }));
    }
    // A summary's suggested questions, asked about the same pages, to be
    // informed: model text never makes anything happen on its own.
    if (msg.follow_ups?.length) {
      const pick = (text: string) => this.actions.ask({ task: "web.answer", text, label: text, mode: "inform", tab_ids: turn.ask.tab_ids });
      box.append(replyButtons(msg.follow_ups, { kind: "follow-ups", label: "Suggested questions", caption: "Ask next", pick }));
    }
    return Array.from(box.childNodes);
  }

  /** A newer turn started: this turn's offered replies can no longer be asked. */
  retire(): void {
    retireReplies(this.root);
  }

  private renderDone(turn: TurnState): void {
    const done = turn.done;
    if (!done) return;
    const { msg, answer } = done;
    // A long page the user chose not to read: said plainly, not as a stop.
    const reason = this.steps.declined()
      ? "Not read: you chose not to read this long page."
      : this.plan?.cancelled()
        ? "Not run: you cancelled the plan."
        : stopReasonText(msg.stop_reason, msg.steps);
    // A failed or cancelled turn already said why (its `error`).
    if (reason && !(turn.failed && (msg.stop_reason === "failed" || msg.stop_reason === "cancelled"))) {
      const p = h("p", "notice stop-reason", reason);
      p.dataset["stopReason"] = msg.stop_reason;
      this.root.append(p);
    }
    this.root.dataset["stopReason"] = msg.stop_reason;
    if (msg.status === "ok" && answer) {
      // Under the answer, outside it: the answer's own text stays just the answer.
      this.root.insertBefore(answerActions(answer, { regenerate: () => this.actions.ask(turn.ask), edit: () => this.actions.edit(turn.ask) }), this.badge);
    }
  }
}

/** Where a turn's reading stands, for its notes. */
function reading(turn: TurnState): Reading {
  if (!turn.ended) return turn.estimate === null ? "reading" : "asking";
  return turn.done?.msg.status === "ok" ? "read" : "unread";
}
