import { describe, expect, it } from "vitest";
import { StepList, aboutTime, describeCall, estimateQuestion, stopReasonText } from "../src/sidebar/steps";
import type { EstimateMessage, ToolCallMessage, ToolResultMessage } from "../src/generated/wire";
import { htmlDoc } from "./helpers";

function call(over: Partial<ToolCallMessage>): ToolCallMessage {
  return {
    type: "tool_call", id: "e1", reply_to: "turn-1", conversation_id: "c", turn: 1, step: 1, call_id: "r:0", index: 0,
    name: "browser.navigate", arguments: { url: "http://127.0.0.1:9/collect?data=a%40b.example" }, decision: "ask",
    reason: "URL_NOT_FROM_CONTEXT", detail: "This address is not among the page's links; please confirm.", executor: "tab",
    digest: "0".repeat(64), target: null, expires_in_ms: 120_000, evidence: null, user_asked: false, ...over,
  };
}

function result(over: Partial<ToolResultMessage>): ToolResultMessage {
  return {
    type: "tool_result", id: "e2", reply_to: "turn-1", conversation_id: "c", turn: 1, step: 1, call_id: "r:0",
    name: "browser.navigate", status: "ok", summary: "Opened it", result: null, error: null, ...over,
  };
}

describe("the step list", () => {
  it("shows an approval card with the URL, and answers it once", () => {
    const doc = htmlDoc("<main></main>");
    const sent: [string, boolean][] = [];
    const now = 0;
    const steps = new StepList(doc, (id, ok) => sent.push([id, ok]), () => now);
    doc.body.append(steps.el);
    steps.toolCall(call({}));
    expect(steps.el.tagName).toBe("OL");
    expect(steps.el.getAttribute("aria-live")).toBe("polite");
    const card = steps.el.querySelector(".approval-card");
    expect(card?.textContent).toContain("http://127.0.0.1:9/collect?data=a%40b.example");
    expect(card?.textContent).toContain("Expires in 2:00");
    const [approve, deny] = Array.from(card?.querySelectorAll("button") ?? []);
    expect(approve?.textContent).toBe("Approve");
    deny?.click();
    approve?.click();
    expect(sent).toEqual([["r:0", false]]);
    steps.toolResult(result({ status: "denied", summary: "You denied this action.", error: { code: "USER_DENIED", message: "x" } }));
    expect(steps.state("r:0")).toBe("blocked");
    expect(card?.querySelector("button")).toBeNull();
  });

  it("shows on the card the evidence a click was judged on, and that the user asked for it", () => {
    const doc = htmlDoc("<main></main>");
    const steps = new StepList(doc, () => undefined, () => 0);
    steps.toolCall(call({
      name: "browser.click", arguments: { handleId: "laika-4" }, executor: "page", reason: "COMMIT_ACTION",
      detail: "“Continue” belongs to a form that takes payment or sign-in details; please confirm. You asked for this (“pay”); Laika still asks before it acts.",
      target: { handle_id: "laika-4", role: "button", text: "Continue" }, evidence: "committing_form", user_asked: true,
    }));
    const card = steps.el.querySelector(".approval-card");
    expect(card?.querySelector(".approval-evidence")?.textContent).toBe("Laika judged this on: a form that takes payment or sign-in details.");
    expect(card?.querySelector(".approval-user-asked")?.textContent).toContain("You asked for this");
    steps.toolCall(call({ call_id: "r:1", evidence: null, user_asked: false }));
    const plain = steps.el.querySelectorAll(".approval-card")[1];
    expect(plain?.querySelector(".approval-evidence")).toBeNull();
    expect(plain?.querySelector(".approval-user-asked")).toBeNull();
  });

  it("turns an expired card into Expired without buttons", () => {
    const doc = htmlDoc("<main></main>");
    const steps = new StepList(doc, () => undefined, () => 0);
    steps.toolCall(call({}));
    steps.toolResult(result({ status: "timeout", summary: "Nobody approved this action in time", error: { code: "APPROVAL_EXPIRED", message: "x" } }));
    expect(steps.state("r:0")).toBe("expired");
    expect(steps.el.querySelector(".approval-card")?.textContent).toContain("Expired");
    expect(steps.el.querySelector(".approval-card button")).toBeNull();
  });

  it("follows an allowed call from start to ✓, and shows a deny as blocked", () => {
    const doc = htmlDoc("<main></main>");
    const steps = new StepList(doc, () => undefined);
    steps.toolCall(call({ decision: "allow", name: "browser.click", arguments: { handleId: "laika-2" }, expires_in_ms: null, target: { handle_id: "laika-2", role: "button", text: "Show more comments" } }));
    expect(steps.el.querySelector(".approval-card")).toBeNull();
    steps.operation({ type: "operation", id: "e3", reply_to: "turn-1", conversation_id: "c", turn: 1, step: 1, call_id: "r:0", action: "click", title: "Clicking “Show more comments”", status: "start", message: null });
    expect(steps.state("r:0")).toBe("running");
    steps.operation({ type: "operation", id: "e4", reply_to: "turn-1", conversation_id: "c", turn: 1, step: 1, call_id: "r:0", action: "click", title: "Clicking “Show more comments”", status: "success", message: "Clicked \"Show more comments\"" });
    expect(steps.state("r:0")).toBe("ok");
    expect(steps.el.textContent).toContain("✓");
    steps.toolCall(call({ call_id: "r:1", decision: "deny", name: "browser.type", arguments: { handleId: "laika-5", text: "hunter2" }, reason: "SENSITIVE_FIELD", detail: "Laika never fills in password fields.", expires_in_ms: null }));
    expect(steps.state("r:1")).toBe("blocked");
    expect(steps.el.textContent).toContain("Laika never fills in password fields.");
    expect(steps.el.textContent).not.toContain("hunter2");
  });

  it("stops: open cards lose their buttons and nothing pending is shown as running", () => {
    const doc = htmlDoc("<main></main>");
    const sent: unknown[] = [];
    const steps = new StepList(doc, (...a) => sent.push(a));
    steps.toolCall(call({}));
    const approve = steps.el.querySelector("button");
    steps.stop();
    approve?.click();
    expect(sent).toEqual([]);
    expect(steps.state("r:0")).toBe("stopped");
    expect(steps.el.querySelector("button")).toBeNull();
  });

  it("shows a summary in stages as one item that follows its parts", () => {
    const doc = htmlDoc("<main></main>");
    const steps = new StepList(doc, () => undefined);
    const op = (call_id: string, title: string, status: "start" | "success" | "error", message: string | null = null) =>
      steps.operation({ type: "operation", id: "e", reply_to: "turn-1", conversation_id: "c", turn: 1, step: 1, call_id, action: call_id === "stage:reduce" ? "other" : "read", title, status, message });
    for (let n = 1; n <= 3; n++) {
      op(`stage:part:${n}`, `Reading part ${n} of 3`, "start");
      if (n === 2) op(`stage:part:${n}`, `Reading part ${n} of 3`, "error", "RUNTIME_ERROR: HTTP 500");
      else op(`stage:part:${n}`, `Reading part ${n} of 3`, "success", "2 key point(s) from chunks 1–4.");
    }
    const items = steps.el.querySelectorAll(".step-item");
    expect(items).toHaveLength(1);
    expect(steps.state("stage")).toBe("running");
    expect(items[0]?.querySelector(".title")?.textContent).toBe("Reading part 3 of 3");
    op("stage:reduce", "Summarizing the 2 parts", "start");
    op("stage:reduce", "Summarizing the 2 parts", "success", "Summarized.");
    expect(steps.state("stage")).toBe("ok");
    expect(items[0]?.querySelector(".summary")?.textContent).toBe("2 parts read. Reading part 2 of 3: RUNTIME_ERROR: HTTP 500 Summarized.");
  });

  it("ends a staged summary cut short as stopped, not running", () => {
    const doc = htmlDoc("<main></main>");
    const steps = new StepList(doc, () => undefined);
    steps.operation({ type: "operation", id: "e", reply_to: "turn-1", conversation_id: "c", turn: 1, step: 1, call_id: "stage:part:1", action: "read", title: "Reading part 1 of 9", status: "start", message: null });
    steps.end();
    expect(steps.state("stage")).toBe("stopped");
  });

  it("asks before a long page is read: the estimate, three choices, one answer", () => {
    const doc = htmlDoc("<main></main>");
    const sent: [string, boolean, boolean | undefined][] = [];
    const steps = new StepList(doc, (id, ok, start) => sent.push([id, ok, start]));
    doc.body.append(steps.el);
    const estimate: EstimateMessage = {
      type: "estimate", id: "e", reply_to: "turn-1", conversation_id: "c", turn: 1, call_id: "stage:confirm:1", digest: "0".repeat(64),
      calls: 104, parts: 97, page_chars: 400_000, concurrency: 4, seconds: 260, start_chars: 14_000, expires_in_ms: 120_000,
    };
    steps.estimate(estimate);
    const card = steps.el.querySelector(".estimate-card");
    expect(card?.textContent).toContain("This page is long for this model: about 97 parts, 104 model calls, about 4 minutes at this model's speed. Read it all?");
    const buttons = Array.from(card?.querySelectorAll("button") ?? []);
    expect(buttons.map((b) => b.textContent)).toEqual(["Read it all", "Read the start only", "Cancel"]);
    buttons[2]?.click();
    buttons[0]?.click();
    expect(sent).toEqual([["stage:confirm:1", false, false]]);
    expect(steps.declined()).toBe(true);
    steps.approvalAnswer("stage:confirm:1", true, false);
    expect(card?.querySelector("button")).toBeNull();
    expect(steps.state("stage:confirm:1")).toBe("stopped");
    // What was chosen, never that the page was read.
    expect(card?.querySelector(".approval-status")?.textContent).toBe("You chose not to read it.");
    // No speed known and no start offered: neither is mentioned.
    const plain = new StepList(doc, () => undefined);
    plain.estimate({ ...estimate, seconds: null, start_chars: null });
    expect(plain.el.textContent).toContain("about 97 parts, 104 model calls. Read it all?");
    expect(Array.from(plain.el.querySelectorAll("button")).map((b) => b.textContent)).toEqual(["Read it all", "Cancel"]);
    expect(estimateQuestion({ ...estimate, seconds: 40 })).toContain("about 40 seconds");
    expect(aboutTime(7200)).toBe("about 2 hours");
  });

  it("does not list parts cut short by Stop as failures", () => {
    const doc = htmlDoc("<main></main>");
    const steps = new StepList(doc, () => undefined);
    const op = (n: number, status: "start" | "success" | "error", message: string | null = null) =>
      steps.operation({ type: "operation", id: "e", reply_to: "turn-1", conversation_id: "c", turn: 1, step: 1, call_id: `stage:part:${n}`, action: "read", title: `Reading part ${n} of 9`, status, message });
    op(1, "start");
    op(1, "success", "2 key point(s) from chunks 1–4.");
    op(2, "start");
    steps.stop();
    op(2, "error", "Stopped.");
    steps.end();
    const summary = steps.el.querySelector(".summary")?.textContent ?? "";
    expect(summary).toContain("1 part read.");
    expect(summary).not.toContain("CANCELLED");
    expect(summary).not.toContain("Stopped.");
  });

  it("words stop reasons and calls plainly", () => {
    expect(stopReasonText("answered", 3)).toBeNull();
    expect(stopReasonText("step_cap", 8)).toBe("Stopped after 8 steps — the step limit.");
    expect(stopReasonText("loop_detected", 2)).toBe("Stopped: the assistant repeated the same action on an unchanged page.");
    expect(stopReasonText("time_budget", 2)).toBe("Stopped: the turn ran out of time.");
    expect(describeCall("browser.click", { handleId: "x" }, { handle_id: "x", role: "button", text: "Confirm" })).toBe("Click “Confirm”");
    expect(describeCall("search", { query: "trail pack" }, null)).toBe("Search the web for “trail pack”");
  });
});
