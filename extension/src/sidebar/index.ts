/**
 * The sidebar: chat, history and settings, wired to the background's port.
 * Turns live in the turn table (`turns.ts`: state through `reduce`, views
 * drawn from it); host events arrive from the background already
 * validated, routed by turn id.
 */
import { ext } from "../shared/api.js";
import type { ConfigView, ConversationDetail, RuntimeInfo, SavedPrompt, TaskName } from "../generated/wire.js";
import { SIDEBAR_PORT, type SidebarEvent, type SidebarHostRequest, type SidebarRequest } from "../shared/messages.js";
import { isObject } from "../shared/json.js";
import type { RoutedHostMessage } from "../shared/protocol.js";
import { copyText } from "./actions.js";
import { AgentStateView } from "./agent-state.js";
import { shareMessage, type ShareRequest } from "../shared/share.js";
import { ContextPicker } from "./context.js";
import { FirstRun } from "./firstrun.js";
import { OfflineCard } from "./offline-card.js";
import { foldOnNarrowPanels, wireEnterToSend } from "./composer.js";
import { $, announce, h } from "./dom.js";
import { citationError, INSTALL_COMMAND, INSTALL_HINT } from "./errors.js";
import { HistoryView, turnBox } from "./history.js";
import { SettingsView } from "./settings.js";
import { McpSettings } from "./mcp-settings.js";
import { PromptSettings } from "./prompt-settings.js";
import { fieldList, PromptLibrary, promptQuestion, SlashMenu } from "./prompts.js";
import { CollectionsPanel, download } from "./collections.js";
import type { Ask } from "./state.js";
import { SidebarTurns } from "./turns.js";
import { safeHref } from "./render.js";
import { FollowLatest } from "./follow.js";
import { RuntimeSwitcher } from "./switcher.js";

const messages = $("messages");
const statusBox = $("status");
const question = $("question") as HTMLTextAreaElement;
const fields = $("fields") as HTMLInputElement;
const mode = $("mode") as HTMLSelectElement;
/** What Laika may do with a question: judge, only tell, or do it. */
const intent = $("intent") as HTMLSelectElement;
const stopBtn = $("stop") as HTMLButtonElement;

let port: chrome.runtime.Port | null = null;

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
    // It forgot the running turn, so nothing else will end it.
    port = null;
    turns.backgroundLost();
    setTimeout(() => {
      send({ kind: "status" });
      send({ kind: "reading" });
    }, 500);
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
      // Until a turn reports the runtime that really answered, the header says what the host started with.
      turns.dispatch(ev);
      void switcher.refresh();
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

const BUSY = "Laika is still answering. Wait for it, or press Stop.";

/** The conversation's agent state, under its latest turn. */
const agentState = new AgentStateView(document, forgetAssumed);

/** "Forget what you assumed": the host clears them and sends the change as an `entity_patch`, which the panel applies. */
function forgetAssumed(): void {
  const conversationId = turns.conversationId;
  if (!conversationId) return;
  request({ type: "agent_state.forget", conversation_id: conversationId }).then(
    (reply) => {
      if (reply.type !== "agent_state.forget.result") return;
      const count = (n: number, one: string): string | null => (n ? `${n} ${one}${n === 1 ? "" : "s"}` : null);
      const parts = [count(reply.assumptions + reply.tentative_hypotheses, "assumption"), count(reply.items, "provisional item")].filter((p): p is string => p !== null);
      announce(parts.length ? `Laika forgot ${parts.join(" and ")}` : "Laika had nothing to forget");
    },
    (e: unknown) => {
      agentState.forgetFailed();
      showStatus("error", `Laika could not forget: ${e instanceof Error ? e.message : String(e)}`);
    },
  );
}

const turns = new SidebarTurns({
  messages,
  runtimeLabel: $("runtime"),
  agentState,
  actions: { send, ask: startTurn, useOffline, edit: editQuestion, inform: (text) => showStatus("info", text) },
  changed(state, ended) {
    if (ended && statusBox.textContent === BUSY) showStatus("none");
    stopBtn.hidden = state.activeTurn === null;
  },
});

