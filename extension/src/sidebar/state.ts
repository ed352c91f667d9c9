/**
 * The sidebar's state, and the pure reducer that moves it: `reduce(state,
 * action)` over the host's events (docs/wire-protocol.md, routed by turn id),
 * the background's word on a turn, and the user's actions. No DOM here: the
 * turn views (`turn-view.ts`) render from it, so what a turn shows is
 * unit-tested as data (test/sidebar-state.test.ts).
 *
 * States are never changed in place: a changed turn is a new object, and so
 * is a changed answer area (`body`), so a view sees what changed by identity.
 */
import type {
  AgentPlan,
  AssistantMessage,
  ContextUsageMessage,
  ConversationAgentState,
  DoneMessage,
  RenderBlock,
  RuntimeInfo,
  TaskName,
  ToolResultMessage,
} from "../generated/wire.js";
import { HOST_STOPPED, type OpenTab, type SidebarEvent } from "../shared/messages.js";
import type { RoutedHostMessage } from "../shared/protocol.js";
import { applyPatch } from "./entity-patch.js";

/** How long a turn may wait for the host's first word before the sidebar gives up on it. */
export const HOST_SILENCE_MS = 20_000;

/** How long a stopped turn may wait for the host's `done` before the sidebar ends it itself. */
export const STOP_GRACE_MS = 5_000;

/** What was asked, so it can be asked again (regenerate) or edited. */
export interface Ask {
  task: TaskName;
  text: string;
  label: string;
  fields?: string[];
  selection?: string;
  tab_ids?: number[];
  /** Answered with the offline runtime ("Use offline"), whatever Settings name. */
  offline?: boolean;
  /** The user's choice of mode for this question, if they made one. */
  mode?: "inform" | "act";
  /** A question from the composer: the model may answer with a plan, shown as a checklist. */
  plans?: boolean;
}

/** One part of a turn's answer area, in order. */
export type BodyItem =
  /** Streamed blocks of the step being written, until its `assistant` replaces them. */
  | { kind: "preview"; blocks: RenderBlock[] }
  /** An `assistant`: its render, its data, its citations. */
  | { kind: "answer"; msg: AssistantMessage }
  /** The words of the block being written (`text_delta`). */
  | { kind: "text"; index: number; text: string }
  /** The host's `error` for the turn. */
  | { kind: "error"; code: string; message: string }
  /** The turn failed before or outside the host (not sent, no answer in time); `retry`: asking again may work (the host went away). */
  | { kind: "failure"; text: string; retry?: boolean }
  | { kind: "notice"; text: string };

/** A tool call as its step shows it. */
export type CallPhase =
  /** `allow`: waits for the host to run it. */
  | "proposed"
  /** `ask`: the approval card waits for the user. */
  | "awaiting_approval"
  | "approved"
  | "running"
  | "ok"
  | "error"
  /** Denied by the gate or the user, or blocked. */
  | "denied"
  | "expired"
  /** The host did not take the user's answer. */
  | "refused"
  /** Never ran, or never finished: the turn was stopped or ended. */
  | "stopped";

export interface CallState {
  callId: string;
  step: number;
  name: string;
  phase: CallPhase;
}

