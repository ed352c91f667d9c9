import { describe, expect, it } from "vitest";
import { TurnTable } from "../src/background/turns";
import { toolCall } from "./wire-fixtures";

const a = { name: "sidebar A" };
const b = { name: "sidebar B" };

describe("the background's turn table", () => {
  it("routes a turn's replies to its sidebar until done, then only its late snapshot", () => {
    const table = new TurnTable<object>();
    table.start("turn-1", a, 7, [9]);
    expect(table.isKnown("turn-1")).toBe(true);
    expect(table.route("turn-1", "assistant")).toMatchObject({ kind: "turn", turn: { port: a, tab: 7 } });
    table.done("turn-1");
    expect(table.route("turn-1", "assistant")).toEqual({ kind: "nobody" });
    expect(table.route("turn-1", "entity_patch")).toEqual({ kind: "request", port: a });
    expect(table.route("turn-1", "entity_patch")).toEqual({ kind: "nobody" });
    // Its tabs stay for its citations, and its id stays taken.
    expect(table.highlightTarget("turn-1", 9)).toEqual({ tab: 9, other: true });
    expect(table.highlightTarget("turn-1", 3)).toEqual({ tab: 7, other: false });
    expect(table.isKnown("turn-1")).toBe(true);
  });

  it("answers a request once, unless the host said more is coming", () => {
    const forget = new TurnTable<object>();
    forget.request("forget-1", b);
    forget.replied("forget-1", "entity_patch");
    expect(forget.route("forget-1", "agent_state.forget.result")).toEqual({ kind: "request", port: b });
    const table = new TurnTable<object>();
    table.request("req-1", b);
    expect(table.route("req-1", "context_usage")).toEqual({ kind: "request", port: b });
    table.replied("req-1", "context_usage");
    expect(table.isRouted("req-1")).toBe(true);
    table.replied("req-1", "collection.add_page.result");
    expect(table.route("req-1", "collection.add_page.result")).toEqual({ kind: "nobody" });
  });

  it("swallows the host's answer to a tool result it sent", () => {
    const table = new TurnTable<object>();
    table.resultSent("result-1");
    expect(table.route("result-1", "error")).toEqual({ kind: "result" });
    expect(table.route("result-1", "error")).toEqual({ kind: "nobody" });
  });

  it("hands back a closed sidebar's running turns and exports, and forgets its routes", () => {
    const table = new TurnTable<object>();
    table.start("turn-a", a, 1, []);
    table.start("turn-b", b, 2, []);
    table.request("req-a", a);
    table.calls.propose(toolCall("turn-a", { call_id: "c1", decision: "ask" }), "turn-a", a);
    const ended: string[] = [];
    table.awaitShare("c0", { owner: a, done: (_ok, message) => ended.push(message) });
    const left = table.dropSidebar(a);
    expect(left.turns).toEqual(["turn-a"]);
    left.shares.forEach((s) => s.done(false, "closed"));
    expect(ended).toEqual(["closed"]);
    expect(table.calls.get("c1")?.phase).toBe("refused");
    expect(table.isRouted("req-a")).toBe(false);
    expect(table.runningTurn("turn-b")?.port).toBe(b);
  });

  it("forgets a turn the host never received, and says whose it was", () => {
    const table = new TurnTable<object>();
    table.start("turn-1", a, 7, []);
    expect(table.undelivered("turn-1")).toEqual({ port: a, isTurn: true });
    expect(table.isKnown("turn-1")).toBe(false);
    expect(table.undelivered("cancel-1")).toEqual({ port: undefined, isTurn: false });
  });

  it("lets only the sidebar an export was sent to answer it", () => {
    const table = new TurnTable<object>();
    table.awaitShare("c1", { owner: a, done: () => undefined });
    expect(table.shareFor("c1", b)).toBeUndefined();
    expect(table.shareFor("c1", a)?.owner).toBe(a);
    table.shareEnded("c1");
    expect(table.shareFor("c1", a)).toBeUndefined();
  });

  it("ends every running turn and forgets every request when the host goes away", () => {
    const table = new TurnTable<object>();
    table.start("turn-1", a, 7, []);
    table.start("turn-2", b, 8, []);
    table.done("turn-2");
    table.request("req-1", b);
    expect(table.hostLost()).toEqual({ turns: [{ id: "turn-1", port: a }], requests: [{ id: "req-1", port: b }] });
    expect(table.runningTurn("turn-1")).toBeUndefined();
    expect(table.route("req-1", "history.list.result")).toEqual({ kind: "nobody" });
    expect(table.hostLost()).toEqual({ turns: [], requests: [] });
  });
});
