import { beforeEach, describe, expect, it, vi } from "vitest";
import { installFakeBrowser, type FakeBrowser, type FakePort } from "./fake-browser";
import { agentState, approvalResult, hostError, hostEvent, observation, toolCall } from "./wire-fixtures";
import { checkExtensionMessage } from "../src/shared/validate";

let fake: FakeBrowser;

/** Loads the background afresh over a fake browser. */
async function loadBackground(): Promise<void> {
  vi.resetModules();
  fake = installFakeBrowser();
  fake.content = (_tab, req) =>
    req.kind === "observe" ? { ok: true, observation: observation() } : { ok: true, message: "Found 2 links", data: { links: [] } };
  await import("../src/background/index");
}

/** The native port, after the host answered `hello`. */
function readyHost(): FakePort {
  const native = fake.natives.at(-1);
  if (!native) throw new Error("the background did not connect to the host");
  const [hello] = native.take() as { type: string; id: string }[];
  expect(hello?.type).toBe("hello");
  native.emit(hostEvent("hello.result", hello?.id ?? ""));
  return native;
}

const sentTo = (port: FakePort) => port.take() as Record<string, unknown>[];
const events = (port: FakePort) => sentTo(port).filter((m) => m["kind"] === "event").map((m) => m["msg"] as Record<string, unknown>);

async function askTurn(sidebar: FakePort, native: FakePort, turnId: string): Promise<Record<string, unknown>> {
  sidebar.emit({ kind: "ask", turn_id: turnId, task: "web.answer", text: "Which trains run at night?" });
  await fake.settle();
  const turn = (native.take() as Record<string, unknown>[]).find((m) => m["type"] === "turn" && m["id"] === turnId);
  if (!turn) throw new Error(`${turnId} was not sent to the host`);
  return turn;
}