export interface TurnState {
  id: string;
  ask: Ask;
  /** The host said something about this turn (so it is running there). */
  heard: boolean;
  /** A failure was shown for the turn. */
  failed: boolean;
  ended: boolean;
  /** How many times the turn was ended (a `done` may follow an `error`); each closes what is still open. */
  ends: number;
  /** The line saying what happens now (hidden once the turn ended). */
  progress: string;
  /** The page it read, and the other tabs. */
  pages: string[];
  /** The other tabs it read, to name and highlight their citations. */
  others: OpenTab[];
  /** The page it read (its tab's title and URL), to name its quotes beside other pages'. */
  page: { title: string; url: string } | null;
  /** The label of each chunk's place (a PDF page, a video time), so citations name and open it. */
  places: (string | null)[];
  /** Each `context_usage`, oldest first. */
  usage: ContextUsageMessage[];
  /**
   * The call id of an `estimate` the user has not chosen on yet: until the
   * host acts on the choice (a part read, the start's own usage, the end),
   * nothing is said to be read.
   */
  estimate: string | null;
  /** Which runtime answered (and where the page went). */
  runtime: { info: RuntimeInfo; endpoint?: string } | null;
  /** The answer area. */
  body: readonly BodyItem[];
  /** Streamed blocks of `previewStep`, by index (holes until they come). */
  preview: readonly (RenderBlock | undefined)[];
  previewStep: number;
  /** The block whose words are streaming: kept across redraws of the answer area. */
  writing: { step: number; index: number; text: string } | null;
  /** The latest step's `assistant`; it leaves the answer for the step list when calls follow it. */
  latest: AssistantMessage | null;
  /** The turn's last `assistant`, whichever step it came from (until `done`). */
  last: AssistantMessage | null;
  /** Earlier steps' texts, moved to the step list (their steps proposed calls). */
  notes: readonly AssistantMessage[];
  calls: Readonly<Record<string, CallState>>;
  /**
   * The turn's plan: the `plan` event's (its `call_id` answers it), moved
   * only by the host's `entity_patch`es of it (null: none proposed).
   */
  plan: { callId: string; plan: AgentPlan } | null;
  /** The turn's `done`, with the answer it ended on. */
  done: { msg: DoneMessage; answer: AssistantMessage | null } | null;
}

export interface SidebarState {
  conversationId: string | null;
  /** The turn running now (one at a time). */
  activeTurn: string | null;
  turns: Readonly<Record<string, TurnState>>;
  /** The runtime the header names: the one that last answered, else what the host started with. */
  runtime: { info: RuntimeInfo; endpoint?: string; answered: boolean } | null;
  /**
   * The conversation's agent state as the host has it: from the turn's
   * `session`, then moved only by `entity_patch` (null: none yet).
   */
  agentState: ConversationAgentState | null;
}

export type SidebarAction =
  /** The user asked (ignored while another turn runs). */
  | { kind: "asked"; id: string; ask: Ask }
  /** A host event for a turn (`reply_to` names it). */
  | { kind: "host"; msg: RoutedHostMessage }
  | Extract<SidebarEvent, { kind: "turn.tab" | "turn.failed" | "approval.answer" | "status" }>
  /** The host said nothing about the turn in time. */
  | { kind: "silent"; id: string }
  /** The user pressed Stop on the running turn. */
  | { kind: "stop"; id: string }
  /** A stopped turn heard no `done` within `STOP_GRACE_MS`: it ends here. */
  | { kind: "stop.unanswered"; id: string }
  /** Settings were saved: new turns use `info`. */
  | { kind: "runtime.saved"; info: RuntimeInfo }
  /** A new chat (null), or a stored conversation continued. */
  | { kind: "conversation"; id: string | null };

export function initialState(): SidebarState {
  return { conversationId: null, activeTurn: null, turns: {}, runtime: null, agentState: null };
}

function newTurn(id: string, ask: Ask): TurnState {
  return {
    id,
    ask,
    heard: false,
    failed: false,
    ended: false,
    ends: 0,
    progress: "Reading the page…",
    pages: [],
    others: [],
    page: null,
    places: [],
    usage: [],
    estimate: null,
    runtime: null,
    body: [],
    preview: [],
    previewStep: 0,
    writing: null,
    latest: null,
    last: null,
    notes: [],
    calls: {},
    plan: null,
    done: null,
  };
}

