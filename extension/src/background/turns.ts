/**
 * The background's turn table: every request in flight to the host, by id,
 * with what it needs until its replies end. A turn is created when it is
 * sent, looked up when the host answers it, and dropped here: its sidebar
 * port, its tab and the other tabs it read, its tool calls (the call state
 * machine, `calls.ts`), the exports its calls wait for. Pure (no browser
 * API; the port type is a parameter), so the routing is unit-tested
 * (test/background-turns.test.ts).
 */
import { CallBook } from "./calls.js";

export interface Turn<Port> {
  readonly id: string;
  /** The sidebar that asked: it watches the turn and answers its approval cards. */
  readonly port: Port;
  /** The tab it acts on (the observed tab, or the tab a call opened). */
  tab: number;
  /** The other tabs it included (their citations may highlight there). */
  readonly others: ReadonlySet<number>;
  /** Sent and not yet `done`: its events go to `port`. */
  running: boolean;
}

/** Where a host message with `reply_to` goes. */
export type Route<Port> =
  /** A running turn's event. */
  | { kind: "turn"; turn: Turn<Port> }
  /** The answer to a sidebar's other request, or a finished turn's late `entity_patch`. */
  | { kind: "request"; port: Port }
  /** The host's answer to a `tool_result` the background sent: nobody waits on it. */
  | { kind: "result" }
  | { kind: "nobody" };

/** A share call waiting for its sidebar to write the export (a download or the clipboard). */
export interface PendingShare<Port> {
  readonly owner: Port;
  done(ok: boolean, message: string): void;
}

/** Finished turns remembered for their late `entity_patch` (the summarizer's follows `done`). */
const MAX_FINISHED = 16;

export class TurnTable<Port> {
  /** The tool calls of every turn (approval answers are routed there by their own ids). */
  readonly calls = new CallBook<Port>();
  /**
   * Turns by id. A finished turn keeps its record (not `running`): its
   * citations may still be highlighted on its tabs, and its id is not reused.
   */
  private turns = new Map<string, Turn<Port>>();
  /** Other requests (history, settings, collections) → the sidebar that asked. */
  private requests = new Map<string, Port>();
  /** Ids of `tool_result`s sent: the host answers one only when nobody waited on it. */
  private results = new Set<string>();
  /** Recently finished turns → their sidebar, oldest first. */
  private finished = new Map<string, Port>();
  /** Exports being written for share calls, by call id. */
  private shares = new Map<string, PendingShare<Port>>();

  /** Whether `id` names a request in flight or any turn: a sidebar may not reuse it. */
  isKnown(id: string): boolean {
    return this.requests.has(id) || this.turns.has(id);
  }

  /** Whether replies to `id` are routed now. */
  isRouted(id: string): boolean {
    return this.requests.has(id) || this.runningTurn(id) !== undefined;
  }

  /** A request that is not a turn was sent for `port`. */
  request(id: string, port: Port): void {
    this.requests.set(id, port);
  }

  /** A turn is sent for `port`, acting on `tab` and reading `others` besides. */
  start(id: string, port: Port, tab: number, others: Iterable<number>): Turn<Port> {
    const turn: Turn<Port> = { id, port, tab, others: new Set(others), running: true };
    this.turns.set(id, turn);
    return turn;
  }

  /** The request or turn could not be sent: nothing will answer it. The turn keeps its tabs. */
  notSent(id: string): void {
    this.requests.delete(id);
    const turn = this.turns.get(id);
    if (turn) turn.running = false;
  }

  /**
   * The host will never see `id` (it is not installed): forgets it whole.
   * Returns who asked, and whether it was a turn.
   */
  undelivered(id: string): { port: Port | undefined; isTurn: boolean } {
    const port = this.portOf(id);
    const isTurn = this.runningTurn(id) !== undefined;
    this.requests.delete(id);
    this.turns.delete(id);
    return { port, isTurn };
  }

  runningTurn(id: string): Turn<Port> | undefined {
    const turn = this.turns.get(id);
    return turn?.running ? turn : undefined;
  }

  /** The sidebar replies to `id` go to now, if any. */
  portOf(id: string): Port | undefined {
    return this.runningTurn(id)?.port ?? this.requests.get(id);
  }

