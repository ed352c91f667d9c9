/**
 * The sidebar: chat, history and settings. Everything that reaches the DOM
 * goes through createElement/textContent (render AST via `renderDoc`); host
 * events arrive from the background already validated, routed by turn id.
 */
import { ext } from "../shared/api.js";
import type {
  AssistantMessage,
  ConfigView,
  DoneMessage,
  RenderBlock,
  RenderDeltaMessage,
  SearchHit,
  TaskName,
  VerifiedCitation,
} from "../generated/wire.js";
import {
  SIDEBAR_PORT,
  isObject,
  type SidebarEvent,
  type SidebarHostRequest,
  type SidebarRequest,
} from "../shared/messages.js";
import type { RoutedHostMessage } from "../shared/protocol.js";
import { errorAdvice, INSTALL_COMMAND } from "./errors.js";
import { plainText, renderDoc } from "./render.js";
import { StepList, stopReasonText } from "./steps.js";

function $(id: string): HTMLElement {
  const el = document.getElementById(id);
  if (!el) throw new Error(`sidepanel.html lacks #${id}`);
  return el;
}

function h(tag: string, cls?: string, text?: string): HTMLElement {
  const e = document.createElement(tag);
  if (cls) e.className = cls;
  if (text !== undefined) e.textContent = text;
  return e;
}

const messages = $("messages");
const statusBox = $("status");
const runtimeLabel = $("runtime");
const question = $("question") as HTMLTextAreaElement;
const fields = $("fields") as HTMLInputElement;
const mode = $("mode") as HTMLSelectElement;
const stopBtn = $("stop") as HTMLButtonElement;

let port: chrome.runtime.Port | null = null;
let conversationId: string | null = null;
let activeTurn: string | null = null;

interface TurnView {
  root: HTMLElement;
  progress: HTMLElement;
  steps: StepList;
  /** The answer: the last step's `assistant` (or its streamed preview). */
  body: HTMLElement;
  /** Streamed blocks of `previewStep`, by index, until its `assistant` replaces them. */
  preview: RenderBlock[];
  previewStep: number;
  /** The latest step's `assistant`; it leaves the answer for the step list when calls follow it. */
  latest: AssistantMessage | null;
  /** An `error` was shown for the turn. */
  failed: boolean;
  ended: boolean;
}
const turns = new Map<string, TurnView>();
const requests = new Map<string, (msg: RoutedHostMessage | null, error?: string) => void>();

function send(req: SidebarRequest): void {
  if (!port) connect();
  port?.postMessage(req);
}

function connect(): void {
  port = ext.runtime.connect({ name: SIDEBAR_PORT });
  port.onMessage.addListener((m: unknown) => {
    if (isObject(m) && typeof m["kind"] === "string") onEvent(m as SidebarEvent);
  });
  port.onDisconnect.addListener(() => {
    // The service worker restarted: reconnect and ask for the status again.
    port = null;
    setTimeout(() => send({ kind: "status" }), 500);
  });
}

// ---- status ----

function showStatus(kind: "info" | "error" | "none", text = "", command?: string): void {
  statusBox.replaceChildren();
  statusBox.hidden = kind === "none";
  statusBox.classList.toggle("error", kind === "error");
  statusBox.append(text);
  if (command) statusBox.append(h("code", undefined, command));
}

function onStatus(ev: Extract<SidebarEvent, { kind: "status" }>): void {
  switch (ev.state) {
    case "ready":
      showStatus("none");
      runtimeLabel.textContent = ev.runtime_label ?? "";
      return;
    case "connecting":
      showStatus("info", "Connecting to the Laika app…");
      return;
    case "not_installed":
      showStatus("error", "The Laika app (laika-host) is not installed for this browser. Install it, then reopen this sidebar:", INSTALL_COMMAND);
      return;
    case "disconnected":
      showStatus("info", `The Laika app stopped (${ev.detail}). Reconnecting…`);
      return;
    case "failed":
      showStatus("error", `The Laika app cannot be used: ${ev.detail}`);
      return;
  }
}

// ---- turns ----

