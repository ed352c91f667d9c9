/**
 * The Settings view: model servers found on this computer (kind, profile,
 * models, context window), the runtime form (kind, base URL, profile, a
 * model picker filled from the chosen server's list, the API key) and
 * "Test connection" with what came back. The API key is typed here and sent
 * once; the host never sends it back, only whether one is set. The internal
 * `scripted` runtime (and `command`) is never offered.
 */
import type { ConfigTestResultMessage, ConfigView, ModelServer, RuntimeInfo } from "../generated/wire.js";
import type { SidebarHostRequest } from "../shared/messages.js";
import type { RoutedHostMessage } from "../shared/protocol.js";
import { $, announce, button, h } from "./dom.js";
import { errorAdvice } from "./errors.js";
import { expectReply } from "./history.js";

export interface SettingsDeps {
  request(req: SidebarHostRequest): Promise<RoutedHostMessage>;
  /** Settings were saved: new turns use `runtime`. */
  saved(runtime: RuntimeInfo, config: ConfigView): void;
}

export type RuntimeSettings = ConfigView["runtime"];

/** What the config holds for `kind`: the runtime in use, or one kept from before. */
export function runtimeFor(config: ConfigView, kind: string): RuntimeSettings | undefined {
  return [config.runtime, ...config.saved_runtimes].find((r) => r.kind === kind);
}

/**
 * The form after choosing `kind`: that kind's own settings when the config
 * kept them, else what the form had (a kind used for the first time starts
 * from the fields shown, as the host carries them over).
 */
export function formForKind(form: FormState, config: ConfigView | null, kind: string): FormState {
  const known = config ? runtimeFor(config, kind) : undefined;
  if (!known || kind === "builtin") return { ...form, kind };
  return { ...form, kind, baseUrl: known.base_url ?? "", profile: known.profile ?? "", model: known.model ?? "" };
}

/** What the form holds, as text (the API key as typed, never the stored one). */
export interface FormState {
  kind: string;
  baseUrl: string;
  profile: string;
  model: string;
  apiKey: string;
  clearKey: boolean;
}

export type ConfigSetValues = Extract<SidebarHostRequest, { type: "config.set" }>["values"];

export const SERVER_NAMES: Record<ModelServer["kind"], string> = {
  ollama: "Ollama",
  llama_cpp: "llama.cpp (llama-server)",
  vllm: "vLLM",
  sglang: "SGLang",
  lm_studio: "LM Studio",
  mlx: "MLX (mlx_lm.server)",
  open_ai_compatible: "OpenAI-compatible server",
};

const KIND_NAMES: Record<string, string> = {
  builtin: "Offline extractive (no AI model)",
  openai: "OpenAI-compatible server",
  ollama: "Ollama",
  anthropic: "Anthropic API",
};

/** A runtime kind in words. */
export function kindName(kind: string): string {
  return KIND_NAMES[kind] ?? kind;
}

/** The runtime choices: the offered kinds, plus the one in use when it is not offered (shown, not choosable). */
export function kindOptions(config: ConfigView): { value: string; label: string; disabled: boolean }[] {
  const options = config.offered_kinds.map((k) => ({ value: k, label: KIND_NAMES[k] ?? k, disabled: false }));
  const current = config.runtime.kind;
  if (!config.offered_kinds.includes(current)) {
    options.unshift({ value: current, label: `${current} (set by the config file)`, disabled: true });
  }
  return options;
}

/** One line about a found server: what it is, where, its profile, models and context window. */
export function serverSummary(s: ModelServer): string {
  const parts = [`${SERVER_NAMES[s.kind]}${s.guessed ? " (probably)" : ""} at ${s.base_url}`];
  parts.push(s.profile ? `profile ${s.profile}` : "profile unknown: pick one below");
  const n = s.models.length;
  parts.push(n === 0 ? "no models listed" : n === 1 ? "1 model" : `${n} models`);
  if (s.context_window) parts.push(`context ${s.context_window.toLocaleString("en-US")} tokens`);
  return parts.join(" · ");
}

/** The form after picking `server`: its kind, URL, profile and first model (the user's model if the server has it). */
export function formForServer(form: FormState, server: ModelServer): FormState {
  return {
    ...form,
    kind: server.runtime,
    baseUrl: server.base_url,
    profile: server.profile ?? "",
    model: server.models.includes(form.model) ? form.model : (server.models[0] ?? ""),
  };
}

/**
 * The `config.set` / `config.test` values for the form. The key is sent only
 * when typed (an empty field keeps the stored one) or removed; the profile
 * only means something to `openai`.
 */
