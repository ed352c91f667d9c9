/**
 * Background (service worker on Chromium, event page on Firefox): the router.
 * It owns the native port, builds turns from the sidebar's requests and the
 * content script's observation, routes host events to the sidebar that asked
 * (by `reply_to`, through the turn table, `turns.ts`), and hands gated tool
 * calls to the call state machine (`calls.ts`) and the executor (`run.ts`).
 *
 * Invariants: every internal message is checked to come from this extension
 * (sidebar pages by URL, content scripts by tab); the sidebar may ask only
 * what the `handlers` table names, and only the host requests `HOST_REQUESTS`
 * lists; a tool call runs only if the host's verdict was `allow`, or `ask` and
 * the user of the sidebar that asked approved it and the host accepted the
 * approval; only when the host says `executing` for it; only once; never
 * after its turn was cancelled; never a `host` tool; `deny` never runs.
 */
import { BUILD_BROWSER, ext } from "../shared/api.js";
import { HOST_STOPPED, SIDEBAR_PORT, type SidebarEvent, type SidebarRequest } from "../shared/messages.js";
import { isObject } from "../shared/json.js";
import type { ExtensionMessage, Observation } from "../generated/wire.js";
import type { RoutedHostMessage } from "../shared/protocol.js";
import type { ShareRequest } from "../shared/share.js";
import { HostConnection } from "./host.js";
import { readPlanEdit, type Call } from "./calls.js";
import { observe, toContent } from "./content.js";
import { openTabs, pickedTabs, selectionIn, targetTab, withSelection } from "./context.js";
import { observeTab, PdfError, PdfReader } from "./pdf.js";
import { chunkPlaces, type Place } from "../shared/places.js";
import { wireOpening } from "./opening.js";
import { ToolFailure, toolResultMessage } from "./results.js";
import { runCall } from "./run.js";
import { Sidebars } from "./sidebars.js";
import { TurnTable } from "./turns.js";

type Port = chrome.runtime.Port;

const sidebars = new Sidebars<Port>();
const table = new TurnTable<Port>();
const calls = table.calls;

const NOT_INSTALLED_MESSAGE = "The Laika app is not installed, so nothing can answer yet. Install it (see the command above), then try again.";

/** The host requests a sidebar may have sent for it (anything else is dropped). */
const HOST_REQUESTS: ReadonlySet<string> = new Set([
  "history.list",
  "history.get",
  "history.search",
  "history.delete",
  "history.export",
  "agent_state.forget",
  "config.get",
  "config.set",
  "config.discover",
  "config.test",
  "ping",
  "collections.list",
  "collection.get",
  "collection.rename",
  "collection.remove_source",
  "collection.delete",
  "transform.run",
  "artifact.export",
  "prompts.list",
  "prompts.save",
  "prompts.delete",
  "mcp.servers",
]);

const post = (port: Port | undefined, ev: SidebarEvent): void => sidebars.post(port, ev);