function newTurnView(id: string, label: string): TurnView {
  const root = h("article", "turn");
  root.append(h("div", "user", label));
  const progress = h("div", "progress", "Reading the page…");
  const steps = new StepList(document, (callId, approved) => send({ kind: "approval", call_id: callId, approved }));
  const body = h("div", "answer");
  root.append(progress, steps.el, body);
  messages.append(root);
  root.scrollIntoView({ block: "end" });
  const view: TurnView = { root, progress, steps, body, preview: [], previewStep: 0, latest: null, failed: false, ended: false };
  turns.set(id, view);
  return view;
}

function startTurn(task: TaskName, text: string, label: string, fieldList?: string[]): void {
  const id = `turn-${crypto.randomUUID()}`;
  newTurnView(id, label);
  activeTurn = id;
  stopBtn.hidden = false;
  send({ kind: "ask", turn_id: id, task, text, fields: fieldList, conversation_id: conversationId });
}

function endTurn(id: string): void {
  const view = turns.get(id);
  if (view) {
    view.progress.hidden = true;
    view.ended = true;
    view.steps.end();
  }
  if (activeTurn === id) {
    activeTurn = null;
    stopBtn.hidden = true;
  }
}

function renderCitations(turnId: string, citations: VerifiedCitation[]): HTMLElement | null {
  if (!citations.length) return null;
  const list = h("ol", "citations");
  citations.forEach((c, i) => {
    const li = h("li");
    const quote = c.quote.length > 140 ? `${c.quote.slice(0, 140)}…` : c.quote;
    const btn = h("button", c.verified ? "citation" : "citation unverified", `[${i + 1}] “${quote}”`) as HTMLButtonElement;
    btn.type = "button";
    if (c.verified) {
      btn.title = "Show this on the page";
      btn.addEventListener("click", () => send({ kind: "highlight", turn_id: turnId, handle_id: c.handle_id, quote: c.quote }));
    } else {
      btn.disabled = true;
      btn.title = "Laika could not find this quote on the page";
    }
    li.append(btn);
    list.append(li);
  });
  return list;
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

function onAssistant(view: TurnView, msg: AssistantMessage): void {
  const turnId = msg.reply_to ?? "";
  conversationId = msg.conversation_id;
  const doc = renderDoc(document, msg.render);
  // An answer that already shows its data as a table gets one table, not two.
  const shown = doc.querySelector("table") !== null;
  view.body.replaceChildren(doc);
  if (isObject(msg.data) && !shown) view.body.append(renderData(msg.data));
  const cites = renderCitations(turnId, msg.citations);
  if (cites) view.body.append(cites);
}

/**
 * Shows the answer block by block while it streams. Blocks are kept by index
 * and re-rendered through the same DOM-only renderer as the final answer,
 * which replaces them when it arrives.
 */
function onRenderDelta(view: TurnView, msg: RenderDeltaMessage): void {
  if (msg.step !== view.previewStep) {
    // A new step's answer starts: an earlier step's text is no longer the answer.
    view.preview = [];
    view.previewStep = msg.step;
    if (view.latest && view.latest.step < msg.step) moveToSteps(view);
  }
  msg.blocks.forEach((block, i) => {
    view.preview[msg.start_index + i] = block;
  });
  const children = view.preview.filter((b) => b !== undefined);
  view.body.replaceChildren(renderDoc(document, { type: "doc", children }));
  view.progress.textContent = "Writing the answer…";
}

/**
 * The latest step proposed calls, so its text was not the answer: it moves
 * into the step list, in small print, and the answer area clears.
 */
function moveToSteps(view: TurnView): void {
  const latest = view.latest;
  if (!latest) return;
  view.steps.note(latest.step, plainText(latest.render));
  view.latest = null;
  view.preview = [];
  view.body.replaceChildren();
}

function onDone(view: TurnView, turnId: string, msg: DoneMessage): void {
  // The last `assistant` is the answer, even when the loop stopped after it proposed calls.
  if (!view.latest && !view.body.hasChildNodes() && lastAssistant.get(turnId)) {
    const last = lastAssistant.get(turnId);
    if (last) {
      view.steps.dropNote(last.step);
      onAssistant(view, last);
    }
  }
  const reason = stopReasonText(msg.stop_reason, msg.steps);
  // A failed or cancelled turn already said why (its `error`).
  if (reason && !(view.failed && (msg.stop_reason === "failed" || msg.stop_reason === "cancelled"))) {
    const p = h("p", "notice stop-reason", reason);
    p.dataset["stopReason"] = msg.stop_reason;
    view.root.append(p);
  }
  view.root.dataset["stopReason"] = msg.stop_reason;
  if (msg.status === "ok" && !msg.stored) view.body.append(h("p", "notice", "The answer could not be saved to your history."));
}

/** Each turn's last `assistant`, whichever step it came from. */
const lastAssistant = new Map<string, AssistantMessage>();

function onHostEvent(msg: RoutedHostMessage): void {
  const turnId = msg.reply_to;
  if (turnId && requests.has(turnId)) {
    const cb = requests.get(turnId);
    requests.delete(turnId);
    cb?.(msg);
    return;
  }
  const view = turnId ? turns.get(turnId) : undefined;
  if (!view || !turnId) return;
  switch (msg.type) {
    case "turn.started":
      conversationId = msg.conversation_id;
      view.progress.textContent = `Working… (${msg.runtime.label})`;
      return;
    case "context_usage": {
      const cut = msg.cut.length ? `, ${msg.cut.length} part(s) trimmed to fit` : "";
      view.progress.textContent = `Read ${msg.used.chars.toLocaleString()} characters (~${msg.used.tokens.toLocaleString()} tokens)${cut}. Waiting for the answer…`;
      return;
    }
    case "render_delta":
      onRenderDelta(view, msg);
      return;
    case "render_reset":
      if (msg.step === view.previewStep) {
        view.preview = [];
        if (!view.latest || view.latest.step !== msg.step) view.body.replaceChildren();
      }
      return;
    case "assistant":
      view.preview = [];
      view.previewStep = msg.step;
      if (view.latest && view.latest.step < msg.step) moveToSteps(view);
      view.latest = msg;
      lastAssistant.set(turnId, msg);
      onAssistant(view, msg);
      return;
    case "tool_call":
      if (view.latest && view.latest.step === msg.step) moveToSteps(view);
      view.steps.toolCall(msg);
      return;
    case "agent_state":
      view.steps.agentState(msg);
      if (!view.ended) {
        view.progress.textContent =
          msg.state === "thinking"
            ? `Thinking… (step ${msg.step})`
            : msg.state === "waiting_for_approval"
              ? "Waiting for your approval…"
              : msg.state === "executing"
                ? `Working… (step ${msg.step})`
                : "Finishing…";
      }
      return;
    case "operation":
      view.steps.operation(msg);
      return;
    case "tool_result":
      view.steps.toolResult(msg);
      return;
    case "error": {
      const advice = errorAdvice(msg.code, msg.message);
      view.failed = true;
      view.body.append(h("p", msg.code === "CANCELLED" ? "notice" : "error", advice));
      // An error ends the turn for the UI; a `done` may still follow and is accepted quietly.
      endTurn(turnId);
      return;
    }
    case "done":
      onDone(view, turnId, msg);
      endTurn(turnId);
      lastAssistant.delete(turnId);
      return;
    default:
      return;
  }
}

function onEvent(ev: SidebarEvent): void {
  switch (ev.kind) {
    case "status":
      onStatus(ev);
      return;
    case "event":
      onHostEvent(ev.msg);
      return;
    case "turn.tab": {
      const view = turns.get(ev.turn_id);
      if (view) {
        view.root.insertBefore(h("div", "page", ev.title || ev.url), view.progress);
        view.progress.textContent = "Asking…";
      }
      return;
    }
    case "turn.failed": {
      const view = turns.get(ev.turn_id);
      view?.body.append(h("p", "error", ev.message));
      endTurn(ev.turn_id);
      return;
    }
    case "approval.answer":
      for (const view of turns.values()) view.steps.approvalAnswer(ev.call_id, ev.accepted, ev.approved, ev.code, ev.message);
      return;
    case "request.failed": {
      const cb = requests.get(ev.request_id);
      requests.delete(ev.request_id);
      cb?.(null, ev.message);
      return;
    }
    case "highlight.result":
      if (!ev.ok) showStatus("info", ev.message);
      return;
    case "command":
      summarize();
      return;
  }
}

// ---- requests that are not turns (history, settings) ----

function request(req: SidebarHostRequest): Promise<RoutedHostMessage> {
  const id = `${req.type}-${crypto.randomUUID()}`;
  return new Promise((resolve, reject) => {
    requests.set(id, (msg, error) => {
      if (!msg) reject(new Error(error ?? "request failed"));
      else if (msg.type === "error") reject(new Error(errorAdvice(msg.code, msg.message)));
      else resolve(msg);
    });
    send({ kind: "host", request_id: id, request: req });
  });
}

/** The answer to a request, as the result type it must be. */
function expectReply<T extends RoutedHostMessage["type"]>(
  msg: RoutedHostMessage,
  type: T,
): Extract<RoutedHostMessage, { type: T }> {
  if (msg.type !== type) throw new Error(`Laika expected ${type} from the host, got ${msg.type}`);
  return msg as Extract<RoutedHostMessage, { type: T }>;
}

function hitLabel(hit: SearchHit): string {
  const snippet = hit.snippet.map((part) => part.text).join("");
  return `${hit.conversation_title || hit.conversation_id} — ${snippet}`;
}

function historyButton(label: string, conversation: string): HTMLElement {
  const btn = h("button", undefined, label) as HTMLButtonElement;
  btn.type = "button";
  btn.addEventListener("click", () => void showConversation(conversation));
  const li = h("li");
  li.append(btn);
  return li;
}

async function loadHistory(query: string): Promise<void> {
  const list = $("history-list");
  const detail = $("history-detail");
  list.replaceChildren(h("li", "notice", "Loading…"));
  detail.replaceChildren();
  try {
    const rows = query
      ? expectReply(await request({ type: "history.search", query, limit: 50 }), "history.search.result").hits.map(
          (hit) => historyButton(hitLabel(hit), hit.conversation_id),
        )
      : expectReply(await request({ type: "history.list", limit: 50, offset: 0 }), "history.list.result").conversations.map(
          (c) => historyButton(`${c.title || c.page_url || c.id} (${c.updated_at})`, c.id),
        );
    list.replaceChildren(...rows);
    if (rows.length === 0) list.append(h("li", "notice", query ? "Nothing found." : "No conversations yet."));
  } catch (e) {
    list.replaceChildren(h("li", "error", e instanceof Error ? e.message : String(e)));
  }
}

async function showConversation(id: string): Promise<void> {
  const detail = $("history-detail");
  detail.replaceChildren(h("p", "notice", "Loading…"));
  try {
    const conv = expectReply(await request({ type: "history.get", conversation_id: id }), "history.get.result").conversation;
    detail.replaceChildren(h("h2", undefined, conv.title || id));
    for (const t of conv.turns) {
      const box = h("div", "turn");
      box.append(h("div", "user", t.user_text));
      const calls = t.steps.flatMap((st) => st.calls.map((c) => ({ step: st.step, c })));
      if (calls.length) {
        const list = h("ol", "history-steps");
        list.setAttribute("aria-label", "Steps");
        for (const { step, c } of calls) {
          const mark = c.status === "ok" ? "✓" : c.status === "denied" ? "⊘" : "✗";
          const li = h("li", undefined, `${mark} Step ${step}: ${c.name} — ${c.summary || c.status}`);
          li.dataset["status"] = c.status;
          list.append(li);
        }
        box.append(list);
      }
      box.append(h("p", undefined, t.answer_text || t.status));
      detail.append(box);
    }
    const del = h("button", undefined, "Delete this conversation") as HTMLButtonElement;
    del.type = "button";
    del.addEventListener("click", () => {
      void request({ type: "history.delete", conversation_id: id }).then(() => loadHistory(""));
    });
    detail.append(del);
  } catch (e) {
    detail.replaceChildren(h("p", "error", e instanceof Error ? e.message : String(e)));
  }
}

async function loadSettings(): Promise<void> {
  const msg = $("settings-message");
  try {
    fillSettings(expectReply(await request({ type: "config.get" }), "config.get.result").config);
    msg.textContent = "";
  } catch (e) {
    msg.textContent = e instanceof Error ? e.message : String(e);
  }
}

function fillSettings(config: ConfigView): void {
  const kind = $("set-kind") as HTMLSelectElement;
  kind.replaceChildren();
  for (const k of config.runtime_kinds) {
    const o = document.createElement("option");
    o.value = k;
    o.textContent = k;
    kind.append(o);
  }
  kind.value = config.runtime.kind || "builtin";
  ($("set-base-url") as HTMLInputElement).value = config.runtime.base_url ?? "";
  ($("set-model") as HTMLInputElement).value = config.runtime.model ?? "";
}

async function saveSettings(): Promise<void> {
  const msg = $("settings-message");
  const nullable = (v: string) => (v.trim() ? v.trim() : null);
  msg.textContent = "Saving…";
  try {
    const res = await request({
      type: "config.set",
      values: {
        "runtime.kind": ($("set-kind") as HTMLSelectElement).value || null,
        "runtime.base_url": nullable(($("set-base-url") as HTMLInputElement).value),
        "runtime.model": nullable(($("set-model") as HTMLInputElement).value),
      },
    });
    const saved = expectReply(res, "config.set.result");
    fillSettings(saved.config);
    msg.textContent = `Saved to ${saved.saved_to}. New turns use this runtime.`;
  } catch (e) {
    msg.textContent = e instanceof Error ? e.message : String(e);
  }
}

// ---- wiring ----

function summarize(): void {
  startTurn("web.summarize", "Summarize this page", "Summarize this page");
}

function showView(name: "chat" | "history" | "settings"): void {
  for (const v of ["chat", "history", "settings"] as const) {
    $(`view-${v}`).hidden = v !== name;
    $(`nav-${v}`).setAttribute("aria-pressed", String(v === name));
  }
  if (name === "history") void loadHistory("");
  if (name === "settings") void loadSettings();
}

$("summarize").addEventListener("click", summarize);
$("new-chat").addEventListener("click", () => {
  conversationId = null;
  messages.replaceChildren();
});
stopBtn.addEventListener("click", () => {
  if (!activeTurn) return;
  const view = turns.get(activeTurn);
  view?.steps.stop();
  if (view) view.progress.textContent = "Stopping…";
  send({ kind: "cancel", turn_id: activeTurn });
});
mode.addEventListener("change", () => {
  const extract = mode.value === "web.extract";
  fields.hidden = $("fields-label").hidden = !extract;
  question.hidden = $("question-label").hidden = extract;
  ($("send") as HTMLButtonElement).textContent = extract ? "Extract" : "Ask";
});
$("composer").addEventListener("submit", (e) => {
  e.preventDefault();
  if (mode.value === "web.extract") {
    const list = fields.value
      .split(",")
      .map((f) => f.trim())
      .filter(Boolean)
      .slice(0, 32);
    if (!list.length) return;
    startTurn("web.extract", `Extract: ${list.join(", ")}`, `Extract: ${list.join(", ")}`, list);
  } else {
    const text = question.value.trim();
    if (!text) return;
    question.value = "";
    startTurn("web.answer", text, text);
  }
});
$("nav-chat").addEventListener("click", () => showView("chat"));
$("nav-history").addEventListener("click", () => showView("history"));
$("nav-settings").addEventListener("click", () => showView("settings"));
$("history-form").addEventListener("submit", (e) => {
  e.preventDefault();
  void loadHistory(($("history-search") as HTMLInputElement).value.trim());
});
$("settings-form").addEventListener("submit", (e) => {
  e.preventDefault();
  void saveSettings();
});

connect();
send({ kind: "status" });
