/**
 * Background (service worker on Chromium, event page on Firefox): owns the
 * native port, builds turns from the sidebar's requests and the content
 * script's observation, routes host events to the sidebar that asked (by
 * `reply_to`), and executes gated tool calls.
 *
 * Invariants: every internal message is checked to come from this extension
 * (sidebar pages by URL, content scripts by tab); a tool call runs only if the
 * host's verdict was `allow`, or `ask` and the user approved it, and only once;
 * `deny` never runs.
 */
import { BUILD_BROWSER, ext } from "../shared/api.js";
import {
  SIDEBAR_PORT,
  isObject,
  type ContentRequest,
  type ContentResponse,
  type SidebarEvent,
  type SidebarRequest,
} from "../shared/messages.js";
import type { Decision, ExtensionMessage, Observation, ToolCallMessage } from "../generated/wire.js";
import type { RoutedHostMessage } from "../shared/protocol.js";
import { HostConnection } from "./host.js";
import { isPageTool, isTabTool } from "../generated/tools.js";
import { runTabTool, waitForLoad } from "./tools.js";

const sidebars = new Set<chrome.runtime.Port>();
/** Request id (turn or other request) → the sidebar port that asked. */
const routes = new Map<string, chrome.runtime.Port>();
/** Turn id → the tab it observed. */
const turnTabs = new Map<string, number>();

interface PendingCall {
  decision: Decision;
  name: string;
  args: Record<string, unknown>;
  tabId: number;
  port: chrome.runtime.Port;
  state: "waiting" | "running" | "finished" | "denied";
}
const calls = new Map<string, PendingCall>();
let pendingCommand: "summarize" | null = null;

function post(port: chrome.runtime.Port | undefined, ev: SidebarEvent): void {
  try {
    port?.postMessage(ev);
  } catch {
    // The sidebar closed; its routes are dropped on disconnect.
  }
}

function broadcast(ev: SidebarEvent): void {
  for (const p of sidebars) post(p, ev);
}

const host = new HostConnection(
  {
    message: onHostMessage,
    state(state, detail, hello) {
      broadcast({ kind: "status", state, detail, runtime_label: hello?.runtime.label });
    },
    invalid(replyTo, error) {
      console.warn("Laika: dropped a host message:", error);
      const port = replyTo ? routes.get(replyTo) : undefined;
      if (replyTo && port) {
        post(port, {
          kind: "turn.failed",
          turn_id: replyTo,
          code: "INVALID_HOST_MESSAGE",
          message: "Laika received an invalid answer from the host.",
        });
        post(port, { kind: "request.failed", request_id: replyTo, message: error });
      }
    },
  },
  { name: "laika-extension", version: ext.runtime.getManifest().version, browser: BUILD_BROWSER },
);

function onHostMessage(msg: RoutedHostMessage): void {
  const replyTo = msg.reply_to;
  const port = replyTo ? routes.get(replyTo) : undefined;
  if (!port || !replyTo) {
    if (msg.type === "error") broadcast({ kind: "status", state: "failed", detail: `${msg.code}: ${msg.message}` });
    return;
  }
  if (msg.type === "tool_call") registerCall(msg, replyTo, port);
  post(port, { kind: "event", msg });
  if (msg.type === "tool_call") void execute(msg.call_id, false);
  const isTurn = turnTabs.has(replyTo);
  // A turn ends with `done`; other requests with their one result or error.
  if (msg.type === "done" || (!isTurn && msg.type !== "turn.started" && msg.type !== "context_usage")) {
    routes.delete(replyTo);
  }
}

function registerCall(msg: ToolCallMessage, turnId: string, port: chrome.runtime.Port): void {
  const tabId = turnTabs.get(turnId);
  if (tabId === undefined || calls.has(msg.call_id)) return;
  calls.set(msg.call_id, {
    decision: msg.decision,
    name: msg.name,
    args: isObject(msg.arguments) ? msg.arguments : {},
    tabId,
    port,
    state: msg.decision === "deny" ? "denied" : "waiting",
  });
}

async function toContent(tabId: number, req: ContentRequest): Promise<ContentResponse> {
  const send = () => ext.tabs.sendMessage(tabId, req) as Promise<ContentResponse | undefined>;
  let res: ContentResponse | undefined;
  try {
    res = await send();
  } catch {
    // The page was open before Laika was installed: inject the content script once.
    await ext.scripting.executeScript({ target: { tabId }, files: ["content.js"] });
    res = await send();
  }
  if (!res || typeof res !== "object") return { ok: false, error: "the page did not answer" };
  return res;
}