export function reduce(state: SidebarState, action: SidebarAction): SidebarState {
  switch (action.kind) {
    case "asked":
      if (state.activeTurn) return state;
      return { ...state, activeTurn: action.id, turns: { ...state.turns, [action.id]: newTurn(action.id, action.ask) } };
    case "host":
      return onHost(state, action.msg);
    case "status":
      if (action.state !== "ready" || !action.runtime || state.runtime?.answered) return state;
      return { ...state, runtime: { info: action.runtime, answered: false } };
    case "turn.tab":
      return withTurn(state, action.turn_id, (t) => ({
        ...t,
        others: action.others,
        page: { title: action.title, url: action.url },
        places: action.places ?? [],
        pages: [
          ...t.pages,
          action.title || action.url,
          ...(action.others.length ? [`Also read: ${action.others.map((o) => o.title || o.url).join(" · ")}`] : []),
        ],
        progress: "Asking…",
      }));
    case "turn.failed": {
      const t = state.turns[action.turn_id];
      if (!t || t.ended) return state;
      const retry = action.code === HOST_STOPPED.code;
      const failure: BodyItem = retry ? { kind: "failure", text: action.message, retry } : { kind: "failure", text: action.message };
      return endTurn(withTurn(state, action.turn_id, (turn) => ({ ...turn, failed: true, body: [...turn.body, failure] })), action.turn_id);
    }
    case "approval.answer": {
      const phase: CallPhase = action.accepted
        ? action.approved
          ? "approved"
          : "denied"
        : action.code === "APPROVAL_EXPIRED"
          ? "expired"
          : "refused";
      let next = state;
      for (const t of Object.values(state.turns)) {
        if (t.calls[action.call_id]) next = withTurn(next, t.id, (turn) => setCall(turn, action.call_id, phase));
        // The choice on a long page's estimate is taken: what it starts is said once the host starts it.
        if (t.estimate === action.call_id && action.accepted && action.approved && !t.ended) next = withTurn(next, t.id, (turn) => ({ ...turn, progress: "Starting…" }));
      }
      return next;
    }
    case "silent": {
      const t = state.turns[action.id];
      if (!t || t.heard || t.ended) return state;
      const text = `The Laika app did not answer within ${HOST_SILENCE_MS / 1000} seconds. Check that it is installed (see above), then try again.`;
      return endTurn(withTurn(state, action.id, (turn) => ({ ...turn, failed: true, body: [...turn.body, { kind: "failure", text }] })), action.id);
    }
    case "stop": {
      const t = state.turns[action.id];
      if (!t) return state;
      // No card can be answered, nothing pending will run.
      const stopped = withTurn(state, action.id, (turn) => stopCalls(turn, ["proposed", "awaiting_approval", "approved"]));
      // The host never took the turn: nothing will end it but us.
      if (!t.heard) return endTurn(withTurn(stopped, action.id, (turn) => ({ ...turn, body: [...turn.body, { kind: "notice", text: "Stopped." }] })), action.id);
      return withTurn(stopped, action.id, (turn) => ({ ...turn, progress: "Stopping…" }));
    }
    case "runtime.saved":
      return { ...state, runtime: { info: action.info, answered: false } };
    case "stop.unanswered": {
      const t = state.turns[action.id];
      if (!t || t.ended) return state;
      return endTurn(withTurn(state, action.id, (turn) => ({ ...turn, body: [...turn.body, { kind: "notice", text: "Stopped." }] })), action.id);
    }
    case "conversation":
      return { ...state, conversationId: action.id, agentState: null };
  }
}

/** What a turn says while it waits on the model, given what its request reads. */
function usageProgress(msg: ContextUsageMessage): string {
  const staged = msg.selection?.strategy === "staged" ? msg.selection : null;
  // A page read in parts is not read yet: said in the past tense only once it is.
  if (staged) return `Reading ${staged.page_chars.toLocaleString()} characters in ${staged.passages_total.toLocaleString()} parts…`;
  const cut = msg.cut.length ? `, ${msg.cut.length} part(s) trimmed to fit` : "";
  return `Read ${msg.used.chars.toLocaleString()} characters (~${msg.used.tokens.toLocaleString()} tokens)${cut}. Waiting for the answer…`;
}

/** `state` with turn `id` replaced by `f(turn)` (unchanged if the turn is unknown). */
function withTurn(state: SidebarState, id: string, f: (t: TurnState) => TurnState): SidebarState {
  const t = state.turns[id];
  if (!t) return state;
  return { ...state, turns: { ...state.turns, [id]: f(t) } };
}

/** The turn is over for the UI (a `done` may still follow an `error`). */
function endTurn(state: SidebarState, id: string): SidebarState {
  const ended = withTurn(state, id, (t) => ({ ...stopCalls(t, ["proposed", "awaiting_approval", "approved", "running"]), ended: true, ends: t.ends + 1 }));
  return ended.activeTurn === id ? { ...ended, activeTurn: null } : ended;
}

