import { describe, expect, it } from "vitest";
import { initialState, reduce, type Ask, type SidebarAction, type SidebarState, type TurnState } from "../src/sidebar/state";
import type { RenderBlock } from "../src/generated/wire";
import { checkHostMessage } from "../src/shared/validate";
import { agentState, hostError, hostEvent, toolCall } from "./wire-fixtures";

const ASK: Ask = { task: "web.answer", text: "Which trains run at night?", label: "Which trains run at night?" };
const para = (t: string): RenderBlock => ({ type: "paragraph", children: [{ type: "text", text: t }] });
const doc = (t: string) => ({ type: "doc" as const, children: [para(t)] });

/** Freezes a state deeply: the reducer must never change one in place. */
function frozen<T>(v: T): T {
  if (typeof v === "object" && v !== null && !Object.isFrozen(v)) {
    Object.freeze(v);
    for (const k of Object.keys(v)) frozen((v as Record<string, unknown>)[k]);
  }
  return v;
}

function run(actions: SidebarAction[], from: SidebarState = initialState()): SidebarState {
  return actions.reduce((s, a) => reduce(frozen(s), a), from);
}

const host = (msg: Extract<SidebarAction, { kind: "host" }>["msg"]): SidebarAction => ({ kind: "host", msg });

function turn(s: SidebarState, id = "turn-1"): TurnState {
  const t = s.turns[id];
  if (!t) throw new Error(`no ${id}`);
  return t;
}

/** What the answer area shows, as short strings. */
function body(t: TurnState): string[] {
  return t.body.map((b) => {
    switch (b.kind) {
      case "preview":
        return `preview: ${b.blocks.length} block(s)`;
      case "answer":
        return `answer of step ${b.msg.step}`;
      case "text":
        return `text ${b.index}: ${b.text}`;
      case "error":
        return `error ${b.code}`;
      default:
        return `${b.kind}: ${b.text}`;
    }
  });
}

