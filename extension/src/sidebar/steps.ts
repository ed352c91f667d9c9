/**
 * A turn's live step list: one item per tool call ("Clicking “Search”" →
 * ✓/✗ with what came of it), the blocked ones with the gate's reason, the
 * earlier steps' assistant text in small print, and the approval card of an
 * `ask` call (what will happen, on which element or URL, Approve / Deny, a
 * countdown). DOM APIs only; every string from the host or the page goes
 * through textContent.
 */
import type {
  AgentStateMessage,
  EstimateMessage,
  Evidence,
  OperationMessage,
  ToolCallMessage,
  ToolResultMessage,
  ToolTarget,
} from "../generated/wire.js";
import { isPageTool, isTabTool, type BrowserTool, type UntrustedArguments } from "../generated/tools.js";
import { isObject } from "../shared/json.js";
import { cardButton, cardFrame, countdown } from "./card.js";

/** `operation`s of a summary in stages (`stage:part:<n>`, `stage:merge:…`, `stage:reduce`). */
const STAGE_PREFIX = "stage:";
const STAGE_REDUCE = "stage:reduce";
const STAGE_ITEM = "stage";

/** What the gate's decision on a click rested on, in the user's words. */
const EVIDENCE: Record<Evidence, string> = {
  same_site_link: "a link to a page of this site that commits nothing",
  disclosure: "a control that shows or hides part of the page",
  tab: "a tab of the page",
  pagination: "a page of the list",
  safe_label: "a label that only shows or opens something",
  filter: "a filter or sort choice",
  search_form: "a search on this site",
  commit_word: "a word that commits an action (buy, pay, delete, send…)",
  submits_form: "it submits a form",
  committing_form: "a form that takes payment or sign-in details",
  committing_dialog: "a dialog about an action that commits",
  toggles_setting: "it turns a setting on or off",
  no_label: "no label Laika can read (an icon or emoji)",
  unread_language: "a language Laika cannot read yet",
  other_site: "a link to another site",
  not_a_control: "not a control or web link Laika can vouch for",
  no_evidence: "nothing that shows it only shows or opens something",
};

export type StepState = "pending" | "waiting" | "running" | "ok" | "error" | "blocked" | "expired" | "stopped";

const ICONS: Record<StepState, [string, string]> = {
  pending: ["…", "pending"],
  waiting: ["?", "waiting for your approval"],
  running: ["↻", "running"],
  ok: ["✓", "done"],
  error: ["✗", "failed"],
  blocked: ["⊘", "blocked"],
  expired: ["◷", "expired"],
  stopped: ["■", "stopped"],
};

/** Why a loop stopped, in plain words (`done.stop_reason` other than `answered`). */
export function stopReasonText(reason: string, steps: number): string | null {
  switch (reason) {
    case "answered":
      return null;
    case "step_cap":
      return `Stopped after ${steps} step${steps === 1 ? "" : "s"} — the step limit.`;
    case "loop_detected":
      return "Stopped: the assistant repeated the same action on an unchanged page.";
    case "time_budget":
      return "Stopped: the turn ran out of time.";
    case "cancelled":
      return "Stopped at your request.";
    case "failed":
      return "Stopped: a step failed.";
    default:
      return `Stopped (${reason}).`;
  }
}

function q(s: string, max = 80): string {
  const line = s.replace(/\s+/g, " ").trim();
  return `“${line.length > max ? `${line.slice(0, max - 1)}…` : line}”`;
}

function str(v: unknown): string {
  return typeof v === "string" ? v : "";
}

type Describer<N extends BrowserTool> = (args: UntrustedArguments<N>, target: ToolTarget | null, name: string) => string;

/** The tool's name, for a call with nothing more to say. */
const run = (_args: unknown, _target: unknown, name: string) => `Run ${q(name, 60)}`;

const element = (target: ToolTarget | null) => (target?.text.trim() ? q(target.text) : "an element");

/**
 * What each call the browser runs will do, worded before it runs: every
 * such tool has an entry, or the build fails; a host tool's call is worded
 * by its name.
 */
