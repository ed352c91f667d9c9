import fs from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import type { AssistantMessage, DoneMessage, ToolCallMessage, TurnMessage } from "../src/generated/wire";
import { checkExtensionMessage, checkHostMessage } from "../src/shared/validate";

const uuid = "4c85cf9b-d2c8-4b09-9766-9f8cf939db44";

describe("schema validation of host messages", () => {
  it("accepts every event of the host's replay golden", () => {
    const file = path.join(__dirname, "..", "..", "tests", "replay", "demo.expected.ndjson");
    const lines = fs.readFileSync(file, "utf8").split("\n").filter(Boolean);
    expect(lines.length).toBeGreaterThan(5);
    for (const line of lines) {
      const r = checkHostMessage(JSON.parse(line));
      expect(r.ok ? "" : `${r.error} in ${line.slice(0, 120)}`).toBe("");
    }
  });

  it("accepts a tool call and a part", () => {
    const tool = {
      type: "tool_call", id: uuid, reply_to: "turn-1", conversation_id: uuid, turn: 1, step: 1, call_id: `${uuid}:0`, index: 0,
      name: "browser.click", arguments: { handleId: "laika-3" }, decision: "ask", reason: "COMMIT_ACTION", detail: "Confirm.",
      executor: "page", digest: "0".repeat(64), target: { handle_id: "laika-3", role: "button", text: "Confirm" }, expires_in_ms: 120000,
      evidence: "commit_word", user_asked: false,
    };
    expect(checkHostMessage(tool).ok).toBe(true);
    const part = { type: "part", id: uuid, part_of: uuid, index: 0, count: 2, data: "{" };
    expect(checkHostMessage(part).ok).toBe(true);
  });

  it("rejects unknown types, wrong decisions, extra fields and requests", () => {
    const pong = { type: "pong", id: uuid, reply_to: "ping-1" };
    expect(checkHostMessage(pong).ok).toBe(true);
    expect(checkHostMessage({ ...pong, type: "pwned" }).ok).toBe(false);
    expect(checkHostMessage({ ...pong, extra: 1 }).ok).toBe(false);
    expect(checkHostMessage({ ...pong, id: "not-a-uuid" }).ok).toBe(false);
    expect(checkHostMessage({ type: "ping", id: "ping-1" }).ok).toBe(false);
    const tool = { type: "tool_call", id: uuid, reply_to: "t", call_id: "c", index: 0, name: "browser.click", arguments: null, decision: "maybe", reason: "X", detail: "" };
    expect(checkHostMessage(tool).ok).toBe(false);
    expect(checkHostMessage("text").ok).toBe(false);
    expect(checkHostMessage(null).ok).toBe(false);
  });

  it("rejects an assistant render with raw HTML nodes", () => {
    const assistant = {
      type: "assistant", id: uuid, reply_to: "turn-1", conversation_id: uuid, turn: 1, step: 1, response_id: uuid, title: "t",
      render: { type: "doc", children: [{ type: "paragraph", children: [{ type: "text", text: "ok" }] }] },
      citations: [], data: null,
    };
    const ok = checkHostMessage(assistant);
    expect(ok.ok ? "" : ok.error).toBe("");
    const bad = { ...assistant, render: { type: "doc", children: [{ type: "html", html: "<script>" }] } };
    expect(checkHostMessage(bad).ok).toBe(false);
    const js = { ...assistant, render: { type: "doc", children: [{ type: "paragraph", children: [{ type: "link", href: "javascript:alert(1)", children: [] }] }] } };
    expect(checkHostMessage(js).ok).toBe(false);
  });

  it("checks the extension's own requests", () => {
    expect(checkExtensionMessage({ type: "hello", id: "h1", protocol: { name: "laika.wire", version: 1 } }).ok).toBe(true);
    expect(checkExtensionMessage({ type: "hello", id: "h1" }).ok).toBe(false);
    expect(checkExtensionMessage({ type: "history.list", id: "x", limt: 3 }).ok).toBe(false);
  });

  it("names the error of the message its type selects", () => {
    const bad = { type: "assistant", id: uuid, reply_to: "t", conversation_id: uuid, turn: 1, step: 1, response_id: uuid, title: "t", render: { type: "doc", children: [{ type: "html" }] }, citations: [], data: null };
    const r = checkHostMessage(bad);
    expect(r.ok ? "" : r.error).toContain("/render/children/0/type");
    const extra = checkHostMessage({ type: "pong", id: uuid, reply_to: "p", extra: 1 });
    expect(extra.ok ? "" : extra.error).toContain("additional properties");
  });

  it("accepts what the generated types describe", () => {
    const runtime = { kind: "builtin", model: "m", offline: true, label: "Offline" };
    const assistant: AssistantMessage = {
      type: "assistant", id: uuid, reply_to: "turn-1", conversation_id: uuid, turn: 1, step: 1, response_id: uuid, title: "t",
      render: { type: "doc", children: [{ type: "list", ordered: false, items: [{ type: "list_item", children: [{ type: "code_block", language: "rust", text: "x" }] }] }] },
      citations: [{ doc_id: "doc:web:summary", quote: "q", verified: false }],
      data: { price: null },
    };
    const tool: ToolCallMessage = {
      type: "tool_call", id: uuid, reply_to: "turn-1", conversation_id: uuid, turn: 1, step: 1, call_id: `${uuid}:0`, index: 0,
      name: "browser.scroll", arguments: null, decision: "allow", reason: "REVERSIBLE", detail: "Scrolling can be undone.",
      executor: "page", digest: "a".repeat(64), target: null, expires_in_ms: null, evidence: null, user_asked: false,
    };
    const done: DoneMessage = {
      type: "done", id: uuid, reply_to: "turn-1", conversation_id: uuid, turn: 1, request_id: uuid, status: "cancelled",
      error_code: "CANCELLED", runtime, stored: true, steps: 1, stop_reason: "cancelled",
      timings: { pack_ms: 1, runtime_ms: 2, validate_ms: 0, store_ms: 0.5, tools_ms: 0, total_ms: 3.5 },
    };
    for (const msg of [assistant, tool, done]) {
      const r = checkHostMessage(msg);
      expect(r.ok ? "" : `${msg.type}: ${r.error}`).toBe("");
    }
    const turn: TurnMessage = {
      type: "turn", id: "turn-1", message: { text: "hi" }, task: { name: "web.answer" },
      observation: { summary: { doc_type: "web.observation.summary.v1", url: "https://example.com/", title: "t", text: "x" } },
    };
    expect(checkExtensionMessage(turn).ok).toBe(true);
  });
});
