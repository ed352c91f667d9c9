/**
 * The chat header's runtime switcher: the runtime in use and the others
 * the config kept (`saved_runtimes`), each by its model and kind. Choosing
 * one switches Settings to it with one `config.set` of the kind: the host
 * gives that kind back its own server, model, profile and key.
 */
import type { ConfigView, RuntimeInfo } from "../generated/wire.js";
import type { SidebarHostRequest } from "../shared/messages.js";
import type { RoutedHostMessage } from "../shared/protocol.js";
import { $, announce, h } from "./dom.js";
import { expectReply } from "./history.js";
import { kindName, type RuntimeSettings } from "./settings.js";

export interface SwitcherDeps {
  request(req: SidebarHostRequest): Promise<RoutedHostMessage>;
  /** The switch was saved: new turns use `runtime`. */
  saved(runtime: RuntimeInfo, config: ConfigView): void;
  failed(message: string): void;
}

/** A runtime as the switcher names it: its model first, then what serves it. */
export function choiceLabel(r: RuntimeSettings): string {
  if (r.kind === "builtin") return "Offline (no AI model)";
  return `${r.model ?? "no model chosen"} · ${kindName(r.kind)}`;
}

/** The choices: the runtime in use, the kept ones, and always the offline one. */
export function choices(config: ConfigView): { value: string; label: string }[] {
  const all = [config.runtime, ...config.saved_runtimes];
  if (!all.some((r) => r.kind === "builtin")) all.push({ kind: "builtin", base_url: null, model: null, profile: null, api_key_set: false });
  return all.map((r) => ({ value: r.kind, label: choiceLabel(r) }));
}

export class RuntimeSwitcher {
  private readonly select = $("runtime-switch") as HTMLSelectElement;
  private current = "";

  constructor(private readonly deps: SwitcherDeps) {
    this.select.addEventListener("change", () => void this.choose(this.select.value));
  }

  /** Asks the host for the config and shows it. */
  async refresh(): Promise<void> {
    try {
      this.show(expectReply(await this.deps.request({ type: "config.get" }), "config.get.result").config);
    } catch {
      // The header keeps what it showed; Settings says what is wrong.
    }
  }

  show(config: ConfigView): void {
    this.select.replaceChildren();
    for (const c of choices(config)) {
      const opt = h("option", undefined, c.label) as HTMLOptionElement;
      opt.value = c.value;
      this.select.append(opt);
    }
    this.current = config.runtime.kind;
    this.select.value = this.current;
    this.select.hidden = false;
  }

  private async choose(kind: string): Promise<void> {
    if (kind === this.current) return;
    try {
      const saved = expectReply(await this.deps.request({ type: "config.set", values: { "runtime.kind": kind } }), "config.set.result");
      this.show(saved.config);
      this.deps.saved(saved.runtime, saved.config);
      announce(`New turns use ${saved.runtime.label}`);
    } catch (e) {
      this.select.value = this.current;
      this.deps.failed(e instanceof Error ? e.message : String(e));
    }
  }
}