async function observe(tabId: number): Promise<Observation> {
  const res = await toContent(tabId, { kind: "observe" });
  if (!res.ok) throw new Error(res.error);
  if (!res.observation) throw new Error("the page did not return an observation");
  return res.observation;
}

/**
 * Runs a call once: an `allow` at once, an `ask` only when `approved`. The
 * verdict is the one recorded when the call first arrived, so a host message
 * repeating a `call_id` cannot turn an `ask` into an `allow`.
 */
async function execute(callId: string, approved: boolean): Promise<void> {
  const call = calls.get(callId);
  if (!call || call.state !== "waiting") return;
  if (!(call.decision === "allow" || (call.decision === "ask" && approved))) return;
  call.state = "running";
  let ok = true;
  let message: string;
  try {
    let tabId = call.tabId;
    if (isPageTool(call.name)) {
      const res = await toContent(tabId, { kind: "tool", name: call.name, args: call.args });
      if (!res.ok) throw new Error(res.error);
      message = res.message ?? "done";
    } else if (isTabTool(call.name)) {
      const r = await runTabTool(tabId, call.name, call.args);
      tabId = r.tabId;
      message = r.message;
    } else {
      throw new Error(`${call.name} is not a tool Laika can run in the browser`);
    }
    // Every action is followed by a fresh observation of the page it touched.
    if (call.name !== "browser.observe_dom") {
      await waitForLoad(tabId, 15_000);
      const obs = await observe(tabId);
      message += ` · page re-observed (${obs.summary.elements?.length ?? 0} elements)`;
    }
  } catch (e) {
    ok = false;
    message = e instanceof Error ? e.message : String(e);
  }
  call.state = "finished";
  post(call.port, { kind: "tool.result", call_id: callId, ok, message });
}

async function targetTab(): Promise<chrome.tabs.Tab | null> {
  const tabs = await ext.tabs.query({});
  const web = tabs.filter((t) => typeof t.url === "string" && /^(https?|file):/.test(t.url) && t.id !== undefined);
  const focused = await ext.windows.getLastFocused().catch(() => null);
  const active = web.find((t) => t.active && focused && t.windowId === focused.id);
  if (active) return active;
  // The sidebar may itself be a tab (tests, or opened from history): use the last web tab seen.
  web.sort((a, b) => (b.lastAccessed ?? 0) - (a.lastAccessed ?? 0));
  return web[0] ?? null;
}

async function ask(port: chrome.runtime.Port, req: Extract<SidebarRequest, { kind: "ask" }>): Promise<void> {
  const fail = (code: string, message: string) => post(port, { kind: "turn.failed", turn_id: req.turn_id, code, message });
  const tab = await targetTab();
  if (!tab || tab.id === undefined) {
    fail("NO_PAGE", "Open a web page first: Laika reads the page in the active tab.");
    return;
  }
  let observation: Observation;
  try {
    observation = await observe(tab.id);
  } catch (e) {
    fail("OBSERVE_FAILED", `Laika couldn't read this page (${e instanceof Error ? e.message : String(e)}). Reload it and try again.`);
    return;
  }
  post(port, { kind: "turn.tab", turn_id: req.turn_id, title: tab.title ?? "", url: tab.url ?? "" });
  const args: Record<string, unknown> = req.task === "web.extract" ? { fields: req.fields ?? [] } : {};
  const turn: ExtensionMessage = {
    type: "turn",
    id: req.turn_id,
    conversation_id: req.conversation_id ?? null,
    message: { text: req.text },
    task: { name: req.task, args },
    tab: { url: tab.url ?? null, title: tab.title ?? null, tab_id: tab.id, browser: BUILD_BROWSER === "firefox" ? "firefox" : "chrome" },
    observation,
  };
  routes.set(req.turn_id, port);
  turnTabs.set(req.turn_id, tab.id);
  const err = host.send(turn);
  if (err) {
    routes.delete(req.turn_id);
    fail("INVALID_REQUEST", err);
  }
}

