/**
 * Host messages and a page observation that pass the wire-protocol schema,
 * taken from the replay golden (tests/replay): a hub under test validates
 * everything it sends and receives, as it does in the browser.
 */
import fs from "node:fs";
import path from "node:path";
import type { HostMessage, Observation, ToolCallMessage } from "../src/generated/wire";
import type { RoutedHostMessage } from "../src/shared/protocol";

const REPLAY = path.join(__dirname, "..", "..", "tests", "replay");

function lines(name: string): Record<string, unknown>[] {
  return fs
    .readFileSync(path.join(REPLAY, name), "utf8")
    .split("\n")
    .filter((l) => l.trim())
    .map((l) => JSON.parse(l) as Record<string, unknown>);
}

/** Events the replay (one offline runtime, no tools) does not show. */
const MORE: Record<string, unknown>[] = [
  { type: "text_delta", conversation_id: "c", turn: 1, step: 1, index: 0, text: "" },
  { type: "render_reset", conversation_id: "c", turn: 1, step: 1, reason: "retry" },
  { type: "tool_result", conversation_id: "c", turn: 1, step: 1, call_id: "call-1", name: "browser.get_selection_links", status: "ok", summary: "Done", result: null, error: null },
];

const hostMessages = [...lines("demo.expected.ndjson"), ...MORE] as HostMessage[];

/** The observation of the replay's first turn. */
export function observation(): Observation {
  const turn = lines("demo.ndjson").find((m) => m["type"] === "turn");
  return structuredClone(turn?.["observation"]) as Observation;
}

let counter = 0;
/** A fresh host id (a lowercase UUID v4, as the schema wants). */
export function hostId(): string {
  counter += 1;
  return `00000000-0000-4000-8000-${counter.toString(16).padStart(12, "0")}`;
}

type Typed<T extends RoutedHostMessage["type"]> = Extract<RoutedHostMessage, { type: T }>;

/** The replay's first host message of `type`, answering `replyTo`, with `over` on top. */
export function hostEvent<T extends RoutedHostMessage["type"]>(type: T, replyTo: string, over: Partial<Typed<T>> = {}): Typed<T> {
  const found = hostMessages.find((m) => m.type === type);
  if (!found) throw new Error(`the replay has no ${type}`);
  return { ...structuredClone(found), id: hostId(), reply_to: replyTo, ...over } as Typed<T>;
}

export function toolCall(replyTo: string, over: Partial<ToolCallMessage> = {}): ToolCallMessage {
  return {
    type: "tool_call", id: hostId(), reply_to: replyTo, conversation_id: "c", turn: 1, step: 1, call_id: "call-1", index: 0,
    name: "browser.get_selection_links", arguments: {}, decision: "allow", reason: "READ_ONLY", detail: "reads the page",
    executor: "page", digest: "d".repeat(64), target: null, expires_in_ms: null, evidence: null, user_asked: false, ...over,
  };
}

/** `agent_state` saying the host runs (`executing`) or waits on `callId`. */
export function agentState(replyTo: string, state: Typed<"agent_state">["state"], callId: string | null, step = 1): Typed<"agent_state"> {
  return { type: "agent_state", id: hostId(), reply_to: replyTo, conversation_id: "c", turn: 1, step, state, call_id: callId };
}

export function hostError(replyTo: string | null, code: Typed<"error">["code"], message: string): Typed<"error"> {
  return { type: "error", id: hostId(), reply_to: replyTo, code, message, retryable: false };
}

export function approvalResult(replyTo: string, callId: string, approved: boolean): Typed<"approval.result"> {
  return { type: "approval.result", id: hostId(), reply_to: replyTo, call_id: callId, approved };
}
