import fs from "node:fs";
import path from "node:path";
import { JSDOM } from "jsdom";
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { installFakeBrowser, type FakeBrowser, type FakePort } from "./fake-browser";
import { agentState, hostError, hostEvent, toolCall } from "./wire-fixtures";
import type { RenderBlock } from "../src/generated/wire";

let fake: FakeBrowser;
let port: FakePort;

/** The sidebar page as the browser loads it: sidepanel.html, then the hub over a fake browser. */
async function loadSidebar(): Promise<void> {
  vi.resetModules();
  const page = new JSDOM(fs.readFileSync(path.join(__dirname, "..", "static", "sidepanel.html"), "utf8")).window.document;
  document.body.replaceWith(document.importNode(page.body, true));
  fake = installFakeBrowser();
  // jsdom lays nothing out, so it has no scrolling, no sizes and no media queries.
  Element.prototype.scrollIntoView ??= () => undefined;
  globalThis.ResizeObserver ??= class {
    observe(): void {}
    unobserve(): void {}
    disconnect(): void {}
  };
  window.matchMedia ??= (query: string) => ({ matches: false, media: query, addEventListener: () => undefined }) as unknown as MediaQueryList;
  await import("../src/sidebar/index");
  const connected = fake.connects[0];
  if (!connected) throw new Error("the sidebar did not connect");
  port = connected;
  expect(port.take()).toEqual([{ kind: "status" }, { kind: "reading" }]);
  port.emit({ kind: "status", state: "ready", detail: "ok", runtime: { kind: "builtin", label: "Offline", model: "m", offline: true } });
  // The header's runtime switcher asks for the config.
  expect(port.take()).toMatchObject([{ kind: "host", request: { type: "config.get" } }]);
}

const $ = (sel: string) => document.querySelector(sel) as HTMLElement;
const text = (sel: string) => ($(sel)?.textContent ?? "").replace(/\s+/g, " ").trim();
const para = (t: string): RenderBlock => ({ type: "paragraph", children: [{ type: "text", text: t }] });
const doc = (...texts: string[]) => ({ type: "doc" as const, children: texts.map(para) });

/** The user asks `question` with the composer; returns the turn id the sidebar made. */
function askQuestion(question: string): string {
  ($("#question") as HTMLTextAreaElement).value = question;
  ($("#composer") as HTMLFormElement).requestSubmit();
  const ask = port.take().find((m) => (m as { kind: string }).kind === "ask") as { turn_id: string } | undefined;
  if (!ask) throw new Error("no ask was sent");
  return ask.turn_id;
}

const host = (msg: unknown) => port.emit({ kind: "event", msg });