describe("the sidebar state", () => {
  it("follows a turn: started, deltas, the assistant, done", () => {
    let s = run([{ kind: "asked", id: "turn-1", ask: ASK }]);
    expect(s.activeTurn).toBe("turn-1");
    expect(turn(s)).toMatchObject({ progress: "Reading the page…", heard: false, ended: false, body: [] });
    s = run(
      [
        { kind: "turn.tab", turn_id: "turn-1", title: "Night trains", url: "https://x.example/1", tab_id: 7, others: [{ id: 9, title: "", url: "https://y.example/" }] },
        host(hostEvent("turn.started", "turn-1", { conversation_id: "conv-1" })),
      ],
      s,
    );
    expect(turn(s).pages).toEqual(["Night trains", "Also read: https://y.example/"]);
    expect(turn(s).progress).toBe("Working… (Offline extractive (no AI model): quotes the page)");
    expect(s.conversationId).toBe("conv-1");
    expect(s.runtime).toMatchObject({ answered: true, info: { kind: "builtin" } });
    s = run(
      [
        host(hostEvent("context_usage", "turn-1")),
        host(hostEvent("text_delta", "turn-1", { step: 1, index: 0, text: "Night " })),
        host(hostEvent("text_delta", "turn-1", { step: 1, index: 0, text: "trains" })),
      ],
      s,
    );
    expect(turn(s).progress).toBe("Writing the answer…");
    expect(turn(s).usage).toHaveLength(1);
    expect(body(turn(s))).toEqual(["text 0: Night trains"]);
    s = run([host(hostEvent("render_delta", "turn-1", { step: 1, start_index: 0, blocks: [para("Night trains are back.")] }))], s);
    expect(body(turn(s))).toEqual(["preview: 1 block(s)"]);
    const answer = hostEvent("assistant", "turn-1", { conversation_id: "conv-1", step: 1, render: doc("They run to Vienna.") });
    s = run([host(answer)], s);
    expect(body(turn(s))).toEqual(["answer of step 1"]);
    expect(turn(s).preview).toEqual([]);
    s = run([host(hostEvent("done", "turn-1", { status: "ok", stored: false, stop_reason: "answered" }))], s);
    expect(turn(s)).toMatchObject({ ended: true, ends: 1, last: null, done: { answer } });
    expect(body(turn(s))).toEqual(["answer of step 1", "notice: The answer could not be saved to your history."]);
    expect(s.activeTurn).toBeNull();
  });

  it("keeps a block's streamed words across redraws, and starts over for the next block", () => {
    let s = run([{ kind: "asked", id: "turn-1", ask: ASK }, host(hostEvent("render_delta", "turn-1", { step: 1, start_index: 0, blocks: [para("Title")] }))]);
    s = run([host(hostEvent("text_delta", "turn-1", { step: 1, index: 1, text: "Night <b>trains</b> " })), host(hostEvent("text_delta", "turn-1", { step: 1, index: 1, text: "are back." }))], s);
    expect(body(turn(s))).toEqual(["preview: 1 block(s)", "text 1: Night <b>trains</b> are back."]);
    // An earlier block's render_delta redraws the area: the words come back whole with the next delta.
    s = run([host(hostEvent("render_delta", "turn-1", { step: 1, start_index: 0, blocks: [para("Title!")] }))], s);
    expect(body(turn(s))).toEqual(["preview: 1 block(s)"]);
    s = run([host(hostEvent("text_delta", "turn-1", { step: 1, index: 1, text: " More" }))], s);
    expect(body(turn(s))).toEqual(["preview: 1 block(s)", "text 1: Night <b>trains</b> are back. More"]);
    // The next block starts its own words, in the same one paragraph.
    s = run([host(hostEvent("text_delta", "turn-1", { step: 1, index: 2, text: "Second" }))], s);
    expect(body(turn(s))).toEqual(["preview: 1 block(s)", "text 2: Second"]);
  });

  it("withdraws a preview on render_reset, but keeps a step's shown answer", () => {
    let s = run([
      { kind: "asked", id: "turn-1", ask: ASK },
      host(hostEvent("render_delta", "turn-1", { step: 1, start_index: 0, blocks: [para("A first try")] })),
      host(hostEvent("text_delta", "turn-1", { step: 1, index: 1, text: "and more" })),
      host(hostEvent("render_reset", "turn-1", { step: 1, reason: "retry" })),
    ]);
    expect(turn(s)).toMatchObject({ body: [], preview: [], writing: null });
    s = run(
      [
        host(hostEvent("assistant", "turn-1", { step: 1, render: doc("The answer") })),
        host(hostEvent("text_delta", "turn-1", { step: 1, index: 0, text: "stray" })),
        host(hostEvent("render_reset", "turn-1", { step: 1, reason: "replaced" })),
      ],
      s,
    );
    expect(body(turn(s))).toEqual(["answer of step 1"]);
  });

  it("moves a step's text to the step list when its calls follow, and takes it back if it was the answer", () => {
    let s = run([
      { kind: "asked", id: "turn-1", ask: ASK },
      host(hostEvent("assistant", "turn-1", { step: 1, render: doc("I will click Buy.") })),
      host(toolCall("turn-1", { step: 1, call_id: "c1" })),
    ]);
    expect(turn(s).notes.map((n) => n.step)).toEqual([1]);
    expect(turn(s)).toMatchObject({ body: [], latest: null });
    s = run([host(hostEvent("done", "turn-1", { status: "ok", stored: true, stop_reason: "step_cap" }))], s);
    expect(turn(s).notes).toEqual([]);
    expect(body(turn(s))).toEqual(["answer of step 1"]);
  });

  it("says why a turn failed, ends it, and takes a later `done` quietly", () => {
    let s = run([{ kind: "asked", id: "turn-1", ask: ASK }, host(hostEvent("turn.started", "turn-1")), host(hostError("turn-1", "RUNTIME_TIMEOUT", "slow"))]);
    expect(turn(s)).toMatchObject({ failed: true, ended: true, ends: 1 });
    expect(body(turn(s))).toEqual(["error RUNTIME_TIMEOUT"]);
    expect(s.activeTurn).toBeNull();
    s = run([host(hostEvent("done", "turn-1", { status: "failed", stored: false, stop_reason: "failed" }))], s);
    expect(turn(s)).toMatchObject({ ends: 2, done: { msg: { stop_reason: "failed" } } });
    expect(body(turn(s))).toEqual(["error RUNTIME_TIMEOUT"]);
    // The background could not start one.
    s = run([{ kind: "asked", id: "turn-2", ask: ASK }, { kind: "turn.failed", turn_id: "turn-2", code: "NO_PAGE", message: "Open a web page first." }], s);
    expect(body(turn(s, "turn-2"))).toEqual(["failure: Open a web page first."]);
    expect(s.activeTurn).toBeNull();
  });

  it("keeps the agent state as the host has it: the session's, then only its patches", () => {
    const state = {
      sessionId: "conv-1",
      current_understanding: { entities: [], dependencies: [] },
      assumptions: [],
      expectations: [],
      tentative_hypotheses: [],
      items: [{ id: "turn:1", kind: "question" as const, title: "Which trains?", status: "active" as const, createdAt: "t", updatedAt: "t" }],
    };
    let s = run([{ kind: "asked", id: "turn-1", ask: ASK }, host(hostEvent("session", "turn-1", { conversation_id: "conv-1", agent_state: state }))]);
    expect(s.conversationId).toBe("conv-1");
    expect(s.agentState?.items[0]?.status).toBe("active");
    const patch = (conversation_id: string, path: string) =>
      host(hostEvent("entity_patch", "turn-1", { conversation_id, entity_id: conversation_id, patch: [{ op: "replace", path, value: "resolved" }] }));
    s = run([patch("conv-1", "/items/0/status")], s);
    expect(s.agentState?.items[0]?.status).toBe("resolved");
    // The answer's text says nothing to the state; a patch for another conversation or one that does not apply changes nothing.
    const before = s.agentState;
    s = run([host(hostEvent("assistant", "turn-1", { conversation_id: "conv-1", render: doc("Your question is resolved.") })), patch("conv-2", "/items/0/title"), patch("conv-1", "/items/3/status")], s);
    expect(s.agentState).toBe(before);
    // The summarizer's patch after `done` still applies.
    s = run([host(hostEvent("done", "turn-1", { status: "ok", stop_reason: "answered" })), patch("conv-1", "/items/0/title")], s);
    expect(s.agentState?.items[0]?.title).toBe("resolved");
    // "Forget what you assumed" answers its own request, not a turn: its patch applies all the same.
    s = run([host(hostEvent("entity_patch", "agent_state.forget-1", { conversation_id: "conv-1", entity_id: "conv-1", source: "user", patch: [{ op: "replace", path: "/items/0/status", value: "discarded" }] }))], s);
    expect(s.agentState?.items[0]?.status).toBe("discarded");
    // A new chat starts without state.
    s = run([{ kind: "conversation", id: null }], s);
    expect(s.agentState).toBeNull();
  });

  it("ends a refused turn on its error, and takes its `done` quietly", () => {
    let s = run([{ kind: "asked", id: "turn-1", ask: ASK }, host(hostError("turn-1", "INVALID_REQUEST", "bad conversation id"))]);
    expect(turn(s)).toMatchObject({ failed: true, ended: true });
    s = run([host(hostEvent("done", "turn-1", { status: "failed", stored: false, stop_reason: "failed", turn: 0, request_id: null, conversation_id: null }))], s);
    expect(turn(s)).toMatchObject({ ended: true, done: { msg: { turn: 0 } } });
    expect(body(turn(s))).toEqual(["error INVALID_REQUEST"]);
  });

  it("gives up on a silent host, but not on one that spoke", () => {
    const silent = run([{ kind: "asked", id: "turn-1", ask: ASK }, { kind: "silent", id: "turn-1" }]);
    expect(turn(silent)).toMatchObject({ failed: true, ended: true });
    expect(body(turn(silent))[0]).toContain("did not answer within 20 seconds");
    const heard = run([{ kind: "asked", id: "turn-1", ask: ASK }, host(hostEvent("turn.started", "turn-1"))]);
    expect(reduce(heard, { kind: "silent", id: "turn-1" })).toBe(heard);
  });

  it("cancels: a running turn waits for the host, an unheard one stops at once", () => {
    let s = run([
      { kind: "asked", id: "turn-1", ask: ASK },
      host(hostEvent("turn.started", "turn-1")),
      host(toolCall("turn-1", { call_id: "c1", decision: "ask" })),
      { kind: "stop", id: "turn-1" },
    ]);
    expect(turn(s)).toMatchObject({ progress: "Stopping…", ended: false, calls: { c1: { phase: "stopped" } } });
    expect(s.activeTurn).toBe("turn-1");
    s = run([host(hostError("turn-1", "CANCELLED", "stopped")), host(hostEvent("done", "turn-1", { status: "cancelled", stop_reason: "cancelled" }))], s);
    expect(turn(s).ended).toBe(true);
    expect(s.activeTurn).toBeNull();
    const unheard = run([{ kind: "asked", id: "turn-2", ask: ASK }, { kind: "stop", id: "turn-2" }]);
    expect(body(turn(unheard, "turn-2"))).toEqual(["notice: Stopped."]);
    expect(unheard.activeTurn).toBeNull();
  });

  it("always ends a turn: the host went away under it, or never confirmed a Stop", () => {
    let s = run([
      { kind: "asked", id: "turn-1", ask: ASK },
      host(hostEvent("turn.started", "turn-1")),
      host(toolCall("turn-1", { call_id: "c1", decision: "ask" })),
      { kind: "turn.failed", turn_id: "turn-1", code: "HOST_STOPPED", message: "Laika stopped; ask again." },
    ]);
    expect(turn(s)).toMatchObject({ ended: true, failed: true, calls: { c1: { phase: "stopped" } } });
    expect(turn(s).body).toEqual([{ kind: "failure", text: "Laika stopped; ask again.", retry: true }]);
    expect(s.activeTurn).toBeNull();
    // A late word about it changes nothing.
    expect(reduce(s, { kind: "turn.failed", turn_id: "turn-1", code: "HOST_STOPPED", message: "again" })).toBe(s);
    s = run([{ kind: "asked", id: "turn-2", ask: ASK }, host(hostEvent("turn.started", "turn-2")), { kind: "stop", id: "turn-2" }], s);
    expect(turn(s, "turn-2").progress).toBe("Stopping…");
    s = run([{ kind: "stop.unanswered", id: "turn-2" }], s);
    expect(turn(s, "turn-2")).toMatchObject({ ended: true });
    expect(body(turn(s, "turn-2"))).toEqual(["notice: Stopped."]);
    expect(s.activeTurn).toBeNull();
    // A Stop the host confirmed in time is not ended twice.
    expect(reduce(s, { kind: "stop.unanswered", id: "turn-2" })).toBe(s);
  });

  it("names in the header what new turns use: saved Settings at once, an offline answer never", () => {
    const server = { kind: "openai", model: "gemma", offline: true, label: "gemma via llama.cpp" };
    let s = run([{ kind: "runtime.saved", info: server }]);
    expect(s.runtime).toEqual({ info: server, answered: false });
    s = run(
      [
        { kind: "asked", id: "turn-1", ask: { ...ASK, offline: true } },
        host(hostEvent("turn.started", "turn-1")),
        host(hostEvent("done", "turn-1", { status: "ok", stored: true, stop_reason: "answered" })),
      ],
      s,
    );
    expect(turn(s).runtime?.info.kind).toBe("builtin");
    expect(s.runtime?.info.label).toBe("gemma via llama.cpp");
  });

  it("follows each call: allowed, approved, denied, expired", () => {
    let s = run([
      { kind: "asked", id: "turn-1", ask: ASK },
      host(toolCall("turn-1", { call_id: "allow", decision: "allow" })),
      host(toolCall("turn-1", { call_id: "ask", decision: "ask", index: 1 })),
      host(toolCall("turn-1", { call_id: "deny", decision: "deny", index: 2 })),
      host(toolCall("turn-1", { call_id: "late", decision: "ask", index: 3 })),
    ]);
    const phases = () => Object.fromEntries(Object.values(turn(s).calls).map((c) => [c.callId, c.phase]));
    expect(phases()).toEqual({ allow: "proposed", ask: "awaiting_approval", deny: "denied", late: "awaiting_approval" });
    s = run(
      [
        host(agentState("turn-1", "executing", "allow")),
        host(hostEvent("tool_result", "turn-1", { call_id: "allow", status: "ok" })),
        host(agentState("turn-1", "waiting_for_approval", "ask")),
      ],
      s,
    );
    expect(turn(s).progress).toBe("Waiting for your approval…");
    s = run(
      [
        { kind: "approval.answer", call_id: "ask", accepted: true, approved: true },
        { kind: "approval.answer", call_id: "late", accepted: false, approved: false, code: "APPROVAL_EXPIRED" },
        host(agentState("turn-1", "executing", "deny")),
      ],
      s,
    );
    expect(phases()).toEqual({ allow: "ok", ask: "approved", deny: "denied", late: "expired" });
    s = run([host(agentState("turn-1", "executing", "ask")), host(hostEvent("done", "turn-1", { status: "ok", stop_reason: "answered" }))], s);
    // The turn ended while the call ran: it never finished.
    expect(phases()).toEqual({ allow: "ok", ask: "stopped", deny: "denied", late: "expired" });
  });

  it("keeps two turns apart when their events interleave", () => {
    let s = run([
      { kind: "asked", id: "turn-a", ask: ASK },
      host(hostEvent("turn.started", "turn-a", { conversation_id: "conv-1" })),
      host(hostError("turn-a", "RUNTIME_ERROR", "down")),
      // One turn at a time: asked while another runs is ignored.
      { kind: "asked", id: "turn-b", ask: { ...ASK, text: "Again" } },
      { kind: "asked", id: "turn-b", ask: { ...ASK, text: "Again" } },
    ]);
    expect(Object.keys(s.turns)).toEqual(["turn-a", "turn-b"]);
    expect(run([{ kind: "asked", id: "turn-c", ask: ASK }], s)).toBe(s);
    s = run(
      [
        host(hostEvent("turn.started", "turn-b", { conversation_id: "conv-1" })),
        host(hostEvent("render_delta", "turn-b", { step: 1, start_index: 0, blocks: [para("B's words")] })),
        host(hostEvent("done", "turn-a", { status: "failed", stop_reason: "failed" })),
        host(toolCall("turn-b", { call_id: "b1" })),
        host(hostEvent("assistant", "turn-b", { conversation_id: "conv-1", step: 2, render: doc("B's answer") })),
        host(hostEvent("render_delta", "turn-unknown", { step: 1, start_index: 0, blocks: [para("nobody's")] })),
      ],
      s,
    );
    expect(s.activeTurn).toBe("turn-b");
    expect(body(turn(s, "turn-a"))).toEqual(["error RUNTIME_ERROR"]);
    expect(turn(s, "turn-a").calls).toEqual({});
    expect(body(turn(s, "turn-b"))).toEqual(["answer of step 2"]);
    expect(Object.keys(turn(s, "turn-b").calls)).toEqual(["b1"]);
    expect(turn(s, "turn-b").ended).toBe(false);
    expect(Object.keys(s.turns)).toEqual(["turn-a", "turn-b"]);
  });

  it("names the runtime the host started with until a turn says which answered", () => {
    const info = { kind: "openai", label: "Server", model: "m", offline: false };
    let s = run([{ kind: "status", state: "ready", detail: "", runtime: info }]);
    expect(s.runtime).toEqual({ info, answered: false });
    s = run([{ kind: "asked", id: "turn-1", ask: ASK }, host(hostEvent("done", "turn-1", { endpoint: "http://127.0.0.1:8080/v1" }))], s);
    expect(s.runtime).toMatchObject({ answered: true, endpoint: "http://127.0.0.1:8080/v1", info: { kind: "builtin" } });
    expect(run([{ kind: "status", state: "ready", detail: "", runtime: info }], s).runtime).toBe(s.runtime);
  });
});