const DESCRIBERS: { [N in BrowserTool]: Describer<N> } = {
  "browser.click": (_args, target) => `Click ${element(target)}`,
  "browser.type": (args, target) => {
    const field = target?.text.trim() ? q(target.text) : "a field";
    return typeof args.text === "string" ? `Type ${q(args.text)} into ${field}` : `Type into ${field}`;
  },
  "browser.select": (args, target) => `Choose ${q(str(args.value))} in ${element(target)}`,
  "browser.scroll": (args) => (typeof args.deltaY === "number" && args.deltaY < 0 ? "Scroll up" : "Scroll down"),
  "browser.navigate": () => "Open a web page",
  "browser.open_tab": () => "Open a web page in a new tab",
  "browser.back": () => "Go back",
  "browser.forward": () => "Go forward",
  "browser.refresh": () => "Reload the page",
  search: (args) => `Search the web for ${q(str(args.query))}`,
  "browser.observe_dom": () => "Read the page",
  "browser.get_selection_links": () => "Read the selected links",
  "artifact.share": run,
  "source.capture": run,
  "source.refresh": run,
};

/** What a call will do, worded before it runs (the host's `operation` title replaces it once it starts). */
export function describeCall(name: string, args: Record<string, unknown>, target: ToolTarget | null): string {
  const mcp = mcpTool(name);
  if (mcp) return `Call ${q(mcp.tool, 60)} on the MCP server ${q(mcp.server, 60)}`;
  if (!isPageTool(name) && !isTabTool(name)) return run(args, target, name);
  const describer: (args: Record<string, unknown>, target: ToolTarget | null, name: string) => string = DESCRIBERS[name];
  return describer(args, target, name);
}

/** The server and tool of an MCP tool's name (`mcp.<server>.<tool>`). */
export function mcpTool(name: string): { server: string; tool: string } | null {
  const m = /^mcp\.([A-Za-z0-9_-]+)\.([A-Za-z0-9_-]+)$/.exec(name);
  return m ? { server: m[1] ?? "", tool: m[2] ?? "" } : null;
}

/** The URL a call would open, if it opens one. */
export function callUrl(name: string, args: Record<string, unknown>): string | null {
  if (name === "browser.navigate" || name === "browser.open_tab") return str(args["url"]) || null;
  return null;
}

interface Item {
  li: HTMLLIElement;
  icon: HTMLElement;
  title: HTMLElement;
  summary: HTMLElement;
  state: StepState;
  card: ApprovalCard | null;
}

interface ApprovalCard {
  root: HTMLElement;
  buttons: HTMLElement;
  status: HTMLElement;
  timer: ReturnType<typeof setInterval> | null;
}

/** Sends the user's answer on a card; `startOnly`: an estimate's "Read the start only". */
export type ApprovalSender = (callId: string, approved: boolean, startOnly?: boolean) => void;

/** "about 3 minutes", "about 40 seconds". */
export function aboutTime(seconds: number): string {
  if (seconds < 90) return `about ${Math.max(1, Math.round(seconds))} seconds`;
  const minutes = Math.round(seconds / 60);
  return minutes < 90 ? `about ${minutes} minutes` : `about ${Math.round(minutes / 60)} hours`;
}

/** The question an `estimate` asks, in the user's words. */
export function estimateQuestion(msg: EstimateMessage): string {
  const time = msg.seconds === null ? "" : `, ${aboutTime(msg.seconds)} at this model's speed`;
  return `This page is long for this model: about ${msg.parts.toLocaleString()} parts, ${msg.calls.toLocaleString()} model calls${time}. Read it all?`;
}

export class StepList {
  readonly el: HTMLOListElement;
  private items = new Map<string, Item>();
  private notes = new Map<number, HTMLLIElement>();
  private stopped = false;
  /** The parts of a summary in stages read so far, and those that failed. */
  private stage = { read: 0, failed: [] as string[] };
  /** How the user answered the estimate card `callId` (null: not answered). */
  private chose: { callId: string; choice: "all" | "start" | "none" } | null = null;

  constructor(
    private readonly doc: Document,
    private readonly sendApproval: ApprovalSender,
    private readonly now: () => number = () => Date.now(),
  ) {
    this.el = doc.createElement("ol");
    this.el.className = "steps";
    this.el.setAttribute("aria-live", "polite");
    this.el.setAttribute("aria-label", "Steps");
    this.el.hidden = true;
  }

