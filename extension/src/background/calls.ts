/**
 * The background's tool-call state machine: which browser call may run, and
 * when. Pure (no browser API), so its invariants are unit-tested
 * (test/calls.test.ts). The host drives each call (docs/wire-protocol.md,
 * "Agent loop"): `tool_call` → for `ask`, the user's `approval` and the host's
 * `approval.result` → `agent_state executing` → the extension runs it and
 * reports a `tool_result`.
 *
 * A call runs (`executing` returns it) only if all hold:
 * - its decision, as recorded when its `tool_call` first arrived, was `allow`,
 *   or `ask` and the user of the sidebar that asked approved it AND the host
 *   accepted that approval (`approval.result` with `approved: true`);
 * - the host said `executing` for it, in the turn that proposed it;
 * - it has not started before (a call runs at most once);
 * - its turn was not cancelled;
 * - the extension is its executor (`page` or `tab`): `host` tools run in the
 *   host and `unavailable` ones nowhere.
 * A `deny` never runs: it is recorded as refused from the start. An `ask`
 * call of a `host` tool (an MCP tool, an integration) is approved here all
 * the same (the host runs it once it accepted the approval), but never runs
 * here.
 */
import type { ApprovalMessage, Decision, EstimateMessage, PlanEdit, PlanMessage, ToolCallMessage, ToolTarget } from "../generated/wire.js";
import { isObject } from "../shared/json.js";

export type CallPhase =
  /** `allow`: waits for the host's `executing`. */
  | "proposed"
  /** `ask`: the approval card is shown; nothing runs. */
  | "awaiting_user"
  /** `ask`: the user approved; the `approval` is sent, its answer not yet in. */
  | "approving"
  /** `ask`: the host accepted the approval; waits for `executing`. */
  | "approved"
  | "running"
  | "finished"
  /** Never runs: gate or user denial, refused or expired approval, cancel, or not ours to run. */
  | "refused";

export interface Call<Owner> {
  callId: string;
  turnId: string;
  /** Who may answer its approval card (the sidebar port that asked the turn). */
  owner: Owner;
  decision: Decision;
  name: string;
  args: Record<string, unknown>;
  executor: ToolCallMessage["executor"];
  digest: string;
  target: ToolTarget | null;
  /** What the host prepared for it (`agent_state.input` with `executing`): a source's URL, an export. */
  input?: unknown;
  phase: CallPhase;
  /** The id of the `approval` sent for it, if any. */
  approvalId: string | null;
}

const RUNNABLE_EXECUTORS: ReadonlySet<string> = new Set(["page", "tab"]);
/** Cancelled turn ids remembered (oldest forgotten first). */
const MAX_CANCELLED = 256;

/** What an answer may carry besides yes or no. */
export interface ApprovalExtra {
  /** An estimate's "Read the start only". */
  startOnly?: boolean;
  /** A plan's edit: steps unchecked, steps reworded. */
  plan?: PlanEdit;
}

/** The protocol's bounds on a plan edit (docs/wire-protocol.md#plans). */
const MAX_PLAN_STEPS = 8;
const MAX_PLAN_ID_BYTES = 64;
const MAX_PLAN_TEXT_CHARS = 200;

function planId(v: unknown): v is string {
  return typeof v === "string" && v.length > 0 && new TextEncoder().encode(v).length <= MAX_PLAN_ID_BYTES;
}

/**
 * A plan edit from the sidebar, rebuilt from the fields it may have (step
 * ids to skip, new titles), or null when anything in it is out of shape: a
 * bad edit is refused, never half sent.
 */
export function readPlanEdit(v: unknown): PlanEdit | null {
  if (!isObject(v)) return null;
  const skip = v["skip"] ?? [];
  const titles = v["titles"] ?? [];
  if (!Array.isArray(skip) || !Array.isArray(titles) || skip.length > MAX_PLAN_STEPS || titles.length > MAX_PLAN_STEPS) return null;
  if (!skip.every(planId)) return null;
  const read: PlanEdit["titles"] = [];
  for (const t of titles) {
    if (!isObject(t) || !planId(t["id"]) || typeof t["title"] !== "string") return null;
    const title = t["title"].trim();
    if (!title || [...title].length > MAX_PLAN_TEXT_CHARS) return null;
    read.push({ id: t["id"], title });
  }
  return { skip: [...skip], titles: read };
}

export class CallBook<Owner> {
  private calls = new Map<string, Call<Owner>>();
  /** `approval` id → call id, to route the host's answer. */
  private approvals = new Map<string, string>();
  private cancelledTurns = new Set<string>();

  get(callId: string): Call<Owner> | undefined {
    return this.calls.get(callId);
  }

  /**
   * Records a proposed call. The first `tool_call` for a `call_id` wins: a
   * repeat cannot turn an `ask` into an `allow`, nor revive a finished call.
   */
  propose(msg: ToolCallMessage, turnId: string, owner: Owner): Call<Owner> | null {
    if (this.calls.has(msg.call_id)) return null;
    const ours = RUNNABLE_EXECUTORS.has(msg.executor);
    const approvable = ours || msg.executor === "host";
    const phase: CallPhase =
      this.cancelledTurns.has(turnId) || msg.decision === "deny"
        ? "refused"
        : msg.decision === "ask"
          ? approvable
            ? "awaiting_user"
            : "refused"
          : ours
            ? "proposed"
            : "refused";
    const call: Call<Owner> = {
      callId: msg.call_id,
      turnId,
      owner,
      decision: msg.decision,
      name: msg.name,
      args: isObject(msg.arguments) ? msg.arguments : {},
      executor: msg.executor,
      digest: msg.digest,
      target: msg.target,
      phase,
      approvalId: null,
    };
    this.calls.set(msg.call_id, call);
    return call;
  }