export function formValues(form: FormState): ConfigSetValues {
  const nullable = (v: string) => (v.trim() ? v.trim() : null);
  const values: ConfigSetValues = {
    "runtime.kind": form.kind || null,
    "runtime.base_url": nullable(form.baseUrl),
    "runtime.model": nullable(form.model),
  };
  if (form.kind === "openai") values["runtime.profile"] = nullable(form.profile);
  if (form.clearKey) values["runtime.api_key"] = null;
  else if (form.apiKey.trim()) values["runtime.api_key"] = form.apiKey.trim();
  return values;
}

/** What the test gave, in words: a headline and the details (the JSON that came back, or why not). */
export function testResultText(r: ConfigTestResultMessage): { ok: boolean; headline: string; details: string[] } {
  if (r.ok) {
    const details = r.answer === undefined ? [] : [`It answered: ${JSON.stringify(r.answer)}`];
    return { ok: true, headline: `Connected. ${r.message}`, details };
  }
  const details: string[] = [];
  if (r.error) details.push(errorAdvice(r.error.code, r.error.message));
  if (r.raw) details.push(`It answered: ${r.raw}`);
  return { ok: false, headline: `Not working: ${r.runtime.label}`, details };
}

export class SettingsView {
  private servers: ModelServer[] = [];
  private config: ConfigView | null = null;
  private looked = false;
  private readonly kind = $("set-kind") as HTMLSelectElement;
  private readonly baseUrl = $("set-base-url") as HTMLInputElement;
  private readonly profile = $("set-profile") as HTMLSelectElement;
  private readonly modelPick = $("set-model-pick") as HTMLSelectElement;
  private readonly model = $("set-model") as HTMLInputElement;
  private readonly apiKey = $("set-api-key") as HTMLInputElement;
  private readonly clearKey = $("set-api-key-clear") as HTMLInputElement;
  private readonly message = $("settings-message");
  private readonly testResult = $("test-result");

  constructor(private readonly deps: SettingsDeps) {
    $("settings-form").addEventListener("submit", (e) => {
      e.preventDefault();
      void this.save();
    });
    $("discover").addEventListener("click", () => void this.discover());
    $("test-connection").addEventListener("click", () => void this.test());
    this.kind.addEventListener("change", () => this.setForm(formForKind(this.form(), this.config, this.kind.value)));
    this.baseUrl.addEventListener("input", () => this.fillModels());
    this.modelPick.addEventListener("change", () => {
      if (this.modelPick.value) this.model.value = this.modelPick.value;
    });
  }

  /** Loads the config in use, and looks for servers the first time: found without configuration. */
  async load(): Promise<void> {
    try {
      this.fill(expectReply(await this.deps.request({ type: "config.get" }), "config.get.result").config);
      this.message.textContent = "";
    } catch (e) {
      this.message.textContent = e instanceof Error ? e.message : String(e);
      return;
    }
    if (!this.looked) {
      this.looked = true;
      await this.discover();
    }
  }

  private form(): FormState {
    return {
      kind: this.kind.value,
      baseUrl: this.baseUrl.value,
      profile: this.profile.value,
      model: this.model.value,
      apiKey: this.apiKey.value,
      clearKey: this.clearKey.checked,
    };
  }

  private setForm(f: FormState): void {
    this.kind.value = f.kind;
    this.baseUrl.value = f.baseUrl;
    this.profile.value = f.profile;
    this.model.value = f.model;
    this.showFields();
  }

  private fill(config: ConfigView): void {
    this.kind.replaceChildren();
    for (const o of kindOptions(config)) {
      const opt = h("option", undefined, o.label) as HTMLOptionElement;
      opt.value = o.value;
      opt.disabled = o.disabled;
      this.kind.append(opt);
    }
    this.profile.replaceChildren();
    const auto = h("option", undefined, "generic (default)") as HTMLOptionElement;
    auto.value = "";
    this.profile.append(auto);
    for (const p of config.profiles) {
      if (p === "generic") continue;
      const opt = h("option", undefined, p) as HTMLOptionElement;
      opt.value = p;
      this.profile.append(opt);
    }
    this.config = config;
    this.apiKey.value = "";
    this.clearKey.checked = false;
    this.setForm({
      kind: config.runtime.kind || "builtin",
      baseUrl: config.runtime.base_url ?? "",
      profile: config.runtime.profile ?? "",
      model: config.runtime.model ?? "",
      apiKey: "",
      clearKey: false,
    });
    this.fillModels();
  }

  /** Whether the chosen kind has a stored key: it can be removed only then. */
  private showKeyState(kind: string): void {
    const keySet = (this.config ? runtimeFor(this.config, kind) : undefined)?.api_key_set === true;
    this.apiKey.placeholder = keySet ? "set (hidden): type a new key to replace it" : "not set";
    $("set-api-key-state").textContent = keySet
      ? "A key is set. Laika never shows it; it is kept only in the config file."
      : "No key is set. Local servers need none.";
    $("set-api-key-row").hidden = !keySet;
    if (!keySet) this.clearKey.checked = false;
  }