function setCall(t: TurnState, callId: string, phase: CallPhase): TurnState {
  const call = t.calls[callId];
  return call ? { ...t, calls: { ...t.calls, [callId]: { ...call, phase } } } : t;
}

function stopCalls(t: TurnState, phases: CallPhase[]): TurnState {
  let next = t;
  for (const call of Object.values(t.calls)) if (phases.includes(call.phase)) next = setCall(next, call.callId, "stopped");
  return next;
}

function resultPhase(msg: ToolResultMessage): CallPhase {
  switch (msg.status) {
    case "ok":
      return "ok";
    case "error":
      return "error";
    case "denied":
      return "denied";
    case "timeout":
      return msg.error?.code === "APPROVAL_EXPIRED" ? "expired" : "error";
  }
}

/**
 * The latest step proposed calls, so its text was not the answer: it moves
 * into the step list, and the answer area clears.
 */
function moveToSteps(t: TurnState): TurnState {
  if (!t.latest) return t;
  return { ...t, notes: [...t.notes, t.latest], latest: null, preview: [], body: [] };
}

function showAssistant(state: SidebarState, t: TurnState, msg: AssistantMessage): [SidebarState, TurnState] {
  return [{ ...state, conversationId: msg.conversation_id }, { ...t, body: [{ kind: "answer", msg }] }];
}

/** A patch of a turn's plan: applied to that turn's plan, if it is the plan named and the patch applies. */
function onPlanPatch(state: SidebarState, msg: Extract<RoutedHostMessage, { type: "entity_patch" }>): SidebarState {
  const t = msg.reply_to ? state.turns[msg.reply_to] : undefined;
  if (!t?.plan || t.plan.plan.id !== msg.entity_id) return state;
  const patched = applyPatch(t.plan.plan, msg.patch);
  if (!patched) return state;
  const plan = { ...t.plan, plan: patched };
  return withTurn(state, t.id, (turn) => ({ ...turn, plan }));
}