describe("the events these tests use", () => {
  it("says nothing about reading while the user chooses on an estimate, then follows the choice", () => {
    const staged = host(
      hostEvent("context_usage", "turn-1", {
        selection: { strategy: "staged", page_chars: 400_000, sent_chars: 400_000, passages_sent: 31, passages_total: 31, chunks: [1], about: [] },
      }),
    );
    const estimate = host({
      type: "estimate", id: "e-1", reply_to: "turn-1", conversation_id: "c", turn: 1, call_id: "stage:confirm:1", digest: "0".repeat(64),
      calls: 37, parts: 31, page_chars: 400_000, concurrency: 4, seconds: null, start_chars: 14_000, expires_in_ms: 120_000,
    });
    const asked = run([{ kind: "asked", id: "turn-1", ask: { ...ASK, task: "web.summarize" } }, staged, estimate]);
    expect(turn(asked)).toMatchObject({ estimate: "stage:confirm:1", progress: "Waiting for your answer…" });
    const accepted = run([{ kind: "approval.answer", call_id: "stage:confirm:1", accepted: true, approved: true }], asked);
    expect(turn(accepted)).toMatchObject({ estimate: "stage:confirm:1", progress: "Starting…" });
    // Read it all: the first part read says the reading is under way.
    const part = host({
      type: "operation", id: "o-1", reply_to: "turn-1", conversation_id: "c", turn: 1, step: 1, call_id: "stage:part:1",
      action: "read", status: "start", title: "Reading part 1 of 31", message: null,
    });
    expect(turn(run([part], accepted))).toMatchObject({ estimate: null, progress: "Reading 400,000 characters in 31 parts…" });
    // The start only: its own usage says what is read.
    const start = host(hostEvent("context_usage", "turn-1"));
    const startOnly = turn(run([start], accepted));
    expect(startOnly.estimate).toBeNull();
    expect(startOnly.usage).toHaveLength(2);
    expect(startOnly.progress).toMatch(/^Read [\d,]+ characters/);
  });

  it("are wire-valid host messages", () => {
    const events = [
      hostEvent("text_delta", "turn-1", { text: "x" }),
      hostEvent("render_reset", "turn-1"),
      hostEvent("tool_result", "turn-1"),
      hostEvent("render_delta", "turn-1", { blocks: [para("x")] }),
      hostEvent("assistant", "turn-1", { render: doc("x") }),
      toolCall("turn-1"),
      agentState("turn-1", "executing", "c1"),
      hostError("turn-1", "CANCELLED", "stopped"),
      hostEvent("session", "turn-1"),
      hostEvent("entity_patch", "turn-1", { patch: [{ op: "replace", path: "/items/0/status", value: "resolved" }] }),
      hostEvent("done", "turn-1", { status: "failed", stored: false, stop_reason: "failed", turn: 0, request_id: null, conversation_id: null, error_code: "INVALID_REQUEST" }),
    ];
    for (const msg of events) {
      const r = checkHostMessage(msg);
      expect(r.ok ? "" : `${msg.type}: ${r.error}`).toBe("");
    }
  });
});