function onSidebarMessage(port: chrome.runtime.Port, raw: unknown): void {
  if (!isObject(raw) || typeof raw["kind"] !== "string") return;
  const req = raw as SidebarRequest;
  switch (req.kind) {
    case "status":
      post(port, { kind: "status", state: host.state, detail: host.detail, runtime_label: host.hello?.runtime.label });
      if (host.state === "disconnected" || host.state === "not_installed") host.connect();
      return;
    case "ask":
      void ask(port, req);
      return;
    case "host": {
      const allowed = ["history.list", "history.get", "history.search", "history.delete", "history.export", "config.get", "config.set", "ping"];
      if (!isObject(req.request) || !allowed.includes(String(req.request.type))) return;
      routes.set(req.request_id, port);
      const err = host.send({ ...req.request, id: req.request_id });
      if (err) {
        routes.delete(req.request_id);
        post(port, { kind: "request.failed", request_id: req.request_id, message: err });
      }
      return;
    }
    case "cancel":
      host.send({ type: "cancel", id: `cancel-${crypto.randomUUID()}`, target: req.turn_id });
      return;
    case "tool.approve": {
      const call = calls.get(req.call_id);
      if (call && call.port === port) void execute(req.call_id, true);
      return;
    }
    case "tool.deny": {
      const call = calls.get(req.call_id);
      if (call && call.port === port && call.state === "waiting") call.state = "denied";
      return;
    }
    case "highlight": {
      const tabId = turnTabs.get(req.turn_id);
      if (tabId === undefined) return;
      void toContent(tabId, { kind: "highlight", handle_id: req.handle_id, quote: req.quote })
        .then((r) => post(port, { kind: "highlight.result", ok: r.ok, message: r.ok ? (r.message ?? "") : r.error }))
        .catch((e: unknown) => post(port, { kind: "highlight.result", ok: false, message: String(e) }));
      return;
    }
    default:
      return;
  }
}

ext.runtime.onConnect.addListener((port) => {
  const sender = port.sender;
  // Only our own sidebar page may connect (not content scripts, not other extensions).
  const page = ext.runtime.getURL("sidepanel.html");
  if (port.name !== SIDEBAR_PORT || sender?.id !== ext.runtime.id || !sender.url?.startsWith(page)) {
    port.disconnect();
    return;
  }
  sidebars.add(port);
  port.onMessage.addListener((m: unknown) => onSidebarMessage(port, m));
  port.onDisconnect.addListener(() => {
    sidebars.delete(port);
    for (const [id, p] of routes) if (p === port) routes.delete(id);
    for (const [id, c] of calls) if (c.port === port) calls.delete(id);
  });
  post(port, { kind: "status", state: host.state, detail: host.detail, runtime_label: host.hello?.runtime.label });
  if (pendingCommand) {
    post(port, { kind: "command", action: pendingCommand });
    pendingCommand = null;
  }
  host.connect();
});

// ---- opening the sidebar: toolbar button, keyboard shortcut, context menu ----

type FirefoxSidebar = { sidebarAction?: { open(): Promise<void> } };

async function openSidebar(tab: chrome.tabs.Tab | undefined): Promise<void> {
  const ff = ext as unknown as FirefoxSidebar;
  if (ff.sidebarAction) {
    await ff.sidebarAction.open();
    return;
  }
  if (ext.sidePanel && tab?.windowId !== undefined) await ext.sidePanel.open({ windowId: tab.windowId });
}

function summarizeFromMenu(tab: chrome.tabs.Tab | undefined): void {
  if (sidebars.size > 0) broadcast({ kind: "command", action: "summarize" });
  else pendingCommand = "summarize";
  void openSidebar(tab).catch((e: unknown) => console.warn("Laika: could not open the sidebar:", e));
}

ext.runtime.onInstalled.addListener(() => {
  ext.contextMenus.create({ id: "laika-summarize", title: "Summarize this page with Laika", contexts: ["page", "selection"] });
  ext.contextMenus.create({ id: "laika-open", title: "Open Laika", contexts: ["page", "link", "selection"] });
});

ext.contextMenus.onClicked.addListener((info, tab) => {
  if (info.menuItemId === "laika-summarize") summarizeFromMenu(tab);
  else if (info.menuItemId === "laika-open") void openSidebar(tab).catch(() => undefined);
});

ext.commands.onCommand.addListener((command, tab) => {
  if (command === "open-sidebar") void openSidebar(tab).catch(() => undefined);
});

if (ext.sidePanel?.setPanelBehavior) {
  void ext.sidePanel.setPanelBehavior({ openPanelOnActionClick: true }).catch(() => undefined);
} else {
  ext.action?.onClicked.addListener((tab) => void openSidebar(tab).catch(() => undefined));
}
