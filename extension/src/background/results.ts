/**
 * The `tool_result` the extension sends the host when it has run a call
 * (docs/wire-protocol.md, "tool_result"): the status, `result.message` (one
 * sentence of what happened: it becomes the step's summary) with the tool's
 * data beside it, the page as it is afterwards, and an error code and
 * sentence when it did not succeed.
 */
import type { Observation, ToolResultRequestMessage, ToolStatus } from "../generated/wire.js";

/** Longest `result.message` / `error.message` sent (the host keeps 500 bytes). */
export const MAX_MESSAGE_CHARS = 400;
/** The host takes error codes of at most 64 bytes. */
const MAX_CODE_CHARS = 64;

export type CallOutcome =
  | { status: "ok"; message: string; data?: Record<string, unknown>; observation?: Observation }
  | { status: Exclude<ToolStatus, "ok">; code: string; message: string; observation?: Observation };

function sentence(s: string): string {
  const line = s.replace(/\s+/g, " ").trim() || "done";
  return line.length > MAX_MESSAGE_CHARS ? `${line.slice(0, MAX_MESSAGE_CHARS - 1)}…` : line;
}

function code(s: string): string {
  const c = s.replace(/[^A-Za-z0-9_.-]/g, "_").slice(0, MAX_CODE_CHARS);
  return c || "TOOL_FAILED";
}

/** The `tool_result` request for a call's outcome. */
export function toolResultMessage(id: string, callId: string, outcome: CallOutcome): ToolResultRequestMessage {
  const msg: ToolResultRequestMessage = { type: "tool_result", id, call_id: callId, status: outcome.status };
  const message = sentence(outcome.message);
  if (outcome.status === "ok") {
    // The message key wins over a data field of the same name.
    msg.result = { ...(outcome.data ?? {}), message };
  } else {
    msg.result = { message };
    msg.error = { code: code(outcome.code), message };
  }
  if (outcome.observation) msg.observation = outcome.observation;
  return msg;
}

/** An outcome for a thrown error. */
export function failure(e: unknown, fallbackCode = "TOOL_FAILED"): CallOutcome {
  const message = e instanceof Error ? e.message : String(e);
  const c = e instanceof ToolFailure ? e.code : fallbackCode;
  return { status: "error", code: c, message };
}

/** An error with a tool-result code, thrown by executors. */
export class ToolFailure extends Error {
  constructor(
    readonly code: string,
    message: string,
  ) {
    super(message);
  }
}
