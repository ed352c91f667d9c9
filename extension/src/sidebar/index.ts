/**
 * The sidebar: chat, history and settings. Everything that reaches the DOM
 * goes through createElement/textContent (render AST via `renderDoc`); host
 * events arrive from the background already validated, routed by turn id.
 */
import { ext } from "../shared/api.js";
import type {
  AssistantMessage,
  ConversationDetail,
  DoneMessage,
  RenderBlock,
  RenderDeltaMessage,
  TaskName,
  VerifiedCitation,
} from "../generated/wire.js";
import {
  SIDEBAR_PORT,
  type SidebarEvent,
  type SidebarHostRequest,
  type SidebarRequest,
} from "../shared/messages.js";
import { isObject } from "../shared/json.js";
import type { RoutedHostMessage } from "../shared/protocol.js";
import { answerActions, copyText } from "./actions.js";
import { AgentStateView } from "./agent-state.js";
import { shareMessage, type ShareRequest } from "../shared/share.js";
import { placeMarkers, renderCitations, type CitationSources } from "./citations.js";
import { ContextPicker } from "./context.js";
import { FirstRun } from "./firstrun.js";
import { setBadge } from "./badge.js";
import { wireEnterToSend } from "./composer.js";
import { $, announce, h } from "./dom.js";
import { citationError, errorAdvice, INSTALL_COMMAND, INSTALL_HINT, RUNTIME_CODES, runtimeErrorCard } from "./errors.js";
import { expectReply, HistoryView, turnBox } from "./history.js";
import { plainText, renderDoc } from "./render.js";
import { SettingsView } from "./settings.js";
import { StepList, stopReasonText } from "./steps.js";
import { CollectionsPanel, download } from "./collections.js";
import { contextMeter, forgetText, showText } from "./streaming.js";

/** How long a turn may wait for the host's first word before the sidebar gives up on it. */
const HOST_SILENCE_MS = 20_000;

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

/** What was asked, so it can be asked again (regenerate) or edited. */
interface Ask {
  task: TaskName;
  text: string;
  label: string;
  fields?: string[];
  selection?: string;
  tab_ids?: number[];
}

