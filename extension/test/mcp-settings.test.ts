import { describe, expect, it } from "vitest";
import type { McpServerView, ToolCallMessage } from "../src/generated/wire";
import type { SidebarHostRequest } from "../src/shared/messages";
import type { RoutedHostMessage } from "../src/shared/protocol";
import { McpSettings, serverState } from "../src/sidebar/mcp-settings";
import { StepList, describeCall, mcpTool } from "../src/sidebar/steps";
import { htmlDoc } from "./helpers";

const reply = (msg: object) => ({ id: "h", reply_to: "r", ...msg }) as unknown as RoutedHostMessage;
const tick = () => new Promise((r) => setTimeout(r, 0));

const notes = (trusted: boolean): McpServerView => ({
  name: "notes",
  transport: "stdio",
  endpoint: "/usr/bin/notes-mcp",
  trusted,
  state: "connected",
  tools: [
    { name: "mcp.notes.lookup", description: "Looks a note up.", read_only: true, offered: true },
    { name: "mcp.notes.append", description: "", read_only: false, offered: true },
  ],
});
const gone: McpServerView = {
  name: "gone",
  transport: "http",
  endpoint: "http://127.0.0.1:9/mcp",
  trusted: false,
  state: "error",
  error: { code: "MCP_UNAVAILABLE", message: "the MCP handshake failed" },
  tools: [],
};

describe("Settings → Tool servers (MCP)", () => {
  it("lists the servers with their state and tools, tests one, and saves the trust", async () => {
    const asked: SidebarHostRequest[] = [];
    let trusted = false;
    const request = async (req: SidebarHostRequest): Promise<RoutedHostMessage> => {
      asked.push(req);
      if (req.type === "mcp.servers") return reply({ type: "mcp.servers.result", servers: [notes(trusted), gone] });
      if (req.type === "config.set") {
        trusted = req.values["mcp.servers.notes.trusted"] === true;
        return reply({ type: "config.set.result" });
      }
      throw new Error(`unexpected ${req.type}`);
    };
    const view = new McpSettings({ request });
    document.body.append(view.el);
    await view.load();
    const items = Array.from(view.el.querySelectorAll<HTMLElement>(".mcp-server"));
    expect(items.map((i) => i.dataset.server)).toEqual(["notes", "gone"]);
    expect(items[0]?.textContent).toContain("connected · 2 tools");
    expect(items[0]?.textContent).toContain("mcp.notes.lookup read-only");
    expect(items[1]?.textContent).toContain("not connected: the MCP handshake failed (MCP_UNAVAILABLE)");

    const box = document.getElementById("mcp-trusted-notes") as HTMLInputElement;
    expect(box.checked).toBe(false);
    box.checked = true;
    box.dispatchEvent(new Event("change"));
    await tick();
    await tick();
    expect(asked.at(-1)).toEqual({ type: "config.set", values: { "mcp.servers.notes.trusted": true } });
    expect(view.el.textContent).toContain("Saved: notes is trusted.");

    const test = Array.from(items[1]?.querySelectorAll("button") ?? []).find((b) => b.textContent === "Test connection");
    test?.click();
    await tick();
    expect(asked.at(-1)).toEqual({ type: "mcp.servers", test: "gone" });
  });

  it("says where a server is and why it is not connected", () => {
    expect(serverState(notes(false))).toBe("Program: /usr/bin/notes-mcp · connected · 2 tools");
    expect(serverState(gone)).toContain("HTTP: http://127.0.0.1:9/mcp · not connected");
  });
});

describe("an MCP call's approval card", () => {
  it("names the tool and the server, and shows what is sent", () => {
    expect(mcpTool("mcp.notes.append")).toEqual({ server: "notes", tool: "append" });
    expect(mcpTool("mcp.notes")).toBeNull();
    expect(describeCall("mcp.notes.append", {}, null)).toBe("Call “append” on the MCP server “notes”");
    const doc = htmlDoc("<main></main>");
    const steps = new StepList(doc, () => {}, () => 0);
    doc.body.append(steps.el);
    const msg: ToolCallMessage = {
      type: "tool_call", id: "e1", reply_to: "turn-1", conversation_id: "c", turn: 1, step: 1, call_id: "r:0", index: 0,
      name: "mcp.notes.append", arguments: { text: "buy milk" }, decision: "ask", reason: "CALLS_INTEGRATION",
      detail: "mcp.notes.append sends data from this conversation to the MCP server notes.", executor: "host",
      digest: "0".repeat(64), target: null, expires_in_ms: 120_000, evidence: null, user_asked: false,
    };
    steps.toolCall(msg);
    const card = steps.el.querySelector(".approval-card");
    expect(card?.textContent).toContain("Laika wants to: Call “append” on the MCP server “notes”");
    expect(card?.querySelector(".mcp-arguments")?.textContent).toBe('{"text":"buy milk"}');
    expect(card?.textContent).toContain("sends data from this conversation");
  });
});