function onHost(state: SidebarState, msg: RoutedHostMessage): SidebarState {
  if (msg.type === "entity_patch") {
    // The summarizer's comes after the turn's `done`, "Forget what you
    // assumed" answers its own request; a patch for another conversation,
    // or one that does not apply, changes nothing.
    if (msg.entity === "plan") return onPlanPatch(state, msg);
    if (msg.entity !== "agent_state" || msg.conversation_id !== state.conversationId) return state;
    const patched = applyPatch(state.agentState, msg.patch);
    return patched ? { ...state, agentState: patched } : state;
  }
  const id = msg.reply_to;
  const turn = id ? state.turns[id] : undefined;
  if (!id || !turn) return state;
  let s = state;
  let t: TurnState = { ...turn, heard: true };
  switch (msg.type) {
    case "session":
      s = { ...s, conversationId: msg.conversation_id, agentState: msg.agent_state };
      break;
    case "turn.started":
      // An offline answer ("Use offline") is this turn's alone: the header keeps naming the runtime new turns use.
      s = { ...s, conversationId: msg.conversation_id, runtime: t.ask.offline ? s.runtime : { info: msg.runtime, answered: true } };
      t = { ...t, progress: `Working… (${msg.runtime.label})`, runtime: { info: msg.runtime } };
      break;
    case "context_usage":
      // After an estimate, the start's own usage: the user chose to read the start only.
      t = { ...t, progress: usageProgress(msg), usage: [...t.usage, msg], estimate: null };
      break;
    case "estimate":
      t = { ...t, progress: "Waiting for your answer…", estimate: msg.call_id };
      break;
    case "plan":
      // Only the turn's first plan counts, as on the host.
      if (!t.plan) t = { ...t, progress: "Waiting for your answer on the plan…", plan: { callId: msg.call_id, plan: msg.plan } };
      break;
    case "operation": {
      // A part is read: the user chose to read it all; the line says the reading is under way.
      const usage = t.usage.at(-1);
      if (t.estimate !== null && usage && !t.ended) t = { ...t, progress: usageProgress(usage), estimate: null };
      break;
    }
    case "text_delta": {
      if (msg.step !== t.previewStep && t.latest && t.latest.step < msg.step) t = moveToSteps(t);
      const prev = t.writing;
      const same = prev && prev.step === msg.step && prev.index === msg.index;
      const writing = { step: msg.step, index: msg.index, text: (same ? prev.text : "") + msg.text };
      // The block's words stay at the end of the area, in one paragraph.
      const item: BodyItem = { kind: "text", index: msg.index, text: writing.text };
      const body = t.body.at(-1)?.kind === "text" ? [...t.body.slice(0, -1), item] : [...t.body, item];
      t = { ...t, writing, body, progress: "Writing the answer…" };
      break;
    }
    case "render_delta": {
      if (msg.step !== t.previewStep) {
        // A new step's answer starts: an earlier step's text is no longer the answer.
        t = { ...t, preview: [], previewStep: msg.step };
        if (t.latest && t.latest.step < msg.step) t = moveToSteps(t);
      }
      const preview = [...t.preview];
      msg.blocks.forEach((block, i) => {
        preview[msg.start_index + i] = block;
      });
      const blocks = preview.filter((b): b is RenderBlock => b !== undefined);
      t = { ...t, preview, body: blocks.length ? [{ kind: "preview", blocks }] : [], progress: "Writing the answer…" };
      break;
    }
    case "render_reset":
      // The block in progress is forgotten; the step's preview is withdrawn unless its answer is shown.
      t = { ...t, writing: null, body: t.body.filter((b) => b.kind !== "text") };
      if (msg.step === t.previewStep) {
        t = { ...t, preview: [] };
        if (!t.latest || t.latest.step !== msg.step) t = { ...t, body: [] };
      }
      break;
    case "assistant":
      t = { ...t, preview: [], previewStep: msg.step };
      if (t.latest && t.latest.step < msg.step) t = moveToSteps(t);
      t = { ...t, latest: msg, last: msg };
      [s, t] = showAssistant(s, t, msg);
      break;
    case "tool_call": {
      if (t.latest && t.latest.step === msg.step) t = moveToSteps(t);
      if (t.calls[msg.call_id]) break;
      const phase: CallPhase = msg.decision === "deny" ? "denied" : msg.decision === "ask" ? "awaiting_approval" : "proposed";
      t = { ...t, calls: { ...t.calls, [msg.call_id]: { callId: msg.call_id, step: msg.step, name: msg.name, phase } } };
      break;
    }
    case "agent_state":
      if (msg.state === "executing" && msg.call_id && t.calls[msg.call_id]?.phase !== "denied") t = setCall(t, msg.call_id, "running");
      if (!t.ended) {
        t = {
          ...t,
          progress:
            msg.state === "thinking"
              ? `Thinking… (step ${msg.step})`
              : msg.state === "waiting_for_approval"
                ? "Waiting for your approval…"
                : msg.state === "executing"
                  ? `Working… (step ${msg.step})`
                  : "Finishing…",
        };
      }
      break;
    case "tool_result":
      t = setCall(t, msg.call_id, resultPhase(msg));
      break;
    case "error":
      t = { ...t, failed: true, body: [...t.body, { kind: "error", code: msg.code, message: msg.message }] };
      // An error ends the turn for the UI; a `done` may still follow and is accepted quietly.
      return endTurn({ ...s, turns: { ...s.turns, [id]: t } }, id);
    case "done": {
      // The last `assistant` is the answer, even when the loop stopped after it proposed calls.
      const last = t.last;
      if (!t.latest && t.body.length === 0 && last) {
        t = { ...t, notes: t.notes.filter((n) => n.step !== last.step) };
        [s, t] = showAssistant(s, t, last);
      }
      if (msg.status === "ok" && !msg.stored) t = { ...t, body: [...t.body, { kind: "notice", text: "The answer could not be saved to your history." }] };
      const runtime = msg.endpoint === undefined ? { info: msg.runtime } : { info: msg.runtime, endpoint: msg.endpoint };
      t = { ...t, done: { msg, answer: last }, runtime, last: null };
      if (!t.ask.offline) s = { ...s, runtime: { ...runtime, answered: true } };
      return endTurn({ ...s, turns: { ...s.turns, [id]: t } }, id);
    }
    default:
      break;
  }
  return { ...s, turns: { ...s.turns, [id]: t } };
}