interface TurnView {
  ask: Ask;
  root: HTMLElement;
  /** Which runtime and model answered, and where the page went (from the host, per turn). */
  badge: HTMLElement;
  /** The host said something about this turn (so it is running there). */
  heard: boolean;
  watchdog: ReturnType<typeof setTimeout> | null;
  /** The other tabs it read, to name and highlight their citations. */
  sources: CitationSources;
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
      // Until a turn reports the runtime that really answered, say what the host started with.
      if (!runtimeLabel.dataset["answered"] && ev.runtime) setBadge(runtimeLabel, ev.runtime);
      return;
    case "connecting":
      showStatus("info", "Connecting to the Laika app…");
      return;
    case "not_installed":
      showStatus("error", INSTALL_HINT, INSTALL_COMMAND);
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

function newTurnView(id: string, ask: Ask): TurnView {
  const root = h("article", "turn");
  root.setAttribute("aria-label", ask.label);
  root.setAttribute("aria-busy", "true");
  root.append(h("div", "user", ask.label));
  if (ask.selection) root.append(h("blockquote", "selection-quote", ask.selection.length > 300 ? `${ask.selection.slice(0, 300)}…` : ask.selection));
  const progress = h("div", "progress", "Reading the page…");
  const steps = new StepList(document, (callId, approved) => send({ kind: "approval", call_id: callId, approved }));
  const body = h("div", "answer");
  const badge = h("div", "badge");
  badge.hidden = true;
  root.append(progress, steps.el, body, badge);
  messages.append(root);
  root.scrollIntoView({ block: "end" });
  const view: TurnView = {
    ask,
    root,
    badge,
    heard: false,
    watchdog: null,
    sources: { others: [] },
    progress,
    steps,
    body,
    preview: [],
    previewStep: 0,
    latest: null,
    failed: false,
    ended: false,
  };
  turns.set(id, view);
  return view;
}

function startTurn(a: Ask): void {
  if (activeTurn) {
    // One turn at a time: say so instead of ignoring the click.
    showStatus("info", BUSY);
    announce(BUSY);
    return;
  }
  const id = `turn-${crypto.randomUUID()}`;
  const view = newTurnView(id, a);
  activeTurn = id;
  stopBtn.hidden = false;
  // The host may never answer (not installed, hung): the turn must not wait forever.
  view.watchdog = setTimeout(() => {
    if (view.heard || view.ended) return;
    view.failed = true;
    view.body.append(
      h("p", "error", `The Laika app did not answer within ${HOST_SILENCE_MS / 1000} seconds. Check that it is installed (see above), then try again.`),
    );
    send({ kind: "cancel", turn_id: id });
    endTurn(id);
  }, HOST_SILENCE_MS);
  send({
    kind: "ask",
    turn_id: id,
    task: a.task,
    text: a.text,
    fields: a.fields,
    conversation_id: conversationId,
    selection: a.selection,
    tab_ids: a.tab_ids,
    collection_id: collections.selected(),
  });
}

const BUSY = "Laika is still answering. Wait for it, or press Stop.";

function endTurn(id: string): void {
  if (statusBox.textContent === BUSY) showStatus("none");
  const view = turns.get(id);
  if (view) {
    view.progress.hidden = true;
    view.ended = true;
    view.steps.end();
    view.root.setAttribute("aria-busy", "false");
    if (view.watchdog) clearTimeout(view.watchdog);
  }
  if (activeTurn === id) {
    activeTurn = null;
    stopBtn.hidden = true;
  }
}

/** Switches to the offline runtime (nothing leaves the computer) and asks again. */
async function useOffline(again: Ask): Promise<void> {
  try {
    expectReply(await request({ type: "config.set", values: { "runtime.kind": "builtin" } }), "config.set.result");
    announce("Switched to the offline runtime");
    ask(again);
  } catch (e) {
    showStatus("error", e instanceof Error ? e.message : String(e));
  }
}

function ask(a: Ask): void {
  startTurn(a);
}

/** A new question: it reads the attached selection and tabs too. */
function askNew(task: TaskName, text: string, label: string, fieldList?: string[]): void {
  picker.closePicker();
  startTurn({ task, text, label, fields: fieldList, selection: picker.selectedText || undefined, tab_ids: picker.tabIds });
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
  const show = (c: VerifiedCitation, tabId?: number) =>
    send({ kind: "highlight", turn_id: turnId, handle_id: tabId === undefined ? (c.handle_id ?? undefined) : undefined, quote: c.quote, tab_id: tabId });
  placeMarkers(view.body, msg.citations, view.sources, show);
  const cites = renderCitations(msg.citations, view.sources, show, view.body.textContent ?? "");
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
  const answer = lastAssistant.get(turnId);
  if (msg.status === "ok" && answer) {
    // Under the answer, outside it: the answer's own text stays just the answer.
    view.root.insertBefore(answerActions(answer, { regenerate: () => ask(view.ask), edit: () => editQuestion(view.ask) }), view.badge);
  }
  showRuntime(view, msg.runtime, msg.endpoint);
  if (msg.status === "ok") announce(`Answer ready. ${plainText(lastAssistant.get(turnId)?.render ?? null).slice(0, 300)}`);
}

/** The runtime that answered, on the turn and in the header (it is now the current one). */
function showRuntime(view: TurnView, runtime: DoneMessage["runtime"], endpoint?: string): void {
  setBadge(view.badge, runtime, endpoint);
  view.badge.hidden = false;
  setBadge(runtimeLabel, runtime, endpoint);
  runtimeLabel.dataset["answered"] = "true";
}

function editQuestion(a: Ask): void {
  if (a.task === "web.extract") {
    mode.value = "web.extract";
    fields.value = (a.fields ?? []).join(", ");
    mode.dispatchEvent(new Event("change"));
    fields.focus();
    return;
  }
  mode.value = "web.answer";
  mode.dispatchEvent(new Event("change"));
  question.value = a.text;
  question.focus();
}

/** Each turn's last `assistant`, whichever step it came from. */
const lastAssistant = new Map<string, AssistantMessage>();

/** The conversation's agent state, under its latest turn. */
const agentState = new AgentStateView(document);

function onHostEvent(msg: RoutedHostMessage): void {
  const turnId = msg.reply_to;
  if (msg.type === "agent_state.snapshot") {
    // The summarizer's snapshot comes after the turn's `done`.
    if (msg.conversation_id !== conversationId) return;
    agentState.show(msg.state);
    // Inside the turn it follows, so it moves down with the conversation.
    const latest = turnId ? turns.get(turnId) : undefined;
    (latest?.root ?? messages).append(agentState.root);
    return;
  }
  if (turnId && requests.has(turnId)) {
    const cb = requests.get(turnId);
    requests.delete(turnId);
    cb?.(msg);
    return;
  }
  const view = turnId ? turns.get(turnId) : undefined;
  if (!view || !turnId) return;
  view.heard = true;
  switch (msg.type) {
    case "turn.started":
      conversationId = msg.conversation_id;
      view.progress.textContent = `Working… (${msg.runtime.label})`;
      showRuntime(view, msg.runtime);
      return;
    case "context_usage": {
      const cut = msg.cut.length ? `, ${msg.cut.length} part(s) trimmed to fit` : "";
      view.progress.textContent = `Read ${msg.used.chars.toLocaleString()} characters (~${msg.used.tokens.toLocaleString()} tokens)${cut}. Waiting for the answer…`;
      view.progress.after(contextMeter(document, msg));
      return;
    }
    case "text_delta":
      if (msg.step !== view.previewStep && view.latest && view.latest.step < msg.step) moveToSteps(view);
      showText(view.body, msg);
      view.progress.textContent = "Writing the answer…";
      return;
    case "render_delta":
      onRenderDelta(view, msg);
      return;
    case "render_reset":
      forgetText(view.body);
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
      view.failed = true;
      if (RUNTIME_CODES.has(msg.code)) {
        view.body.append(runtimeErrorCard(msg.code, msg.message, () => ask(view.ask), () => void useOffline(view.ask)));
      }
      else view.body.append(h("p", msg.code === "CANCELLED" ? "notice" : "error", errorAdvice(msg.code, msg.message)));
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
        view.sources = { others: ev.others };
        view.root.insertBefore(h("div", "page", ev.title || ev.url), view.progress);
        if (ev.others.length) {
          view.root.insertBefore(h("div", "page", `Also read: ${ev.others.map((t) => t.title || t.url).join(" · ")}`), view.progress);
        }
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
      if (!ev.ok) showStatus("info", citationError(ev.message));
      return;
    case "command":
      if (ev.action === "summarize") summarize();
      else askAboutSelection(ev.text);
      return;
    case "tabs":
      picker.showTabs(ev.tabs);
      return;
    case "share":
      void writeShare(ev.request).then(
        (message) => send({ kind: "shared", call_id: ev.call_id, ok: true, message }),
        (e: unknown) => send({ kind: "shared", call_id: ev.call_id, ok: false, message: e instanceof Error ? e.message : String(e) }),
      );
      return;
  }
}

/** Writes an approved `artifact.share` export: a download or the clipboard. */
async function writeShare(req: ShareRequest): Promise<string> {
  if (req.target === "clipboard") {
    if (!(await copyText(req.content))) throw new Error("the browser refused to write to the clipboard");
  } else {
    download(req.filename, req.mime, req.content);
  }
  return shareMessage(req);
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

function addPage(req: { collection_id?: string | null; tab_id?: number | null }): Promise<RoutedHostMessage> {
  const id = `add_page-${crypto.randomUUID()}`;
  return new Promise((resolve, reject) => {
    requests.set(id, (msg, error) => {
      if (!msg) reject(new Error(error ?? "request failed"));
      else if (msg.type === "error") reject(new Error(errorAdvice(msg.code, msg.message)));
      else resolve(msg);
    });
    send({ kind: "add_page", request_id: id, ...req });
  });
}

const collections = new CollectionsPanel({ request, addPage });
$("composer").before(collections.el);

// ---- wiring ----

function summarize(): void {
  startTurn({ task: "web.summarize", text: "Summarize this page", label: "Summarize this page", tab_ids: picker.tabIds });
}

/** The selection becomes the focus (attached until removed) and is asked about at once. */
function askAboutSelection(text: string): void {
  showView("chat");
  if (!text.trim()) {
    showStatus("info", "Select some text on the page first, then ask Laika about it.");
    return;
  }
  picker.setSelection(text);
  askNew("web.answer", SELECTION_QUESTION, SELECTION_QUESTION);
  question.focus();
}

const SELECTION_QUESTION = "Explain the selected text.";

function showView(name: "chat" | "history" | "settings"): void {
  for (const v of ["chat", "history", "settings"] as const) {
    $(`view-${v}`).hidden = v !== name;
    $(`nav-${v}`).setAttribute("aria-pressed", String(v === name));
  }
  if (name === "history") void history.load("");
  if (name === "settings") void settings.load();
}

/** Opens a stored conversation in the chat view; the next question continues it. */
function continueWith(conv: ConversationDetail): void {
  conversationId = conv.id;
  agentState.clear();
  messages.replaceChildren();
  for (const t of conv.turns) messages.append(turnBox(t, "article", "turn past"));
  messages.append(h("p", "notice continued", `Continuing “${conv.title || "this conversation"}”: ask a follow-up below.`));
  showView("chat");
  question.focus();
}

const history = new HistoryView({ request, continueWith });
const settings = new SettingsView({ request });
const picker = new ContextPicker(() => send({ kind: "tabs" }));
const firstRun = new FirstRun(() => showView("settings"));

$("summarize").addEventListener("click", summarize);
$("ask-selection").addEventListener("click", () => send({ kind: "ask-selection" }));
$("new-chat").addEventListener("click", () => {
  conversationId = null;
  agentState.clear();
  messages.replaceChildren();
  question.focus();
});
stopBtn.addEventListener("click", () => {
  if (!activeTurn) return;
  const id = activeTurn;
  const view = turns.get(id);
  send({ kind: "cancel", turn_id: id });
  if (!view) return;
  view.steps.stop();
  if (!view.heard) {
    // The host never took the turn: nothing will end it but us.
    view.body.append(h("p", "notice", "Stopped."));
    endTurn(id);
    return;
  }
  view.progress.textContent = "Stopping…";
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
    askNew("web.extract", `Extract: ${list.join(", ")}`, `Extract: ${list.join(", ")}`, list);
  } else {
    const text = question.value.trim();
    if (!text) return;
    question.value = "";
    askNew("web.answer", text, text);
  }
});
$("nav-chat").addEventListener("click", () => showView("chat"));
$("nav-history").addEventListener("click", () => showView("history"));
$("nav-settings").addEventListener("click", () => showView("settings"));
$("history-form").addEventListener("submit", (e) => {
  e.preventDefault();
  void history.load(($("history-search") as HTMLInputElement).value.trim());
});

wireEnterToSend(question, $("composer") as HTMLFormElement);

connect();
send({ kind: "status" });
void firstRun.maybeShow();
