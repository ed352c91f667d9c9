/**
 * Settings → Tool servers (MCP): the servers config.toml names under
 * `[mcp.servers.<name>]`, each with its state (connected, or the coded
 * error), its tools (read-only or not) and "Test connection"; the trusted
 * box is saved to config.toml (`mcp.servers.<name>.trusted`). Servers are
 * added in the file only: a page or a model can never add one.
 */
import type { McpServerView } from "../generated/wire.js";
import type { SidebarHostRequest } from "../shared/messages.js";
import type { RoutedHostMessage } from "../shared/protocol.js";
import { announce, button, h, settingsSection } from "./dom.js";
import { errorAdvice } from "./errors.js";
import { expectReply } from "./history.js";

export interface McpSettingsDeps {
  request(req: SidebarHostRequest): Promise<RoutedHostMessage>;
}

function failure(e: unknown): string {
  return e instanceof Error ? e.message : String(e);
}

function checkReply<T extends RoutedHostMessage["type"]>(msg: RoutedHostMessage, type: T): ReturnType<typeof expectReply<T>> {
  if (msg.type === "error") throw new Error(errorAdvice(msg.code, msg.message));
  return expectReply(msg, type);
}

/** One line about a server: where it is and what state it is in. */
export function serverState(s: McpServerView): string {
  const where = `${s.transport === "http" ? "HTTP" : "Program"}: ${s.endpoint}`;
  if (s.state === "connected") {
    const n = s.tools.length;
    return `${where} · connected · ${n === 1 ? "1 tool" : `${n} tools`}`;
  }
  return `${where} · not connected: ${s.error ? `${s.error.message} (${s.error.code})` : "unknown error"}`;
}

export class McpSettings {
  readonly el: HTMLElement;
  private readonly list: HTMLElement;
  private readonly message: HTMLElement;

  constructor(private readonly deps: McpSettingsDeps) {
    this.el = settingsSection(
      "mcp-servers",
      "mcp-title",
      "Tool servers (MCP)",
      "Servers are added in config.toml under [mcp.servers.<name>]. Every call asks you first, unless the tool says it only reads and you trust its server.",
    );
    this.list = h("ul", "mcp-list");
    this.list.setAttribute("aria-label", "MCP servers");
    this.message = h("p", "hint");
    this.message.id = "mcp-message";
    this.message.setAttribute("role", "status");
    this.el.append(this.list, this.message);
  }

  async load(test?: string): Promise<void> {
    this.message.textContent = test ? `Testing ${test}…` : "";
    try {
      const req: SidebarHostRequest = test ? { type: "mcp.servers", test } : { type: "mcp.servers" };
      const reply = checkReply(await this.deps.request(req), "mcp.servers.result");
      this.show(reply.servers);
      if (test) {
        const s = reply.servers.find((x) => x.name === test);
        this.message.textContent = s ? `${test}: ${s.state === "connected" ? "connected" : "not connected"}.` : "";
        announce(this.message.textContent);
      }
    } catch (e) {
      this.message.textContent = failure(e);
    }
  }

  private async setTrusted(name: string, trusted: boolean, box: HTMLInputElement): Promise<void> {
    box.disabled = true;
    try {
      checkReply(await this.deps.request({ type: "config.set", values: { [`mcp.servers.${name}.trusted`]: trusted } }), "config.set.result");
      this.message.textContent = `Saved: ${name} is ${trusted ? "trusted" : "not trusted"}.`;
      announce(this.message.textContent);
    } catch (e) {
      box.checked = !trusted;
      this.message.textContent = failure(e);
    } finally {
      box.disabled = false;
    }
  }

  private show(servers: McpServerView[]): void {
    if (servers.length === 0) {
      this.list.replaceChildren(h("li", "hint", "No MCP server is configured."));
      return;
    }
    this.list.replaceChildren(
      ...servers.map((s) => {
        const item = h("li", `mcp-server ${s.state}`);
        item.dataset.server = s.name;
        const state = h("p", "mcp-state", serverState(s));
        const id = `mcp-trusted-${s.name}`;
        const box = h("input") as HTMLInputElement;
        box.type = "checkbox";
        box.id = id;
        box.checked = s.trusted;
        box.addEventListener("change", () => void this.setTrusted(s.name, box.checked, box));
        const trust = h("label", "mcp-trust") as HTMLLabelElement;
        trust.htmlFor = id;
        trust.append(box, " Trusted: its read-only tools run without asking");
        const tools = h("ul", "mcp-tools");
        for (const t of s.tools) {
          const line = h("li", t.offered ? undefined : "refused", t.name);
          if (t.read_only) line.append(" ", h("span", "badge", "read-only"));
          if (t.refused) line.append(" ", h("span", "hint", `not offered: ${t.refused}`));
          if (t.description) line.title = t.description;
          tools.append(line);
        }
        const test = button("Test connection", () => void this.load(s.name));
        item.append(h("strong", undefined, s.name), state, trust, tools, test);
        return item;
      }),
    );
  }
}