  private h(tag: string, cls?: string, text?: string): HTMLElement {
    const e = this.doc.createElement(tag);
    if (cls) e.className = cls;
    if (text !== undefined) e.textContent = text;
    return e;
  }

  /** An earlier step's assistant text, in small print, before that step's calls. */
  note(step: number, text: string): void {
    if (!text.trim() || this.notes.has(step)) return;
    const li = this.h("li", "step-note") as HTMLLIElement;
    li.dataset["step"] = String(step);
    li.textContent = text.length > 600 ? `${text.slice(0, 599)}…` : text;
    this.notes.set(step, li);
    this.el.append(li);
    this.el.hidden = false;
  }

  /** Takes back the note of `step` (it turned out to be the answer). */
  dropNote(step: number): void {
    this.notes.get(step)?.remove();
    this.notes.delete(step);
  }

  private item(callId: string, title: string): Item {
    const known = this.items.get(callId);
    if (known) return known;
    const li = this.h("li", "step-item") as HTMLLIElement;
    li.dataset["callId"] = callId;
    const icon = this.h("span", "icon");
    icon.setAttribute("role", "img");
    const titleEl = this.h("span", "title", title);
    const summary = this.h("div", "summary");
    li.append(icon, " ", titleEl, summary);
    const item: Item = { li, icon, title: titleEl, summary, state: "pending", card: null };
    this.items.set(callId, item);
    this.setState(item, "pending");
    this.el.append(li);
    this.el.hidden = false;
    return item;
  }

  private setState(item: Item, state: StepState, summary?: string): void {
    item.state = state;
    item.li.dataset["state"] = state;
    const [glyph, label] = ICONS[state];
    item.icon.textContent = glyph;
    item.icon.setAttribute("aria-label", label);
    if (summary !== undefined) item.summary.textContent = summary;
  }

  state(callId: string): StepState | null {
    return this.items.get(callId)?.state ?? null;
  }

  toolCall(msg: ToolCallMessage): void {
    const args = isObject(msg.arguments) ? msg.arguments : {};
    // What a blocked call would have typed is not repeated (it may be a secret).
    const shown = msg.decision === "deny" ? {} : args;
    const item = this.item(msg.call_id, describeCall(msg.name, shown, msg.target));
    item.li.dataset["decision"] = msg.decision;
    if (msg.decision === "deny") {
      this.setState(item, "blocked", `Blocked: ${msg.detail}`);
    } else if (msg.decision === "ask") {
      this.setState(item, "waiting", "Waiting for your approval.");
      item.card = this.approvalCard(msg, args);
      item.li.append(item.card.root);
    }
  }

  /**
   * An `estimate`: the turn waits for the user to choose, before any model
   * call, between reading the whole long page, its start only (when
   * offered) and not reading it.
   */
  estimate(msg: EstimateMessage): void {
    const item = this.item(msg.call_id, "Long page");
    if (item.card) return;
    this.setState(item, "waiting", "Waiting for your answer.");
    const { root, buttons, status } = cardFrame(this.doc, "approval-card estimate-card", "Read this long page?", estimateQuestion(msg));
    root.append(
      this.h(
        "div",
        "approval-detail",
        `${msg.concurrency > 1 ? `${msg.concurrency} parts are read at a time. ` : ""}Stop ends it at any point.`,
      ),
    );
    status.setAttribute("role", "status");
    const all = cardButton(this.doc, "Read it all", true);
    const start = cardButton(this.doc, "Read the start only");
    const cancel = cardButton(this.doc, "Cancel");
    const offered = msg.start_chars !== null;
    const choices: HTMLButtonElement[] = offered ? [all, start, cancel] : [all, cancel];
    if (offered && msg.start_chars !== null) start.title = `Answers from the first ${msg.start_chars.toLocaleString()} characters, in one call.`;
    buttons.append(...choices);
    root.append(buttons, status);
    const card: ApprovalCard = { root, buttons, status, timer: null };
    const answer = (chose: "all" | "start" | "none") => {
      if (this.stopped) return;
      this.chose = { callId: msg.call_id, choice: chose };
      for (const b of choices) b.disabled = true;
      status.textContent = chose === "all" ? "Reading it all…" : chose === "start" ? "Reading the start only…" : "Not reading it.";
      this.sendApproval(msg.call_id, chose !== "none", chose === "start");
    };
    all.addEventListener("click", () => answer("all"));
    start.addEventListener("click", () => answer("start"));
    cancel.addEventListener("click", () => answer("none"));
    item.card = card;
    item.li.append(root);
  }