describe("the background hub", () => {
  beforeEach(loadBackground);

  it("routes each host event to the sidebar whose turn it is, on the turn's tab", async () => {
    const a = fake.connectSidebar();
    const b = fake.connectSidebar();
    const native = readyHost();
    const turnA = await askTurn(a, native, "turn-a");
    expect(await askTurn(b, native, "turn-b")).toMatchObject({ tab: { tab_id: 7 } });
    expect(checkExtensionMessage(turnA).ok).toBe(true);
    expect(turnA["tab"]).toMatchObject({ tab_id: 7, url: "https://news.example.com/story/1" });
    expect(sentTo(a).find((m) => m["kind"] === "turn.tab")).toMatchObject({ turn_id: "turn-a", tab_id: 7, title: "Night trains" });
    sentTo(b);

    native.emit(hostEvent("turn.started", "turn-b"));
    native.emit(hostEvent("turn.started", "turn-a"));
    native.emit(hostEvent("render_delta", "turn-a"));
    expect(events(a).map((m) => [m["type"], m["reply_to"]])).toEqual([["turn.started", "turn-a"], ["render_delta", "turn-a"]]);
    expect(events(b).map((m) => [m["type"], m["reply_to"]])).toEqual([["turn.started", "turn-b"]]);

    // After `done` a turn's events stop, but its late agent-state patch still reaches its sidebar, once.
    native.emit(hostEvent("done", "turn-a"));
    native.emit(hostEvent("render_delta", "turn-a"));
    native.emit(hostEvent("entity_patch", "turn-a"));
    native.emit(hostEvent("entity_patch", "turn-a"));
    expect(events(a).map((m) => m["type"])).toEqual(["done", "entity_patch"]);
    expect(events(b)).toEqual([]);

    // A finished turn keeps its tab: its citations still highlight there.
    a.emit({ kind: "highlight", turn_id: "turn-a", quote: "night trains" });
    await fake.settle();
    expect(fake.contentRequests.at(-1)).toEqual({ tabId: 7, req: { kind: "highlight", quote: "night trains" } });
    expect(sentTo(a)).toEqual([{ kind: "highlight.result", ok: true, message: "Found 2 links" }]);
    // A turn id is never taken twice.
    a.emit({ kind: "ask", turn_id: "turn-a", task: "web.answer", text: "again" });
    await fake.settle();
    expect(native.take()).toEqual([]);
  });

  it("answers a sidebar's other requests once, and only to that sidebar", async () => {
    const a = fake.connectSidebar();
    const b = fake.connectSidebar();
    const native = readyHost();
    a.emit({ kind: "host", request_id: "ping-1", request: { type: "ping" } });
    a.emit({ kind: "host", request_id: "evil-1", request: { type: "turn" } });
    expect(native.take()).toEqual([{ type: "ping", id: "ping-1" }]);
    native.emit(hostEvent("pong", "ping-1"));
    native.emit(hostEvent("pong", "ping-1"));
    expect(events(a).map((m) => m["type"])).toEqual(["pong"]);
    expect(events(b)).toEqual([]);
  });

  it("stops a sidebar's own running request when that sidebar asks, and no other", async () => {
    const a = fake.connectSidebar();
    const b = fake.connectSidebar();
    const native = readyHost();
    a.emit({ kind: "host", request_id: "transform.run-1", request: { type: "transform.run", collection_id: "col-1", transform: "key_points" } });
    expect(native.take()).toMatchObject([{ type: "transform.run", id: "transform.run-1" }]);
    // Another sidebar cannot stop it.
    b.emit({ kind: "cancel_request", request_id: "transform.run-1" });
    expect(native.take()).toEqual([]);
    a.emit({ kind: "cancel_request", request_id: "transform.run-1" });
    const [cancel] = native.take() as Record<string, unknown>[];
    expect(cancel).toMatchObject({ type: "cancel", target: "transform.run-1" });
    expect(checkExtensionMessage(cancel).ok).toBe(true);
    // Answered, it is over: nothing more to stop.
    native.emit(hostError("transform.run-1", "CANCELLED", "the request was cancelled"));
    expect(events(a).map((m) => [m["type"], m["code"]])).toEqual([["error", "CANCELLED"]]);
    a.emit({ kind: "cancel_request", request_id: "transform.run-1" });
    expect(native.take()).toEqual([]);
  });

  it("runs an allowed call on the turn's tab and routes its result to the call", async () => {
    const a = fake.connectSidebar();
    const native = readyHost();
    await askTurn(a, native, "turn-a");
    native.emit(toolCall("turn-a", { call_id: "call-1" }));
    native.emit(agentState("turn-a", "executing", "call-1"));
    await fake.settle();
    expect(fake.contentRequests.at(-1)).toEqual({ tabId: 7, req: { kind: "tool", name: "browser.get_selection_links", args: {}, target: null } });
    const [result] = native.take() as Record<string, unknown>[];
    expect(result).toMatchObject({ type: "tool_result", call_id: "call-1", status: "ok", result: { links: [], message: "Found 2 links" } });
    expect(checkExtensionMessage(result).ok).toBe(true);
    // The host says a second `executing` for it: a call runs once.
    native.emit(agentState("turn-a", "executing", "call-1"));
    await fake.settle();
    expect(native.take()).toEqual([]);
    // The host's answer to the result itself is nobody's event.
    sentTo(a);
    native.emit(hostError(String(result?.["id"]), "UNKNOWN_CALL", "no such call"));
    expect(sentTo(a)).toEqual([]);
  });

  it("runs an `ask` call only after its sidebar approved and the host accepted", async () => {
    const a = fake.connectSidebar();
    const b = fake.connectSidebar();
    const native = readyHost();
    await askTurn(a, native, "turn-a");
    native.emit(toolCall("turn-a", { call_id: "call-2", decision: "ask", reason: "COMMIT_ACTION", expires_in_ms: 120_000 }));
    native.emit(agentState("turn-a", "executing", "call-2"));
    await fake.settle();
    expect(native.take()).toEqual([]);
    // Another sidebar cannot approve it.
    b.emit({ kind: "approval", call_id: "call-2", approved: true });
    expect(native.take()).toEqual([]);
    a.emit({ kind: "approval", call_id: "call-2", approved: true });
    const [approval] = native.take() as Record<string, unknown>[];
    expect(approval).toMatchObject({ type: "approval", call_id: "call-2", approved: true, digest: "d".repeat(64) });
    sentTo(a);
    native.emit(approvalResult(String(approval?.["id"]), "call-2", true));
    expect(sentTo(a)).toEqual([{ kind: "approval.answer", call_id: "call-2", accepted: true, approved: true }]);
    native.emit(agentState("turn-a", "executing", "call-2"));
    await fake.settle();
    expect(native.take()).toMatchObject([{ type: "tool_result", call_id: "call-2", status: "ok" }]);
  });

  it("stops the turns of a sidebar that closed, and no longer routes to it", async () => {
    const a = fake.connectSidebar();
    const b = fake.connectSidebar();
    const native = readyHost();
    await askTurn(a, native, "turn-a");
    await askTurn(b, native, "turn-b");
    native.emit(toolCall("turn-a", { call_id: "call-3" }));
    sentTo(a);
    a.drop();
    expect(native.take()).toMatchObject([{ type: "cancel", target: "turn-a" }]);
    // Its call never starts, though the host may still say `executing`.
    native.emit(agentState("turn-a", "executing", "call-3"));
    await fake.settle();
    expect(native.take()).toEqual([]);
    expect(fake.contentRequests.filter((r) => r.req.kind === "tool")).toEqual([]);
    expect(a.sent).toEqual([]);
    // The other sidebar's turn goes on.
    sentTo(b);
    native.emit(hostEvent("turn.started", "turn-b"));
    expect(events(b).map((m) => m["type"])).toEqual(["turn.started"]);
  });

  it("fails the turns and requests in flight when the host is not installed", async () => {
    const a = fake.connectSidebar();
    const native = fake.natives.at(-1);
    a.emit({ kind: "ask", turn_id: "turn-a", task: "web.answer", text: "Which trains run at night?" });
    a.emit({ kind: "host", request_id: "ping-1", request: { type: "ping" } });
    await fake.settle();
    sentTo(a);
    fake.runtime.lastError = { message: "Specified native messaging host not found." };
    native?.drop();
    const said = sentTo(a);
    expect(said.find((m) => m["kind"] === "turn.failed")).toMatchObject({ turn_id: "turn-a", code: "NOT_INSTALLED" });
    expect(said.find((m) => m["kind"] === "request.failed")).toMatchObject({ request_id: "ping-1" });
    expect(said.find((m) => m["kind"] === "status")).toMatchObject({ state: "not_installed" });
  });
});