const host = new HostConnection(
  {
    message: onHostMessage,
    state(state, detail, hello) {
      sidebars.broadcast({ kind: "status", state, detail, runtime: hello?.runtime });
    },
    lost(reason) {
      const { turns, requests } = table.hostLost();
      for (const t of turns) post(t.port, { kind: "turn.failed", turn_id: t.id, ...HOST_STOPPED });
      for (const r of requests) post(r.port, { kind: "request.failed", request_id: r.id, message: `The Laika app stopped (${reason}). Try again.` });
    },
    undelivered(ids) {
      for (const id of ids) {
        if (pdfs.fail(id, NOT_INSTALLED_MESSAGE)) continue;
        const { port, isTurn } = table.undelivered(id);
        if (isTurn) {
          post(port, { kind: "turn.failed", turn_id: id, code: "NOT_INSTALLED", message: NOT_INSTALLED_MESSAGE });
        } else post(port, { kind: "request.failed", request_id: id, message: NOT_INSTALLED_MESSAGE });
      }
    },
    invalid(replyTo, error) {
      console.warn("Laika: dropped a host message:", error);
      if (replyTo && pdfs.fail(replyTo, error)) return;
      const port = replyTo ? table.portOf(replyTo) : undefined;
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

/** `pdf.read` requests: their answers are the background's own, not a sidebar's. */
const pdfs = new PdfReader((msg) => host.send(msg));

/** The places (PDF pages, video times) of recent turns' chunks, which their citations open. */
const turnPlaces = new Map<string, (Place | null)[]>();
const MAX_TURN_PLACES = 32;

function rememberPlaces(turnId: string, places: (Place | null)[]): void {
  if (!places.some(Boolean)) return;
  turnPlaces.set(turnId, places);
  for (const old of turnPlaces.keys()) {
    if (turnPlaces.size <= MAX_TURN_PLACES) break;
    turnPlaces.delete(old);
  }
}

function onHostMessage(msg: RoutedHostMessage): void {
  const replyTo = msg.reply_to;
  if (!replyTo) {
    if (msg.type === "error") sidebars.broadcast({ kind: "status", state: "failed", detail: `${msg.code}: ${msg.message}` });
    return;
  }
  if (pdfs.take(msg)) return;
  if (calls.isApproval(replyTo)) {
    onApprovalAnswer(replyTo, msg);
    return;
  }
  const route = table.route(replyTo, msg.type);
  switch (route.kind) {
    case "result":
      // Only a result nobody waited on is answered (UNKNOWN_CALL): the call had ended.
      if (msg.type === "error") console.info(`Laika: the host ignored a tool result (${msg.code}: ${msg.message})`);
      return;
    case "nobody":
      return;
    case "request":
      post(route.port, { kind: "event", msg });
      table.replied(replyTo, msg.type);
      return;
    case "turn":
      post(route.turn.port, { kind: "event", msg });
      onTurnEvent(replyTo, route.turn.port, msg);
      return;
  }
}

/** The parts of a turn's events the background acts on: the call lifecycle, and its end. */
function onTurnEvent(turnId: string, port: Port, msg: RoutedHostMessage): void {
  switch (msg.type) {
    case "tool_call":
      calls.propose(msg, turnId, port);
      return;
    case "estimate":
    case "plan":
      calls.proposeQuestion(msg, turnId, port);
      return;
    case "agent_state": {
      if (msg.state !== "executing" || !msg.call_id) return;
      const call = calls.executing(turnId, msg.call_id);
      if (!call) return;
      call.input = msg.input;
      void execute(call);
      return;
    }
    case "tool_result":
      calls.concluded(msg.call_id);
      return;
    case "done":
      table.done(turnId);
      return;
    default:
      return;
  }
}

function onApprovalAnswer(approvalId: string, msg: RoutedHostMessage): void {
  const accepted = msg.type === "approval.result";
  const approved = msg.type === "approval.result" && msg.approved;
  const call = calls.approvalAnswered(approvalId, accepted, approved);
  if (!call) return;
  post(call.owner, {
    kind: "approval.answer",
    call_id: call.callId,
    accepted,
    approved,
    code: msg.type === "error" ? msg.code : undefined,
    message: msg.type === "error" ? msg.message : undefined,
  });
}

/** Longest wait for the sidebar to write an export. */
const SHARE_MS = 30_000;

/**
 * The sidebar that asked the turn writes the export (a download or the
 * clipboard need a page; the background has none).
 */
function shareThrough(call: Call<Port>, request: ShareRequest): Promise<string> {
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => finish(false, `the sidebar did not write ${request.filename} within ${SHARE_MS / 1000} s`), SHARE_MS);
    const finish = (ok: boolean, message: string) => {
      clearTimeout(timer);
      table.shareEnded(call.callId);
      if (ok) resolve(message);
      else reject(new ToolFailure("SHARE_FAILED", message));
    };
    table.awaitShare(call.callId, { owner: call.owner, done: finish });
    post(call.owner, { kind: "share", call_id: call.callId, request });
  });
}

/** Runs a call the state machine released, then reports it to the host. */
async function execute(call: Call<Port>): Promise<void> {
  const tabId = table.tabOf(call.turnId);
  const { outcome, tabId: nextTab } =
    tabId === undefined
      ? { outcome: { status: "error" as const, code: "NO_PAGE", message: "the turn's tab is gone" }, tabId: -1 }
      : await runCall(call, tabId, (req) => shareThrough(call, req));
  calls.finished(call.callId);
  if (nextTab >= 0) table.moveTo(call.turnId, nextTab);
  const id = `result-${crypto.randomUUID()}`;
  table.resultSent(id);
  let err = host.send(toolResultMessage(id, call.callId, outcome));
  if (err && outcome.observation) {
    // The page did not make a valid observation: report the call without it.
    console.warn("Laika: tool result not sent with its observation:", err);
    err = host.send(toolResultMessage(id, call.callId, { ...outcome, observation: undefined }));
  }
  if (err) {
    console.warn("Laika: could not report a tool result:", err);
    host.send(toolResultMessage(id, call.callId, { status: "error", code: "TOOL_FAILED", message: "the result could not be reported" }));
  }
}