  /** Whether the user chose not to read a long page (its turn ends without an answer). */
  declined(): boolean {
    return this.chose?.choice === "none";
  }

  private approvalCard(msg: ToolCallMessage, args: Record<string, unknown>): ApprovalCard {
    const { root, buttons, status } = cardFrame(this.doc, "approval-card", "Approval needed", `Laika wants to: ${describeCall(msg.name, args, msg.target)}`);
    // A call of an approved plan: approving the plan approved none of its calls, so the card says which step asks.
    const step = msg.plan_step;
    if (step) root.prepend(this.h("div", "approval-plan-step", `Step ${step.index} of ${step.total}: ${step.title}`));
    const url = callUrl(msg.name, args);
    if (url) {
      const row = this.h("div", "approval-target");
      row.append("Address: ", this.h("code", "url", url));
      root.append(row);
    } else if (msg.name === "search") {
      const row = this.h("div", "approval-target");
      row.append("Query: ", this.h("code", "query", str(args["query"])));
      root.append(row);
    } else if (mcpTool(msg.name)) {
      // What leaves for the server: the arguments, as sent.
      const row = this.h("div", "approval-target");
      const sent = JSON.stringify(args);
      row.append("Sends: ", this.h("code", "mcp-arguments", sent.length > 400 ? `${sent.slice(0, 400)}…` : sent));
      root.append(row);
    } else if (msg.target) {
      const row = this.h("div", "approval-target");
      row.append(`On the ${msg.target.role || "element"}: `, this.h("strong", undefined, q(msg.target.text || msg.target.handle_id)));
      root.append(row);
    }
    if (msg.detail) root.append(this.h("div", "approval-detail", msg.detail));
    if (msg.evidence) root.append(this.h("div", "approval-evidence", `Laika judged this on: ${EVIDENCE[msg.evidence]}.`));
    if (msg.user_asked) root.append(this.h("div", "approval-user-asked", "You asked for this. Laika still asks before it acts on your behalf."));
    const approve = cardButton(this.doc, "Approve", true);
    const deny = cardButton(this.doc, "Deny");
    buttons.append(approve, deny);
    root.append(buttons, status);
    const card: ApprovalCard = { root, buttons, status, timer: null };
    const answer = (approved: boolean) => {
      if (this.stopped) return;
      approve.disabled = deny.disabled = true;
      status.textContent = approved ? "Approved — asking Laika to go ahead…" : "Denied — it will not run.";
      this.sendApproval(msg.call_id, approved);
    };
    approve.addEventListener("click", () => answer(true));
    deny.addEventListener("click", () => answer(false));
    if (msg.expires_in_ms !== null) card.timer = countdown(this.doc, buttons, msg.expires_in_ms, this.now, () => this.expire(msg.call_id));
    return card;
  }

  /** The card is answered or over: its buttons go, its countdown stops. */
  private closeCard(item: Item, status: string): void {
    const card = item.card;
    if (!card) return;
    if (card.timer) clearInterval(card.timer);
    card.timer = null;
    card.buttons.remove();
    card.status.textContent = status;
    card.root.classList.add("closed");
  }

  private expire(callId: string): void {
    const item = this.items.get(callId);
    if (!item) return;
    this.closeCard(item, "Expired");
    this.setState(item, "expired", "Expired: nobody approved it in time, so it was not run.");
  }