  /**
   * Records a question the turn waits on (an `estimate`, a `plan`),
   * answered like an `ask` call's approval (by its owner, with its digest)
   * and never run; `name` says which.
   */
  proposeQuestion(msg: EstimateMessage | PlanMessage, turnId: string, owner: Owner): void {
    if (this.calls.has(msg.call_id)) return;
    this.calls.set(msg.call_id, {
      callId: msg.call_id,
      turnId,
      owner,
      decision: "ask",
      name: msg.type === "plan" ? "plan.approve" : "stage.confirm",
      args: {},
      executor: "host",
      digest: msg.digest,
      target: null,
      phase: this.cancelledTurns.has(turnId) ? "refused" : "awaiting_user",
      approvalId: null,
    });
  }

  /**
   * The user answered an approval card. Accepted only from the call's owner,
   * for an `ask` call still waiting for the user; returns the `approval` to
   * send (with the digest of the `tool_call` the user saw), else null.
   * `extra`: an estimate's "start only", a plan's edit (only with approved,
   * only for the question it belongs to).
   */
  answer(callId: string, owner: Owner, approved: boolean, approvalId: string, extra: ApprovalExtra = {}): ApprovalMessage | null {
    const call = this.calls.get(callId);
    if (!call || call.owner !== owner || call.decision !== "ask" || call.phase !== "awaiting_user") return null;
    if (this.cancelledTurns.has(call.turnId)) return null;
    call.phase = approved ? "approving" : "refused";
    call.approvalId = approvalId;
    this.approvals.set(approvalId, callId);
    const msg: ApprovalMessage = { type: "approval", id: approvalId, call_id: callId, digest: call.digest, approved };
    if (!approved) return msg;
    if (extra.startOnly && call.name === "stage.confirm") return { ...msg, start_only: true };
    if (extra.plan && call.name === "plan.approve") return { ...msg, plan: extra.plan };
    return msg;
  }

  /** Whether `id` is an `approval` this book sent (its answer is routed here). */
  isApproval(id: string): boolean {
    return this.approvals.has(id);
  }

  /**
   * The host answered an `approval`: `accepted` with `approval.result`
   * (whose `approved` must match what was sent), or refused with an `error`.
   * Returns the call it was about.
   */
  approvalAnswered(approvalId: string, accepted: boolean, approved: boolean): Call<Owner> | null {
    const callId = this.approvals.get(approvalId);
    this.approvals.delete(approvalId);
    const call = callId ? this.calls.get(callId) : undefined;
    if (!call) return null;
    if (call.phase === "approving") {
      call.phase = accepted && approved && !this.cancelledTurns.has(call.turnId) ? "approved" : "refused";
    }
    return call;
  }

  /**
   * The host said `executing` for `callId` in turn `turnId`: returns the call
   * if it may run now (and marks it running), else null.
   */
  executing(turnId: string, callId: string): Call<Owner> | null {
    const call = this.calls.get(callId);
    if (!call || call.turnId !== turnId || this.cancelledTurns.has(turnId)) return null;
    if (!RUNNABLE_EXECUTORS.has(call.executor)) return null;
    const mayRun = (call.decision === "allow" && call.phase === "proposed") || (call.decision === "ask" && call.phase === "approved");
    if (!mayRun) return null;
    call.phase = "running";
    return call;
  }

  /** The extension's run of the call ended (its `tool_result` is sent). */
  finished(callId: string): void {
    const call = this.calls.get(callId);
    if (call?.phase === "running") call.phase = "finished";
  }

  /**
   * The host reported how the call ended (its `tool_result` event). A call
   * that had not started never will (denied, expired, not run).
   */
  concluded(callId: string): void {
    const call = this.calls.get(callId);
    if (call && call.phase !== "running" && call.phase !== "finished") call.phase = "refused";
  }

  /** The user stopped the turn: nothing of it runs from now on. Returns the calls dropped. */
  cancel(turnId: string): Call<Owner>[] {
    this.cancelledTurns.add(turnId);
    if (this.cancelledTurns.size > MAX_CANCELLED) {
      const oldest = this.cancelledTurns.values().next().value;
      if (oldest !== undefined) this.cancelledTurns.delete(oldest);
    }
    const dropped: Call<Owner>[] = [];
    for (const call of this.calls.values()) {
      if (call.turnId !== turnId) continue;
      if (call.phase === "proposed" || call.phase === "awaiting_user" || call.phase === "approving" || call.phase === "approved") {
        call.phase = "refused";
        dropped.push(call);
      }
    }
    return dropped;
  }

  isCancelled(turnId: string): boolean {
    return this.cancelledTurns.has(turnId);
  }

  /** The turn is over (`done`): forget its calls. A cancelled turn stays marked. */
  endTurn(turnId: string): void {
    for (const [id, call] of this.calls) {
      if (call.turnId !== turnId) continue;
      this.calls.delete(id);
      if (call.approvalId) this.approvals.delete(call.approvalId);
    }
  }

  /** The sidebar closed: its calls can no longer be approved, and none of them starts. */
  dropOwner(owner: Owner): void {
    for (const call of this.calls.values()) {
      if (call.owner === owner && call.phase !== "running" && call.phase !== "finished") call.phase = "refused";
    }
  }
}
