import { describe, expect, it } from "vitest";
import { CallBook } from "../src/background/calls";
import { checkExtensionMessage } from "../src/shared/validate";
import type { Decision, ToolCallMessage } from "../src/generated/wire";

const DIGEST = "d".repeat(64);

function toolCall(callId: string, decision: Decision, over: Partial<ToolCallMessage> = {}): ToolCallMessage {
  return {
    type: "tool_call",
    id: `ev-${callId}`,
    reply_to: "turn-1",
    conversation_id: "c",
    turn: 1,
    step: 1,
    call_id: callId,
    index: 0,
    name: "browser.click",
    arguments: { handleId: "laika-3" },
    decision,
    reason: decision === "allow" ? "ORDINARY_CLICK" : decision === "ask" ? "COMMIT_ACTION" : "SENSITIVE_FIELD",
    detail: "why",
    executor: "page",
    digest: DIGEST,
    target: { handle_id: "laika-3", role: "button", text: "Go" },
    expires_in_ms: decision === "ask" ? 120_000 : null,
    evidence: null,
    user_asked: false,
    ...over,
  };
}

const me = { name: "sidebar A" };
const other = { name: "sidebar B" };

describe("the call state machine", () => {
  it("runs an allow call once, when the host says executing", () => {
    const book = new CallBook<object>();
    book.propose(toolCall("a", "allow"), "turn-1", me);
    const run = book.executing("turn-1", "a");
    expect(run?.callId).toBe("a");
    expect(run?.target).toEqual({ handle_id: "laika-3", role: "button", text: "Go" });
    // Never twice: a repeated executing, before or after it finished.
    expect(book.executing("turn-1", "a")).toBeNull();
    book.finished("a");
    expect(book.executing("turn-1", "a")).toBeNull();
    expect(book.get("a")?.phase).toBe("finished");
  });

  it("runs an ask call only after the user approved and the host accepted", () => {
    const book = new CallBook<object>();
    book.propose(toolCall("k", "ask"), "turn-1", me);
    expect(book.executing("turn-1", "k")).toBeNull(); // no approval yet
    expect(book.answer("k", other, true, "ap-x")).toBeNull(); // not this sidebar's call
    const approval = book.answer("k", me, true, "ap-1");
    expect(approval).toEqual({ type: "approval", id: "ap-1", call_id: "k", digest: DIGEST, approved: true });
    expect(checkExtensionMessage(approval).ok).toBe(true);
    expect(book.answer("k", me, true, "ap-2")).toBeNull(); // answered once
    expect(book.executing("turn-1", "k")).toBeNull(); // the host has not accepted yet
    expect(book.isApproval("ap-1")).toBe(true);
    expect(book.approvalAnswered("ap-1", true, true)?.callId).toBe("k");
    expect(book.executing("turn-1", "k")?.callId).toBe("k");
    expect(book.executing("turn-1", "k")).toBeNull();
  });

  it("never runs an ask call the host refused or the user denied", () => {
    const book = new CallBook<object>();
    book.propose(toolCall("e", "ask"), "turn-1", me);
    book.answer("e", me, true, "ap-e");
    book.approvalAnswered("ap-e", false, false); // e.g. APPROVAL_EXPIRED
    expect(book.executing("turn-1", "e")).toBeNull();

    book.propose(toolCall("n", "ask"), "turn-1", me);
    const no = book.answer("n", me, false, "ap-n");
    expect(no?.approved).toBe(false);
    book.approvalAnswered("ap-n", true, false);
    expect(book.executing("turn-1", "n")).toBeNull();

    // The host said the call timed out before anyone answered.
    book.propose(toolCall("t", "ask"), "turn-1", me);
    book.concluded("t");
    expect(book.answer("t", me, true, "ap-t")).toBeNull();
    expect(book.executing("turn-1", "t")).toBeNull();
  });

  it("never runs a deny, a host tool or an unavailable one", () => {
    const book = new CallBook<object>();
    book.propose(toolCall("d", "deny"), "turn-1", me);
    expect(book.answer("d", me, true, "ap-d")).toBeNull();
    expect(book.executing("turn-1", "d")).toBeNull();
    book.propose(toolCall("h", "allow", { name: "app.calculate", executor: "host", target: null }), "turn-1", me);
    expect(book.executing("turn-1", "h")).toBeNull();
    book.propose(toolCall("u", "allow", { executor: "unavailable" }), "turn-1", me);
    expect(book.executing("turn-1", "u")).toBeNull();
    book.propose(toolCall("v", "ask", { executor: "unavailable" }), "turn-1", me);
    expect(book.answer("v", me, true, "ap-v")).toBeNull();
  });

  it("sends the approval of a host tool's ask call, and never runs it here", () => {
    const book = new CallBook<object>();
    book.propose(toolCall("m", "ask", { name: "mcp.notes.append", executor: "host", target: null }), "turn-1", me);
    expect(book.answer("m", other, true, "ap-x")).toBeNull();
    expect(book.answer("m", me, true, "ap-m")).toEqual({ type: "approval", id: "ap-m", call_id: "m", digest: DIGEST, approved: true });
    expect(book.approvalAnswered("ap-m", true, true)?.phase).toBe("approved");
    expect(book.executing("turn-1", "m")).toBeNull();
  });

  it("keeps the first verdict for a call id", () => {
    const book = new CallBook<object>();
    book.propose(toolCall("x", "ask"), "turn-1", me);
    expect(book.propose(toolCall("x", "allow"), "turn-1", me)).toBeNull();
    expect(book.executing("turn-1", "x")).toBeNull();
    book.propose(toolCall("y", "deny"), "turn-1", me);
    book.propose(toolCall("y", "allow"), "turn-1", me);
    expect(book.executing("turn-1", "y")).toBeNull();
  });

  it("ignores executing for an unknown call or another turn", () => {
    const book = new CallBook<object>();
    expect(book.executing("turn-1", "nobody")).toBeNull();
    book.propose(toolCall("a", "allow"), "turn-1", me);
    expect(book.executing("turn-2", "a")).toBeNull();
    expect(book.executing("turn-1", "a")?.callId).toBe("a");
  });

  it("drops what is pending when the turn is cancelled, and starts nothing after", () => {
    const book = new CallBook<object>();
    book.propose(toolCall("a", "allow"), "turn-1", me);
    book.propose(toolCall("k", "ask"), "turn-1", me);
    book.propose(toolCall("o", "allow"), "turn-2", me);
    const dropped = book.cancel("turn-1").map((c) => c.callId).sort();
    expect(dropped).toEqual(["a", "k"]);
    expect(book.executing("turn-1", "a")).toBeNull();
    expect(book.answer("k", me, true, "ap-k")).toBeNull();
    // A call proposed after the cancel is refused too.
    book.propose(toolCall("late", "allow"), "turn-1", me);
    expect(book.executing("turn-1", "late")).toBeNull();
    // Other turns go on.
    expect(book.executing("turn-2", "o")?.callId).toBe("o");
  });

  it("refuses an approved call whose approval is answered after a cancel", () => {
    const book = new CallBook<object>();
    book.propose(toolCall("k", "ask"), "turn-1", me);
    book.answer("k", me, true, "ap-k");
    book.cancel("turn-1");
    book.approvalAnswered("ap-k", true, true);
    expect(book.executing("turn-1", "k")).toBeNull();
  });

  it("forgets a turn's calls at done, and a closed sidebar's calls never start", () => {
    const book = new CallBook<object>();
    book.propose(toolCall("a", "allow"), "turn-1", me);
    book.endTurn("turn-1");
    expect(book.get("a")).toBeUndefined();
    expect(book.executing("turn-1", "a")).toBeNull();
    book.propose(toolCall("b", "allow"), "turn-3", other);
    book.dropOwner(other);
    expect(book.executing("turn-3", "b")).toBeNull();
  });
});