  /** How the host took the user's answer. */
  approvalAnswer(callId: string, accepted: boolean, approved: boolean, code?: string, message?: string): void {
    const item = this.items.get(callId);
    if (!item) return;
    if (this.chose?.callId === callId && accepted) {
      // An estimate's card: it is answered, nothing of it runs.
      const { choice } = this.chose;
      // The choice, which stays true whatever the reading comes to (the parts' step and the note say how it goes).
      const said = choice === "all" ? "You chose to read it all." : choice === "start" ? "You chose to read the start only." : "You chose not to read it.";
      this.closeCard(item, said);
      this.setState(item, approved ? "ok" : "stopped", said);
    } else if (accepted && approved) {
      this.closeCard(item, "Approved");
      this.setState(item, "pending", "Approved.");
    } else if (accepted) {
      this.closeCard(item, "Denied");
    } else if (code === "APPROVAL_EXPIRED") {
      this.expire(callId);
    } else {
      this.closeCard(item, `Not accepted (${code ?? "error"}): ${message ?? ""}`.trim());
    }
  }

  agentState(msg: AgentStateMessage): void {
    if (!msg.call_id) return;
    const item = this.items.get(msg.call_id);
    if (item && msg.state === "executing" && item.state !== "blocked") this.setState(item, "running");
  }

  operation(msg: OperationMessage): void {
    if (msg.call_id.startsWith(STAGE_PREFIX)) {
      this.stageOperation(msg);
      return;
    }
    const item = this.item(msg.call_id, msg.title);
    item.title.textContent = msg.title;
    item.li.dataset["action"] = msg.action;
    if (msg.status === "start") this.setState(item, "running", "");
    else if (msg.status === "success") this.setState(item, "ok", msg.message ?? "");
    else this.setState(item, "error", msg.message ?? "");
  }

  /**
   * A summary in stages is one item, not one per model call (a long page
   * makes dozens): its title follows the call under way ("Reading part 3
   * of 34"), its line counts the parts read and names those that failed.
   */
  private stageOperation(msg: OperationMessage): void {
    const item = this.item(STAGE_ITEM, msg.title);
    item.title.textContent = msg.title;
    item.li.dataset["action"] = msg.action;
    const isPart = msg.call_id.startsWith(`${STAGE_PREFIX}part:`);
    if (isPart && msg.status === "success") this.stage.read += 1;
    // After Stop, parts cut short are not failures: the stop is said once.
    if (isPart && msg.status === "error" && !this.stopped) this.stage.failed.push(`${msg.title}: ${msg.message ?? "failed"}`);
    const counts = [this.stage.read ? `${this.stage.read} part${this.stage.read === 1 ? "" : "s"} read.` : "", ...this.stage.failed].filter(Boolean).join(" ");
    if (msg.call_id !== STAGE_REDUCE || msg.status === "start") this.setState(item, "running", counts);
    else this.setState(item, msg.status === "success" ? "ok" : "error", [counts, msg.message ?? ""].filter(Boolean).join(" "));
  }

  toolResult(msg: ToolResultMessage): void {
    const item = this.item(msg.call_id, describeCall(msg.name, {}, null));
    switch (msg.status) {
      case "ok":
        this.closeCard(item, "Approved");
        this.setState(item, "ok", msg.summary);
        return;
      case "error":
        this.closeCard(item, "Not run");
        this.setState(item, "error", msg.summary);
        return;
      case "denied":
        this.closeCard(item, "Denied");
        this.setState(item, "blocked", msg.error?.code === "USER_DENIED" ? "Denied by you — not run." : `Blocked: ${msg.summary}`);
        return;
      case "timeout":
        if (msg.error?.code === "APPROVAL_EXPIRED") {
          this.expire(msg.call_id);
          return;
        }
        this.closeCard(item, "Timed out");
        this.setState(item, "error", `Timed out: ${msg.summary}`);
        return;
    }
  }

  /** The user stopped the turn: no card can be answered, nothing pending will run. */
  stop(): void {
    this.stopped = true;
    for (const item of this.items.values()) {
      if (item.state === "pending" || item.state === "waiting") {
        this.closeCard(item, "Stopped");
        this.setState(item, "stopped", "Not run: you stopped the turn.");
      }
    }
  }

  /** The turn is over: countdowns stop, open cards close. */
  end(): void {
    for (const item of this.items.values()) {
      if (item.card?.timer) this.closeCard(item, item.state === "waiting" ? "No longer needed" : "");
      if (item.state === "waiting" || item.state === "pending") this.setState(item, "stopped", "Not run.");
      else if (item.state === "running") this.setState(item, "stopped", `${item.summary.textContent ?? ""} Not finished.`.trim());
    }
  }
}