describe("the sidebar hub", () => {
  beforeEach(loadSidebar);
  afterEach(() => vi.useRealTimers());

  it("follows a turn from the question to the answer", async () => {
    const id = askQuestion("Which trains run at night?");
    expect(text(".turn .user")).toBe("Which trains run at night?");
    expect($(".turn").getAttribute("aria-busy")).toBe("true");
    expect($("#stop").hidden).toBe(false);
    expect(text(".turn .progress")).toBe("Reading the page…");
    port.emit({ kind: "turn.tab", turn_id: id, title: "Night trains", url: "https://news.example.com/story/1", tab_id: 7, others: [] });
    expect(text(".turn .page")).toBe("Night trains");
    expect(text(".turn .progress")).toBe("Asking…");
    host(hostEvent("turn.started", id, { conversation_id: "conv-1" }));
    expect(text(".turn .progress")).toBe("Working… (Offline extractive (no AI model): quotes the page)");
    expect($(".turn .badge").hidden).toBe(false);
    host(hostEvent("context_usage", id));
    // The offline runtime has no model context to fill: no empty meter (a model's turn gets one).
    expect($(".turn .context-meter")).toBeNull();
    host(hostEvent("text_delta", id, { step: 1, index: 0, text: "Night " }));
    host(hostEvent("text_delta", id, { step: 1, index: 0, text: "trains" }));
    expect(text(".turn .answer")).toBe("Night trains");
    host(hostEvent("render_delta", id, { step: 1, start_index: 0, blocks: [para("Night trains are back.")] }));
    expect(text(".turn .answer")).toBe("Night trains are back.");
    expect(text(".turn .progress")).toBe("Writing the answer…");
    host(hostEvent("assistant", id, { conversation_id: "conv-1", step: 1, render: doc("Night trains run to Vienna. [1]"), citations: [], data: { price: "€49", seat: null } }));
    expect(text(".turn .answer > p")).toBe("Night trains run to Vienna. [1]");
    expect(text(".turn .answer .data-table")).toBe("price€49seatnot on the page");
    host(hostEvent("done", id, { stop_reason: "answered", status: "ok", stored: false }));
    expect($(".turn").getAttribute("aria-busy")).toBe("false");
    expect($(".turn .progress").hidden).toBe(true);
    expect($(".turn").dataset["stopReason"]).toBe("answered");
    expect(text(".turn .answer > p.notice:last-child")).toBe("The answer could not be saved to your history.");
    expect($(".turn .answer-actions")).not.toBeNull();
    expect($("#stop").hidden).toBe(true);
    expect(text("#runtime")).toContain("stayed on this computer");
    // The summarizer's patch follows `done`, inside the turn: it sets the conversation's first state.
    host(hostEvent("entity_patch", id, { conversation_id: "conv-1", patch: [{ op: "replace", path: "", value: { sessionId: "conv-1", current_understanding: { entities: [], dependencies: [] }, assumptions: [], expectations: [], tentative_hypotheses: [], items: [{ id: "turn:1", kind: "question", title: "Which trains?", status: "resolved", createdAt: "2026-11-24T10:00:00.000Z", updatedAt: "2026-11-24T10:00:00.000Z" }] } }] }));
    // It holds nothing open, assumed or known: no line under the answer.
    expect(($(".turn .agent-state") as HTMLElement).hidden).toBe(true);
    await new Promise((r) => setTimeout(r, 80));
    expect(text("#announcer")).toBe("Answer ready. Night trains run to Vienna. [1]");
    // The next question continues the conversation.
    askQuestionAndExpect("And to Berlin?", { conversation_id: "conv-1" });
  });

  it("shows streamed words as text, one paragraph per block, whole again after a redraw", () => {
    const id = askQuestion("Which trains?");
    host(hostEvent("render_delta", id, { step: 1, start_index: 0, blocks: [para("Title")] }));
    host(hostEvent("text_delta", id, { step: 1, index: 1, text: "Night <b>trains</b> " }));
    host(hostEvent("text_delta", id, { step: 1, index: 1, text: "are back." }));
    expect(text(".turn .streaming-text")).toBe("Night <b>trains</b> are back.");
    expect($(".turn .answer b")).toBeNull();
    // An earlier block's render_delta redraws the area: the words come back whole.
    host(hostEvent("render_delta", id, { step: 1, start_index: 0, blocks: [para("Title!")] }));
    expect($(".turn .streaming-text")).toBeNull();
    host(hostEvent("text_delta", id, { step: 1, index: 1, text: " More" }));
    expect(text(".turn .answer > :last-child")).toBe("Night <b>trains</b> are back. More");
    host(hostEvent("text_delta", id, { step: 1, index: 2, text: "Second" }));
    expect(document.querySelectorAll(".turn .streaming-text")).toHaveLength(1);
    expect($(".turn .streaming-text").dataset["index"]).toBe("2");
    expect(text(".turn .streaming-text")).toBe("Second");
  });

  it("takes back a streamed preview when the host resets it", () => {
    const id = askQuestion("Which trains?");
    host(hostEvent("turn.started", id));
    host(hostEvent("render_delta", id, { step: 1, start_index: 0, blocks: [para("A first try")] }));
    host(hostEvent("text_delta", id, { step: 1, index: 1, text: "and more" }));
    expect(text(".turn .answer")).toBe("A first tryand more");
    host(hostEvent("render_reset", id, { step: 1, reason: "retry" }));
    expect($(".turn .answer").childNodes).toHaveLength(0);
    host(hostEvent("render_delta", id, { step: 1, start_index: 0, blocks: [para("The second try")] }));
    expect(text(".turn .answer")).toBe("The second try");
  });

  it("moves a step's text into the step list when it proposed calls", () => {
    const id = askQuestion("Find the links");
    host(hostEvent("turn.started", id));
    host(hostEvent("assistant", id, { step: 1, render: doc("I will look at the links."), citations: [] }));
    host(toolCall(id, { step: 1, call_id: "call-1" }));
    expect($(".turn .answer").childNodes).toHaveLength(0);
    expect(text(".turn .steps .step-note")).toBe("I will look at the links.");
    host(agentState(id, "executing", "call-1"));
    expect($(".turn .step-item").dataset["state"]).toBe("running");
    expect(text(".turn .progress")).toBe("Working… (step 1)");
    host(hostEvent("tool_result", id, { step: 1, call_id: "call-1", name: "browser.get_selection_links", status: "ok", summary: "Found 2 links", result: null, error: null }));
    expect($(".turn .step-item").dataset["state"]).toBe("ok");
    host(hostEvent("assistant", id, { step: 2, render: doc("There are two links."), citations: [] }));
    host(hostEvent("done", id, { stop_reason: "answered", status: "ok", stored: true, steps: 2 }));
    expect(text(".turn .answer")).toBe("There are two links.");
    expect(text(".turn .steps .step-note")).toBe("I will look at the links.");
  });

  it("shows the last step's text as the answer when the loop stopped after it proposed calls", () => {
    const id = askQuestion("Buy it");
    host(hostEvent("turn.started", id));
    host(hostEvent("assistant", id, { step: 1, render: doc("I can buy it."), citations: [] }));
    host(toolCall(id, { step: 1, call_id: "call-1" }));
    host(hostEvent("done", id, { stop_reason: "step_cap", status: "ok", stored: true, steps: 1 }));
    expect(text(".turn .answer")).toBe("I can buy it.");
    expect($(".turn .steps .step-note")).toBeNull();
  });

  it("asks for approval, sends the user's answer and shows how the host took it", () => {
    const id = askQuestion("Buy it");
    host(hostEvent("turn.started", id));
    host(toolCall(id, { call_id: "call-9", name: "browser.click", decision: "ask", reason: "COMMIT_ACTION", arguments: { handleId: "laika-2" }, expires_in_ms: 120_000, target: { handle_id: "laika-2", role: "button", text: "Buy" } }));
    host(agentState(id, "waiting_for_approval", "call-9"));
    expect(text(".turn .progress")).toBe("Waiting for your approval…");
    const approve = [...document.querySelectorAll<HTMLButtonElement>(".approval-card button")].find((b) => b.textContent === "Approve");
    approve?.click();
    expect(port.take()).toEqual([{ kind: "approval", call_id: "call-9", approved: true }]);
    port.emit({ kind: "approval.answer", call_id: "call-9", accepted: true, approved: true });
    expect($(".approval-card button")).toBeNull();
    expect(text(".approval-card")).toContain("Approved");
  });

  it("says why a turn failed, and ends it", () => {
    const id = askQuestion("Which trains?");
    host(hostEvent("turn.started", id));
    host(hostError(id, "RUNTIME_TIMEOUT", "the model did not answer"));
    expect(text(".turn .answer .error-card")).toContain("Use offline");
    expect($(".turn").getAttribute("aria-busy")).toBe("false");
    expect($("#stop").hidden).toBe(true);
    const said = text(".turn .answer");
    expect(said.length).toBeGreaterThan(0);
    // A `done` may still follow: accepted quietly, no second reason.
    host(hostEvent("done", id, { stop_reason: "failed", status: "failed", stored: false }));
    expect($(".turn .stop-reason")).toBeNull();
    expect(text(".turn .answer")).toBe(said);

    const second = askQuestion("Again?");
    port.emit({ kind: "turn.failed", turn_id: second, code: "NO_PAGE", message: "Open a web page first." });
    expect(text(".turn:last-child .answer")).toBe("Open a web page first.");
    expect($("#stop").hidden).toBe(true);
  });

  it("stops a running turn through the host, and an unheard one at once", () => {
    const id = askQuestion("Buy it");
    host(hostEvent("turn.started", id));
    host(toolCall(id, { call_id: "call-5", decision: "ask", reason: "COMMIT_ACTION", expires_in_ms: 120_000 }));
    $("#stop").click();
    expect(port.take()).toEqual([{ kind: "cancel", turn_id: id }]);
    expect(text(".turn .progress")).toBe("Stopping…");
    expect($(".turn .step-item").dataset["state"]).toBe("stopped");
    host(hostError(id, "CANCELLED", "You stopped this turn."));
    host(hostEvent("done", id, { stop_reason: "cancelled", status: "cancelled", stored: true }));
    expect($(".turn .answer .notice")).not.toBeNull();
    expect($("#stop").hidden).toBe(true);

    const unheard = askQuestion("Hello?");
    $("#stop").click();
    expect(port.take()).toEqual([{ kind: "cancel", turn_id: unheard }]);
    expect(text(".turn:last-child .answer")).toBe("Stopped.");
    expect($("#stop").hidden).toBe(true);
  });

  it("always ends a turn: the background went away, or a Stop was never confirmed", () => {
    vi.useFakeTimers();
    try {
      const id = askQuestion("Which trains run at night?");
      host(hostEvent("turn.started", id));
      host(hostEvent("text_delta", id, { step: 1, index: 0, text: "Night " }));
      port.drop();
      expect(text(".turn .error-card p")).toBe("Laika stopped; ask again.");
      expect(text(".turn .error-card button")).toBe("Retry");
      expect($("#stop").hidden).toBe(true);
      vi.advanceTimersByTime(600);
      const next = fake.connects.at(-1);
      if (!next) throw new Error("the sidebar did not reconnect");
      port = next;
      port.take();
      // Retry asks the same again; the composer is free.
      ($(".turn .error-card button") as HTMLButtonElement).click();
      const again = port.take().find((m) => (m as { kind: string }).kind === "ask") as { turn_id: string } | undefined;
      expect(again).toMatchObject({ text: "Which trains run at night?" });
      // The host never confirms a Stop: the turn ends anyway.
      host(hostEvent("turn.started", again?.turn_id ?? ""));
      $("#stop").click();
      expect(text(".turn:last-child .progress")).toBe("Stopping…");
      vi.advanceTimersByTime(5_000);
      expect(text(".turn:last-child .answer")).toBe("Stopped.");
      expect($("#stop").hidden).toBe(true);
    } finally {
      vi.useRealTimers();
    }
  });

  it("offers Retry and an offline answer for this question when the model's answer was unusable", () => {
    const id = askQuestion("Which trains run at night?");
    host(hostEvent("turn.started", id));
    host(hostError(id, "INVALID_MODEL_OUTPUT", "the model answered, but it is not JSON"));
    const buttons = [...document.querySelectorAll(".turn .error-card button")].map((b) => b.textContent);
    expect(buttons).toEqual(["Retry", "Use offline"]);
    ([...document.querySelectorAll<HTMLButtonElement>(".turn .error-card button")].at(-1) as HTMLButtonElement).click();
    const sent = port.take();
    // Offline this once: no config.set, the ask itself says so.
    expect(sent.some((m) => (m as { kind: string; request?: { type: string } }).request?.type === "config.set")).toBe(false);
    expect(sent.find((m) => (m as { kind: string }).kind === "ask")).toMatchObject({ text: "Which trains run at night?", offline: true });
  });

  it("asks again and puts the question back from the answer's actions", () => {
    const id = askQuestion("Which trains run at night?");
    host(hostEvent("assistant", id, { step: 1, render: doc("To Vienna."), citations: [] }));
    host(hostEvent("done", id, { stop_reason: "answered", status: "ok", stored: true }));
    $(".act-regenerate").click();
    const again = port.take().find((m) => (m as { kind: string }).kind === "ask");
    expect(again).toMatchObject({ kind: "ask", task: "web.answer", text: "Which trains run at night?" });
    expect(document.querySelectorAll(".turn")).toHaveLength(2);
    $(".act-edit").click();
    expect(($("#question") as HTMLTextAreaElement).value).toBe("Which trains run at night?");
  });

  it("offers a summary's suggested questions as buttons; one asks the next question, only the newest answer's can", () => {
    const id = askQuestion("What is on this page?");
    const follow_ups = ["How long does the trip take?", "Is there a sleeper cabin?"];
    host(hostEvent("assistant", id, { conversation_id: "conv-1", step: 1, render: doc("Night trains run to Vienna."), citations: [], follow_ups }));
    host(hostEvent("done", id, { stop_reason: "answered", status: "ok", stored: true }));
    const group = $(".turn .answer .follow-ups");
    expect(group.getAttribute("role")).toBe("group");
    expect(group.getAttribute("aria-label")).toBe("Suggested questions");
    const buttons = Array.from(group.querySelectorAll("button")) as HTMLButtonElement[];
    expect(buttons.map((b) => [b.type, b.textContent])).toEqual(follow_ups.map((q) => ["button", q]));
    buttons[1]?.click();
    const ask = port.take().find((m) => (m as { kind: string }).kind === "ask");
    expect(ask).toMatchObject({ kind: "ask", task: "web.answer", text: "Is there a sleeper cabin?", mode: "inform", conversation_id: "conv-1" });
    expect(buttons.every((b) => b.disabled)).toBe(true);
    expect(buttons[1]?.classList.contains("chosen")).toBe(true);
    const turns = document.querySelectorAll(".turn");
    expect(turns).toHaveLength(2);
    expect(turns[1]?.querySelector(".user")?.textContent).toBe("Is there a sleeper cabin?");
    // A newer answer's suggestions can be asked; an older one's, never asked, cannot.
    const second = (ask as { turn_id: string }).turn_id;
    host(hostEvent("assistant", second, { conversation_id: "conv-1", step: 1, render: doc("Yes."), citations: [], follow_ups: ["Does it cost extra?"] }));
    host(hostEvent("done", second, { stop_reason: "answered", status: "ok", stored: true }));
    const third = askQuestion("Something else");
    host(hostEvent("assistant", third, { conversation_id: "conv-1", step: 1, render: doc("Yes."), citations: [], follow_ups: ["And the price?"] }));
    const states = Array.from(document.querySelectorAll(".follow-ups button")).map((b) => [b.textContent, (b as HTMLButtonElement).disabled]);
    expect(states).toEqual([
      ["How long does the trip take?", true],
      ["Is there a sleeper cabin?", true],
      ["Does it cost extra?", true],
      ["And the price?", false],
    ]);
  });

  it("takes one turn at a time", () => {
    askQuestion("First");
    ($("#question") as HTMLTextAreaElement).value = "Second";
    ($("#composer") as HTMLFormElement).requestSubmit();
    expect(port.take().filter((m) => (m as { kind: string }).kind === "ask")).toEqual([]);
    expect(text("#status")).toBe("Laika is still answering. Wait for it, or press Stop.");
    expect(document.querySelectorAll(".turn")).toHaveLength(1);
  });

  it("gives up on a turn the host never answers", () => {
    vi.useFakeTimers();
    const id = askQuestion("Anyone?");
    vi.advanceTimersByTime(20_000);
    expect(port.take()).toEqual([{ kind: "cancel", turn_id: id }]);
    expect(text(".turn .answer")).toContain("did not answer within 20 seconds");
    expect($("#stop").hidden).toBe(true);
  });

  it("routes the replies of other requests to whoever asked", async () => {
    $("#nav-history").click();
    const [req] = port.take() as { kind: string; request_id: string; request: { type: string } }[];
    expect(req).toMatchObject({ kind: "host", request: { type: "history.list" } });
    port.emit({ kind: "request.failed", request_id: req?.request_id, message: "The Laika app is not installed" });
    await new Promise((r) => setTimeout(r, 0));
    expect(document.getElementById("view-history")?.textContent).toContain("The Laika app is not installed");
  });

  it("writes an approved export and says how it went", async () => {
    port.emit({ kind: "share", call_id: "call-7", request: { filename: "notes.md", mime: "text/markdown", content: "# Notes", target: "file" } });
    await new Promise((r) => setTimeout(r, 0));
    expect(port.take()).toEqual([{ kind: "shared", call_id: "call-7", ok: true, message: "Saved notes.md (7 characters) as a download" }]);
  });
});

function askQuestionAndExpect(question: string, expected: Record<string, unknown>): void {
  ($("#question") as HTMLTextAreaElement).value = question;
  ($("#composer") as HTMLFormElement).requestSubmit();
  const ask = port.take().find((m) => (m as { kind: string }).kind === "ask");
  expect(ask).toMatchObject(expected);
}