  /** Where a host message answering `replyTo` goes (approval answers aside: `calls` routes them). */
  route(replyTo: string, type: string): Route<Port> {
    if (this.results.delete(replyTo)) return { kind: "result" };
    const turn = this.runningTurn(replyTo);
    if (turn) return { kind: "turn", turn };
    const port = this.requests.get(replyTo);
    if (port !== undefined) return { kind: "request", port };
    if (type !== "entity_patch") return { kind: "nobody" };
    const late = this.finished.get(replyTo);
    this.finished.delete(replyTo);
    return late === undefined ? { kind: "nobody" } : { kind: "request", port: late };
  }

  /** A request's reply arrived: it is answered unless the host said more is coming. */
  replied(id: string, type: string): void {
    // `agent_state.forget` sends its `entity_patch` before its result.
    if (type !== "turn.started" && type !== "context_usage" && type !== "entity_patch") this.requests.delete(id);
  }

  /** The turn is over (`done`): its calls are forgotten; its sidebar may still get a late patch. */
  done(id: string): void {
    const turn = this.turns.get(id);
    if (!turn) return;
    turn.running = false;
    this.calls.endTurn(id);
    this.finished.set(id, turn.port);
    for (const oldest of this.finished.keys()) {
      if (this.finished.size <= MAX_FINISHED) break;
      this.finished.delete(oldest);
    }
  }

  /** The tab the turn acts on, if it is known. */
  tabOf(id: string): number | undefined {
    return this.turns.get(id)?.tab;
  }

  /** A call of the turn moved it to another tab (opened a tab, searched in a new one). */
  moveTo(id: string, tab: number): void {
    const turn = this.turns.get(id);
    if (turn) turn.tab = tab;
  }

  /**
   * Where a citation of the turn is highlighted: `other`, a tab the turn
   * included; else the turn's own tab (undefined when the turn is unknown).
   */
  highlightTarget(id: string, tabId: number | undefined): { tab: number | undefined; other: boolean } {
    const turn = this.turns.get(id);
    if (tabId !== undefined && turn?.others.has(tabId)) return { tab: tabId, other: true };
    return { tab: turn?.tab, other: false };
  }

  /** A `tool_result` was sent under `id`. */
  resultSent(id: string): void {
    this.results.add(id);
  }

  /** A share call waits for its sidebar to write the export. */
  awaitShare(callId: string, share: PendingShare<Port>): void {
    this.shares.set(callId, share);
  }

  /** The share `callId` is over (written, failed or timed out). */
  shareEnded(callId: string): void {
    this.shares.delete(callId);
  }

  /** The share `callId` waits on `port` (only the sidebar it was sent to can say how it went). */
  shareFor(callId: string, port: Port): PendingShare<Port> | undefined {
    const share = this.shares.get(callId);
    return share?.owner === port ? share : undefined;
  }

  /**
   * The host went away (it crashed or was restarted): nothing sent to it
   * will be answered. Every running turn ends here (its calls with it) and
   * every request is forgotten; returns them, so their sidebars can be told.
   */
  hostLost(): { turns: { id: string; port: Port }[]; requests: { id: string; port: Port }[] } {
    const turns: { id: string; port: Port }[] = [];
    for (const turn of this.turns.values()) {
      if (!turn.running) continue;
      turn.running = false;
      this.calls.endTurn(turn.id);
      turns.push({ id: turn.id, port: turn.port });
    }
    const requests = [...this.requests].map(([id, port]) => ({ id, port }));
    this.requests.clear();
    this.results.clear();
    return { turns, requests };
  }

  /**
   * The sidebar closed: nothing is routed to it any more, its calls can no
   * longer be approved. Returns its running turns (nobody is left to watch
   * or approve them: the caller stops them) and the exports it was writing.
   */
  dropSidebar(port: Port): { turns: string[]; shares: PendingShare<Port>[] } {
    for (const [id, p] of this.requests) if (p === port) this.requests.delete(id);
    for (const [id, p] of this.finished) if (p === port) this.finished.delete(id);
    const turns: string[] = [];
    for (const turn of this.turns.values()) {
      if (turn.port !== port || !turn.running) continue;
      turn.running = false;
      turns.push(turn.id);
    }
    this.calls.dropOwner(port);
    const shares = [...this.shares.values()].filter((s) => s.owner === port);
    return { turns, shares };
  }
}