async function ask(port: Port, req: Extract<SidebarRequest, { kind: "ask" }>): Promise<void> {
  const fail = (code: string, message: string) => post(port, { kind: "turn.failed", turn_id: req.turn_id, code, message });
  const tab = await targetTab();
  if (!tab || tab.id === undefined) {
    fail("NO_PAGE", "Open a web page first: Laika reads the page in the active tab.");
    return;
  }
  let observation: Observation;
  try {
    ({ observation } = await observeTab({ ...tab, id: tab.id }, observe, pdfs));
  } catch (e) {
    if (e instanceof PdfError) fail(e.code, `Laika couldn't read this PDF: ${e.message}.`);
    else fail("OBSERVE_FAILED", `Laika couldn't read this page (${e instanceof Error ? e.message : String(e)}). Reload it and try again.`);
    return;
  }
  observation = withSelection(observation, typeof req.selection === "string" ? req.selection : undefined, tab);
  const others = await pickedTabs(Array.isArray(req.tab_ids) ? req.tab_ids : undefined, tab.id);
  if (others.docs.length) observation = { ...observation, tabs: others.docs };
  const places = chunkPlaces(observation);
  rememberPlaces(req.turn_id, places);
  const labels = places.some(Boolean) ? { places: places.map((p) => p?.label ?? null) } : {};
  post(port, { kind: "turn.tab", turn_id: req.turn_id, title: tab.title ?? "", url: tab.url ?? "", tab_id: tab.id, others: others.tabs, ...labels });
  const args: Record<string, unknown> = req.task === "web.extract" ? { fields: req.fields ?? [] } : {};
  const turn: ExtensionMessage = {
    type: "turn",
    id: req.turn_id,
    conversation_id: req.conversation_id ?? null,
    message: { text: req.text },
    task: { name: req.task, args },
    ...(req.collection_id ? { collection_id: req.collection_id } : {}),
    ...(req.offline === true ? { offline: true } : {}),
    ...(req.mode ? { mode: req.mode } : {}),
    ...(req.plans === true ? { plans: true } : {}),
    tab: { url: tab.url ?? null, title: tab.title ?? null, tab_id: tab.id, browser: BUILD_BROWSER === "firefox" ? "firefox" : "chrome" },
    observation,
  };
  table.start(req.turn_id, port, tab.id, others.tabs.map((t) => t.id));
  const err = host.send(turn);
  if (err) {
    table.notSent(req.turn_id);
    fail("INVALID_REQUEST", err);
  }
}

/** Observes a tab (the one named, else the active page) and adds it to a collection. */
async function addPage(port: Port, req: Extract<SidebarRequest, { kind: "add_page" }>): Promise<void> {
  const fail = (message: string) => post(port, { kind: "request.failed", request_id: req.request_id, message });
  const tab = typeof req.tab_id === "number" ? await ext.tabs.get(req.tab_id).catch(() => null) : await targetTab();
  if (!tab || tab.id === undefined || !/^https?:/.test(tab.url ?? "")) {
    fail("Open a web page first: Laika adds the page in that tab.");
    return;
  }
  let observation: Observation;
  try {
    ({ observation } = await observeTab({ ...tab, id: tab.id }, observe, pdfs));
  } catch (e) {
    fail(`Laika couldn't read this page (${e instanceof Error ? e.message : String(e)}).`);
    return;
  }
  table.request(req.request_id, port);
  const err = host.send({
    type: "collection.add_page",
    id: req.request_id,
    ...(req.collection_id ? { collection_id: req.collection_id } : {}),
    ...(typeof req.title === "string" && req.title.trim() ? { title: req.title.slice(0, 200) } : {}),
    observation,
  });
  if (err) {
    table.notSent(req.request_id);
    fail(err);
  }
}

/** Stops a turn: nothing of it runs from now on, and the host is told. */
function cancelTurn(turnId: string): void {
  calls.cancel(turnId);
  host.send({ type: "cancel", id: `cancel-${crypto.randomUUID()}`, target: turnId });
}

type Handler<K extends SidebarRequest["kind"]> = (port: Port, req: Extract<SidebarRequest, { kind: K }>) => void;

