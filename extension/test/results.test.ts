import { describe, expect, it } from "vitest";
import { failure, toolResultMessage, ToolFailure } from "../src/background/results";
import { HandleRegistry } from "../src/content/handles";
import { buildObservation } from "../src/content/observe";
import { validateExtension } from "../src/generated/wire-validate.js";
import { htmlDoc } from "./helpers";

function valid(msg: unknown): string {
  return validateExtension(msg) ? "" : JSON.stringify(validateExtension.errors);
}

describe("tool_result messages", () => {
  it("reports success with the message, the data and the page afterwards", () => {
    const doc = htmlDoc(`<main><h1>Results</h1><a href="/p/1">Trail pack</a><button>Search</button></main>`);
    const observation = buildObservation(doc, new HandleRegistry());
    const msg = toolResultMessage("result-1", "resp:0", { status: "ok", message: "Clicked \"Search\"", observation });
    expect(valid(msg)).toBe("");
    expect(msg).toMatchObject({ type: "tool_result", id: "result-1", call_id: "resp:0", status: "ok", result: { message: "Clicked \"Search\"" } });
    expect(msg.observation?.summary.elements?.length).toBe(2);
    expect(msg.error).toBeUndefined();
  });

  it("keeps the tool's data beside the message (selection links)", () => {
    const links = [{ text: "Pack", url: "https://shop.example/p/1" }];
    const msg = toolResultMessage("r2", "resp:1", { status: "ok", message: "1 link(s) in the selection", data: { links, message: "spoof" } });
    expect(valid(msg)).toBe("");
    expect(msg.result).toEqual({ links, message: "1 link(s) in the selection" });
  });

  it("reports failures with a code, and cuts long text", () => {
    const msg = toolResultMessage("r3", "resp:2", { status: "error", code: "STALE_HANDLE", message: "x".repeat(5000) });
    expect(valid(msg)).toBe("");
    expect(msg.error?.code).toBe("STALE_HANDLE");
    expect(msg.error?.message.length).toBeLessThanOrEqual(400);
    expect((msg.result as { message: string }).message).toBe(msg.error?.message);
    const weird = toolResultMessage("r4", "resp:3", { status: "denied", code: "", message: "" });
    expect(valid(weird)).toBe("");
    expect(weird.error?.code).toBe("TOOL_FAILED");
  });

  it("turns thrown errors into outcomes with their code", () => {
    expect(failure(new ToolFailure("INVALID_URL", "bad url"))).toEqual({ status: "error", code: "INVALID_URL", message: "bad url" });
    expect(failure(new Error("boom"))).toEqual({ status: "error", code: "TOOL_FAILED", message: "boom" });
    const msg = toolResultMessage("r5", "resp:4", failure("plain"));
    expect(valid(msg)).toBe("");
  });

  it("is refused by the validator without its required fields", () => {
    expect(valid({ type: "tool_result", id: "r", status: "ok" })).not.toBe("");
    expect(valid({ type: "tool_result", id: "r", call_id: "c", status: "done" })).not.toBe("");
  });
});