function startTurn(a: Ask): void {
  if (turns.activeTurn) {
    // One turn at a time: say so instead of ignoring the click.
    showStatus("info", BUSY);
    announce(BUSY);
    return;
  }
  if (shownHint && statusBox.textContent === shownHint) showStatus("none");
  const id = turns.start(a);
  follow.toLatest();
  send({
    kind: "ask",
    turn_id: id,
    task: a.task,
    text: a.text,
    fields: a.fields,
    conversation_id: turns.conversationId,
    selection: a.selection,
    tab_ids: a.tab_ids,
    collection_id: collections.selected(),
    offline: a.offline,
    mode: a.mode,
    plans: a.plans,
  });
}

/** Asks again with the offline runtime, this once (nothing leaves the computer); Settings stay as they are. */
function useOffline(again: Ask): void {
  announce("Answering offline this time");
  startTurn({ ...again, offline: true });
}

/** A new question: it reads the attached selection and tabs too. */
function askNew(task: TaskName, text: string, label: string, fieldList?: string[]): void {
  picker.closePicker();
  const chosen = intent.value === "inform" || intent.value === "act" ? intent.value : undefined;
  // A question may be answered with a plan of several steps; a summary or an extraction never is.
  const plans = task === "web.answer" ? true : undefined;
  startTurn({ task, text, label, fields: fieldList, selection: picker.selectedText || undefined, tab_ids: picker.tabIds, mode: chosen, plans });
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

function onEvent(ev: SidebarEvent): void {
  switch (ev.kind) {
    case "status":
      onStatus(ev);
      return;
    case "event":
      turns.onHostEvent(ev.msg);
      void offlineCard.onHostMessage(ev.msg);
      return;
    case "turn.tab":
    case "turn.failed":
    case "approval.answer":
      turns.dispatch(ev);
      return;
    case "request.failed":
      turns.requestFailed(ev.request_id, ev.message);
      return;
    case "highlight.result":
      if (!ev.ok) showStatus("info", citationError(ev.message));
      return;
    case "command":
      if (ev.action === "summarize") summarize();
      else if (ev.action === "run-prompt") void runSlot(ev.slot);
      else askAboutSelection(ev.text);
      return;
    case "tabs":
      picker.showTabs(ev.tabs);
      return;
    case "reading":
      showReading(ev.title, ev.url);
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

// ---- requests that are not turns (history, settings, collections) ----

/** Sends a host request; `id` stops it (`cancelRequest`). */
function startRequest(req: SidebarHostRequest): { id: string; reply: Promise<RoutedHostMessage> } {
  const id = `${req.type}-${crypto.randomUUID()}`;
  const reply = turns.expectReply(id);
  send({ kind: "host", request_id: id, request: req });
  return { id, reply };
}

function request(req: SidebarHostRequest): Promise<RoutedHostMessage> {
  return startRequest(req).reply;
}

function cancelRequest(id: string): void {
  send({ kind: "cancel_request", request_id: id });
}

function addPage(req: { collection_id?: string | null; tab_id?: number | null; title?: string }): Promise<RoutedHostMessage> {
  const id = `add_page-${crypto.randomUUID()}`;
  const reply = turns.expectReply(id);
  send({ kind: "add_page", request_id: id, ...req });
  return reply;
}

const follow = new FollowLatest(messages, $("jump-latest") as HTMLButtonElement, document.querySelector("header.top") as HTMLElement, $("composer"));

foldOnNarrowPanels($("composer-more") as HTMLDetailsElement);

const collections = new CollectionsPanel({ request, start: startRequest, cancel: cancelRequest, addPage });
collections.onSelect(renderReading);
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
  if (name === "settings") {
    void settings.load();
    void promptSettings.load();
    void mcpSettings.load();
  }
}

/** Opens a stored conversation in the chat view; the next question continues it. */
function continueWith(conv: ConversationDetail): void {
  turns.dispatch({ kind: "conversation", id: conv.id });
  agentState.clear();
  messages.replaceChildren();
  for (const t of conv.turns) messages.append(turnBox(t, "article", "turn past"));
  messages.append(continuedNotice(conv));
  showView("chat");
  follow.toLatest();
  question.focus();
}

/** Runs a saved prompt on the current page, as a new question. */
function runPrompt(p: SavedPrompt): void {
  showView("chat");
  const q = promptQuestion(p);
  askNew(q.task, q.text, q.label, q.fields);
}

async function runSlot(slot: number): Promise<void> {
  try {
    const p = await library.inSlot(slot);
    if (p) runPrompt(p);
    else showStatus("info", `No saved prompt has shortcut ${slot}. Choose one in Settings → Saved prompts.`);
  } catch (e) {
    showStatus("error", e instanceof Error ? e.message : String(e));
  }
}

/**
 * Says that a follow-up reads the page in front (named above the composer),
 * and offers to reopen the page the conversation was about.
 */
function continuedNotice(conv: ConversationDetail): HTMLElement {
  const p = h("p", "notice continued", `Continuing “${conv.title || "this conversation"}”: a follow-up reads the page named above the box below.`);
  const href = safeHref(conv.page_url);
  if (href) {
    const a = h("a", undefined, "Open the conversation’s page") as HTMLAnchorElement;
    a.href = href;
    a.target = "_blank";
    a.rel = "noopener noreferrer";
    a.title = href;
    p.append(" ", a);
  }
  return p;
}

const history = new HistoryView({ request, continueWith });
/** Settings were saved (in Settings or the header): the header names the new runtime at once. */
function runtimeSaved(runtime: RuntimeInfo, config: ConfigView): void {
  turns.dispatch({ kind: "runtime.saved", info: runtime });
  switcher.show(config);
}

const settings = new SettingsView({ request, saved: runtimeSaved });
const switcher = new RuntimeSwitcher({
  request,
  saved(runtime, config) {
    runtimeSaved(runtime, config);
    if (!$("view-settings").hidden) void settings.load();
  },
  failed: (message) => showStatus("error", message),
});
const picker = new ContextPicker(() => send({ kind: "tabs" }));
const firstRun = new FirstRun(() => showView("settings"));
const offlineCard = new OfflineCard({
  request,
  container: messages,
  openSettings: () => showView("settings"),
  saved: runtimeSaved,
  adding: () => follow.stay(),
});
const library = new PromptLibrary(request);
const promptSettings = new PromptSettings({ request, library });
$("view-settings").append(promptSettings.el);
const mcpSettings = new McpSettings({ request });
$("view-settings").append(mcpSettings.el);
question.before(new SlashMenu(question, library, runPrompt).el);

$("summarize").addEventListener("click", summarize);
$("ask-selection").addEventListener("click", () => send({ kind: "ask-selection" }));
$("new-chat").addEventListener("click", () => {
  turns.dispatch({ kind: "conversation", id: null });
  agentState.clear();
  messages.replaceChildren();
  question.focus();
});
stopBtn.addEventListener("click", () => turns.stop());
mode.addEventListener("change", () => {
  const extract = mode.value === "web.extract";
  fields.hidden = $("fields-label").hidden = !extract;
  question.hidden = $("question-label").hidden = $("enter-hint").hidden = extract;
  ($("send") as HTMLButtonElement).textContent = extract ? "Extract" : "Ask";
});
$("composer").addEventListener("submit", (e) => {
  e.preventDefault();
  if (mode.value === "web.extract") {
    const list = fieldList(fields.value);
    if (!list.length) {
      composerHint("Name at least one field to extract, separated by commas (for example: price, sku).", fields);
      return;
    }
    askNew("web.extract", `Extract: ${list.join(", ")}`, `Extract: ${list.join(", ")}`, list);
  } else {
    const text = question.value.trim();
    if (!text) {
      composerHint("Type a question first, or press “Summarize this page”.", question);
      return;
    }
    question.value = "";
    askNew("web.answer", text, text);
  }
});
let shownHint = "";

/** The page in front, as the background last said. */
let readingPage: { title: string; url: string } | null = null;

function showReading(title: string, url: string): void {
  readingPage = { title, url };
  renderReading();
}

/** Says what the next question will read: the collection chosen, else the tab in front. */
function renderReading(): void {
  const line = $("reading");
  if (!readingPage) return;
  line.hidden = false;
  line.title = readingPage.url;
  const collection = collections.selectedName();
  if (collection) line.replaceChildren("Reading: the collection ", h("strong", undefined, collection));
  else if (!readingPage.url) line.replaceChildren("No web page to read: open one, then ask.");
  else line.replaceChildren("Reading: ", h("strong", undefined, readingPage.title || readingPage.url));
}

/** Why the composer did not send: said next to the field, and to screen readers. */
function composerHint(text: string, field: HTMLElement): void {
  shownHint = text;
  showStatus("info", text);
  announce(text);
  field.focus();
}

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
send({ kind: "reading" });
void firstRun.maybeShow();