  /** Shows the fields the chosen kind has. */
  private showFields(): void {
    const kind = this.kind.value;
    const http = kind === "openai" || kind === "ollama" || kind === "anthropic";
    for (const id of ["set-base-url", "set-model", "set-api-key"]) {
      $(id).hidden = !http;
      const label = document.querySelector(`label[for="${id}"]`) as HTMLElement | null;
      if (label) label.hidden = !http;
    }
    $("set-api-key-state").hidden = !http;
    this.showKeyState(kind);
    if (!http) $("set-api-key-row").hidden = true;
    this.profile.hidden = kind !== "openai";
    ($("set-profile-label") as HTMLElement).hidden = kind !== "openai";
    this.fillModels();
  }

  /** The model picker: the models of the found server at the form's URL, if any. */
  private fillModels(): void {
    const server = this.servers.find((s) => s.base_url === this.baseUrl.value.trim());
    const models = server?.models ?? [];
    this.modelPick.replaceChildren();
    const show = models.length > 0 && !this.model.hidden;
    this.modelPick.hidden = $("set-model-pick-label").hidden = !show;
    if (!show) return;
    for (const m of models) {
      const opt = h("option", undefined, m) as HTMLOptionElement;
      opt.value = m;
      this.modelPick.append(opt);
    }
    if (models.includes(this.model.value)) this.modelPick.value = this.model.value;
  }

  async discover(): Promise<void> {
    const status = $("discover-status");
    const list = $("discover-list");
    status.textContent = "Looking for model servers on this computer…";
    list.replaceChildren();
    try {
      const found = expectReply(await this.deps.request({ type: "config.discover" }), "config.discover.result");
      this.servers = found.servers;
      status.textContent = found.servers.length
        ? `Found ${found.servers.length === 1 ? "1 model server" : `${found.servers.length} model servers`}.`
        : found.ports.length
          ? `No model server answered on ports ${found.ports.join(", ")} of this computer.`
          : "Looking for model servers is turned off (discover.ports is empty).";
      for (const s of found.servers) list.append(this.serverItem(s));
    } catch (e) {
      status.textContent = e instanceof Error ? e.message : String(e);
    }
  }

  private serverItem(s: ModelServer): HTMLElement {
    const li = h("li", "server");
    li.dataset.kind = s.kind;
    li.append(h("span", "server-summary", serverSummary(s)));
    if (s.models.length) li.append(h("span", "hint server-models", s.models.slice(0, 5).join(", ") + (s.models.length > 5 ? ", …" : "")));
    const use = button("Use this server", () => {
      this.setForm(formForServer(this.form(), s));
      this.message.textContent = `Chose ${SERVER_NAMES[s.kind]}: pick a model, test the connection, then save.`;
      (this.modelPick.hidden ? this.model : this.modelPick).focus();
    });
    use.setAttribute("aria-label", `Use this server: ${SERVER_NAMES[s.kind]} at ${s.base_url}`);
    li.append(use);
    return li;
  }

  async test(): Promise<void> {
    const out = this.testResult;
    out.className = "test-result";
    out.replaceChildren(h("p", undefined, "Testing the connection…"));
    try {
      const r = expectReply(
        await this.deps.request({ type: "config.test", values: formValues(this.form()) }),
        "config.test.result",
      );
      const t = testResultText(r);
      out.className = `test-result ${t.ok ? "ok" : "failed"}`;
      out.dataset.ok = String(t.ok);
      out.replaceChildren(h("p", "headline", t.headline), ...t.details.map((d) => h("p", "detail", d)));
    } catch (e) {
      out.className = "test-result failed";
      out.dataset.ok = "false";
      out.replaceChildren(h("p", "headline", e instanceof Error ? e.message : String(e)));
    }
  }

  async save(): Promise<void> {
    this.message.textContent = "Saving…";
    try {
      const res = await this.deps.request({ type: "config.set", values: formValues(this.form()) });
      const saved = expectReply(res, "config.set.result");
      this.fill(saved.config);
      // A test of the settings before is no word on the ones saved.
      this.testResult.replaceChildren();
      this.testResult.className = "test-result";
      delete this.testResult.dataset["ok"];
      this.deps.saved(saved.runtime, saved.config);
      this.message.textContent = `Saved to ${saved.saved_to}. New turns use ${saved.runtime.label}.`;
      // Said where the Save button is, not below the fold.
      this.message.scrollIntoView({ block: "nearest" });
      announce("Settings saved.");
    } catch (e) {
      this.message.textContent = e instanceof Error ? e.message : String(e);
    }
  }
}