/** What a sidebar may ask; the keys are the allow-list. */
const handlers: { [K in SidebarRequest["kind"]]: Handler<K> } = {
  shared(port, req) {
    // Only the sidebar the export was sent to can say how it went.
    table.shareFor(req.call_id, port)?.done(req.ok === true, typeof req.message === "string" ? req.message.slice(0, 300) : "");
  },
  status(port) {
    post(port, { kind: "status", state: host.state, detail: host.detail, runtime: host.hello?.runtime });
    if (host.state === "disconnected" || host.state === "not_installed") host.connect();
  },
  ask(port, req) {
    if (typeof req.turn_id !== "string" || table.isKnown(req.turn_id)) return;
    void ask(port, req);
  },
  host(port, req) {
    if (typeof req.request_id !== "string" || !isObject(req.request) || !HOST_REQUESTS.has(String(req.request.type))) return;
    table.request(req.request_id, port);
    const err = host.send({ ...req.request, id: req.request_id });
    if (err) {
      table.notSent(req.request_id);
      post(port, { kind: "request.failed", request_id: req.request_id, message: err });
    }
  },
  add_page(port, req) {
    if (typeof req.request_id !== "string" || table.isRouted(req.request_id)) return;
    void addPage(port, req);
  },
  cancel(port, req) {
    // Only the sidebar that asked may stop a turn.
    if (table.runningTurn(req.turn_id)?.port !== port) return;
    cancelTurn(req.turn_id);
  },
  cancel_request(port, req) {
    // Only the sidebar that sent it may stop it, and only while it runs; a turn is stopped by `cancel`.
    if (typeof req.request_id !== "string" || table.runningTurn(req.request_id) || table.portOf(req.request_id) !== port) return;
    host.send({ type: "cancel", id: `cancel-${crypto.randomUUID()}`, target: req.request_id });
  },
  approval(port, req) {
    if (typeof req.call_id !== "string" || typeof req.approved !== "boolean") return;
    const plan = req.plan === undefined ? undefined : readPlanEdit(req.plan);
    if (plan === null) return;
    const msg = calls.answer(req.call_id, port, req.approved, `approval-${crypto.randomUUID()}`, { startOnly: req.start_only === true, plan });
    if (!msg) return;
    const err = host.send(msg);
    if (err) {
      calls.approvalAnswered(msg.id, false, false);
      post(port, { kind: "approval.answer", call_id: req.call_id, accepted: false, approved: false, code: "INVALID_REQUEST", message: err });
    }
  },
  "ask-selection"(port) {
    void targetTab()
      .then((tab) => (tab?.id === undefined ? "" : selectionIn(tab.id)))
      .then((text) => post(port, { kind: "command", action: "ask-selection", text }));
  },
  reading(port) {
    void readingNow().then((ev) => post(port, ev));
  },
  tabs(port) {
    // The page in front is read anyway: offer the others.
    void Promise.all([openTabs(), targetTab()]).then(([tabs, front]) =>
      post(port, { kind: "tabs", tabs: tabs.filter((t) => t.id !== front?.id) }),
    );
  },
  highlight(port, req) {
    // Another tab only if the turn included it; else the turn's own page.
    const { tab, other } = table.highlightTarget(req.turn_id, typeof req.tab_id === "number" ? req.tab_id : undefined);
    if (tab === undefined) return;
    if (other) void ext.tabs.update(tab, { active: true }).catch(() => undefined);
    const place = typeof req.chunk === "number" && !other ? turnPlaces.get(req.turn_id)?.[req.chunk - 1] : undefined;
    if (place) {
      // A PDF page or a time in a video: opened there (a PDF viewer runs no content script to highlight in).
      void ext.tabs
        .update(tab, { url: place.url })
        .then(() => post(port, { kind: "highlight.result", ok: true, message: `Opened ${place.label}` }))
        .catch((e: unknown) => post(port, { kind: "highlight.result", ok: false, message: String(e) }));
      return;
    }
    void toContent(tab, { kind: "highlight", handle_id: req.handle_id, quote: req.quote })
      .then((r) => post(port, { kind: "highlight.result", ok: r.ok, message: r.ok ? (r.message ?? "") : r.error }))
      .catch((e: unknown) => post(port, { kind: "highlight.result", ok: false, message: String(e) }));
  },
};

function onSidebarMessage(port: Port, raw: unknown): void {
  if (!isObject(raw) || typeof raw["kind"] !== "string" || !Object.hasOwn(handlers, raw["kind"])) return;
  const kind = raw["kind"] as SidebarRequest["kind"];
  (handlers[kind] as (port: Port, req: SidebarRequest) => void)(port, raw as SidebarRequest);
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
    const left = table.dropSidebar(port);
    // Nobody is left to watch or approve its turns: stop them.
    for (const id of left.turns) cancelTurn(id);
    for (const s of left.shares) s.done(false, "the sidebar was closed before it wrote the export");
  });
  post(port, { kind: "status", state: host.state, detail: host.detail, runtime: host.hello?.runtime });
  sidebars.flushPending(port);
  host.connect();
});

wireOpening((cmd) => sidebars.deliver(cmd));

/** The page a question would read now, for the sidebar's "Reading:" line. */
async function readingNow(): Promise<Extract<SidebarEvent, { kind: "reading" }>> {
  const tab = await targetTab();
  return { kind: "reading", title: tab?.title ?? "", url: tab?.url ?? "" };
}

// The page in front changed: the sidebars' "Reading:" lines follow it.
const readingChanged = (): void => void readingNow().then((ev) => sidebars.broadcast(ev));
ext.tabs.onActivated.addListener(readingChanged);
ext.tabs.onUpdated.addListener((_id, change, tab) => {
  if (tab.active && (change.title !== undefined || change.url !== undefined)) readingChanged();
});
ext.windows.onFocusChanged.addListener(readingChanged);
