/**
 * The sidebar's turn table: every turn and request in flight, by id. It
 * holds the sidebar's state and moves it only through `reduce` (`state.ts`),
 * draws each turn that changed (`turn-view.ts`) and the runtime in the
 * header, keeps each turn's watchdog (the host may never answer), and the
 * replies awaited by the requests that are not turns (history, settings,
 * collections).
 */
import type { RoutedHostMessage } from "../shared/protocol.js";
import type { AgentStateView } from "./agent-state.js";
import { setBadge } from "./badge.js";
import { errorAdvice } from "./errors.js";
import { HOST_STOPPED } from "../shared/messages.js";
import { HOST_SILENCE_MS, STOP_GRACE_MS, initialState, reduce, type Ask, type SidebarAction, type SidebarState } from "./state.js";
import { TurnView, type TurnActions } from "./turn-view.js";

type Reply = (msg: RoutedHostMessage | null, error?: string) => void;

export interface TurnTableDeps {
  /** Where turns are shown, oldest first. */
  messages: HTMLElement;
  /** The header's runtime label. */
  runtimeLabel: HTMLElement;
  /** The conversation's agent state, shown under its latest turn. */
  agentState: AgentStateView;
  actions: TurnActions;
  /** The state moved; `ended`: a turn ended with it. */
  changed(state: SidebarState, ended: boolean): void;
}

export class SidebarTurns {
  private state: SidebarState = initialState();
  private views = new Map<string, TurnView>();
  private watchdogs = new Map<string, ReturnType<typeof setTimeout>>();
  private replies = new Map<string, Reply>();

  constructor(private readonly deps: TurnTableDeps) {}

  get conversationId(): string | null {
    return this.state.conversationId;
  }

  /** The turn running now, if any. */
  get activeTurn(): string | null {
    return this.state.activeTurn;
  }

  dispatch(action: SidebarAction): void {
    const prev = this.state;
    const next = reduce(prev, action);
    if (next === prev) return;
    this.state = next;
    let ended = false;
    for (const [id, turn] of Object.entries(next.turns)) {
      const before = prev.turns[id];
      if (!before || turn === before) continue;
      this.views.get(id)?.render(turn, action);
      if (turn.ends > before.ends) {
        ended = true;
        clearTimeout(this.watchdogs.get(id));
        this.watchdogs.delete(id);
      }
    }
    if (next.agentState !== prev.agentState) this.showAgentState(next, action);
    const runtime = next.runtime;
    if (runtime && runtime !== prev.runtime) {
      setBadge(this.deps.runtimeLabel, runtime.info, runtime.endpoint);
      if (runtime.answered) this.deps.runtimeLabel.dataset["answered"] = "true";
    }
    this.deps.changed(next, ended);
  }

  /** The agent state as the host has it, under the turn that changed it (it moves down with the conversation). */
  private showAgentState(state: SidebarState, action: SidebarAction): void {
    if (!state.agentState) {
      this.deps.agentState.clear();
      return;
    }
    this.deps.agentState.show(state.agentState);
    const id = action.kind === "host" ? action.msg.reply_to : null;
    const view = id ? this.views.get(id) : undefined;
    (view?.root ?? this.deps.messages).append(this.deps.agentState.root);
  }

  /** Starts a turn for `ask` (the caller checked none is running). Returns its id. */
  start(ask: Ask): string {
    const id = `turn-${crypto.randomUUID()}`;
    // Only the newest answer's replies (choices, suggested questions) can be asked.
    for (const view of this.views.values()) view.retire();
    this.dispatch({ kind: "asked", id, ask });
    const turn = this.state.turns[id];
    if (!turn) return id;
    const view = new TurnView(turn, this.deps.actions);
    this.views.set(id, view);
    this.deps.messages.append(view.root);
    // The host may never answer (not installed, hung): the turn must not wait forever.
    this.watchdogs.set(
      id,
      setTimeout(() => {
        const t = this.state.turns[id];
        if (!t || t.heard || t.ended) return;
        this.dispatch({ kind: "silent", id });
        this.deps.actions.send({ kind: "cancel", turn_id: id });
      }, HOST_SILENCE_MS),
    );
    return id;
  }

  /** The user pressed Stop: the running turn is cancelled; if the host never says it ended, it ends anyway. */
  stop(): void {
    const id = this.state.activeTurn;
    if (!id) return;
    this.deps.actions.send({ kind: "cancel", turn_id: id });
    this.dispatch({ kind: "stop", id });
    if (this.state.activeTurn === id) setTimeout(() => this.dispatch({ kind: "stop.unanswered", id }), STOP_GRACE_MS);
  }

  /** The background that ran the turn went away (it restarted): nothing will end the running turn but this. */
  backgroundLost(): void {
    const id = this.state.activeTurn;
    if (id) this.dispatch({ kind: "turn.failed", turn_id: id, ...HOST_STOPPED });
  }

  /** A host event: a request's reply, or a turn's event (the agent state's patches included, whichever request they answer). */
  onHostEvent(msg: RoutedHostMessage): void {
    const id = msg.reply_to;
    const reply = id ? this.replies.get(id) : undefined;
    if (id && reply && msg.type !== "entity_patch") {
      this.replies.delete(id);
      reply(msg);
      return;
    }
    this.dispatch({ kind: "host", msg });
  }

  /** The reply to request `id` (sent by the caller next); an `error` reply rejects with advice. */
  expectReply(id: string): Promise<RoutedHostMessage> {
    return new Promise((resolve, reject) => {
      this.replies.set(id, (msg, error) => {
        if (!msg) reject(new Error(error ?? "request failed"));
        else if (msg.type === "error") reject(new Error(errorAdvice(msg.code, msg.message)));
        else resolve(msg);
      });
    });
  }

  /** Request `id` could not reach the host. */
  requestFailed(id: string, message: string): void {
    const reply = this.replies.get(id);
    this.replies.delete(id);
    reply?.(null, message);
  }
}
