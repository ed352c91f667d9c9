import fs from "node:fs";
import path from "node:path";
import { beforeEach, describe, expect, it } from "vitest";
import type { ConfigView, ModelServer } from "../src/generated/wire";
import type { SidebarHostRequest } from "../src/shared/messages";
import type { RoutedHostMessage } from "../src/shared/protocol";
import {
  SettingsView,
  formForKind,
  formForServer,
  formValues,
  kindOptions,
  serverSummary,
  testResultText,
  type FormState,
} from "../src/sidebar/settings";
import { choices } from "../src/sidebar/switcher";
import { htmlDoc } from "./helpers";

const view = (over: Partial<ConfigView["runtime"]> = {}, saved: ConfigView["saved_runtimes"] = []): ConfigView =>
  ({
    runtime: { kind: "builtin", base_url: null, model: null, profile: null, api_key_set: false, ...over },
    saved_runtimes: saved,
    data_dir: "/d",
    log_full_llm: false,
    allowed_origins: [],
    limits: {},
    runtime_kinds: ["builtin", "scripted", "openai", "ollama", "anthropic", "command"],
    offered_kinds: ["builtin", "openai", "ollama", "anthropic"],
    profiles: ["llama.cpp", "vllm", "sglang", "mlx", "lmstudio", "openai", "generic"],
    discover_ports: [8080],
  }) as unknown as ConfigView;

const llama: ModelServer = {
  kind: "llama_cpp",
  base_url: "http://127.0.0.1:8080/v1",
  runtime: "openai",
  profile: "llama.cpp",
  guessed: false,
  models: ["gemma-3-270m.gguf", "qwen3-4b.gguf"],
  context_window: 8192,
  version: "b1",
};

const empty: FormState = { kind: "builtin", baseUrl: "", profile: "", model: "", apiKey: "", clearKey: false };

describe("settings logic", () => {
  it("never offers the scripted runtime; one in use is shown, not choosable", () => {
    const options = kindOptions(view({ kind: "scripted" }));
    expect(options.map((o) => o.value)).toEqual(["scripted", "builtin", "openai", "ollama", "anthropic"]);
    expect(options[0]).toMatchObject({ disabled: true });
    expect(options.slice(1).every((o) => !o.disabled)).toBe(true);
    expect(kindOptions(view()).some((o) => o.value === "scripted" || o.value === "command")).toBe(false);
  });

  it("describes a found server by kind, profile, models and context window", () => {
    expect(serverSummary(llama)).toBe(
      "llama.cpp (llama-server) at http://127.0.0.1:8080/v1 · profile llama.cpp · 2 models · context 8,192 tokens",
    );
    expect(serverSummary({ ...llama, kind: "open_ai_compatible", profile: null, models: [], context_window: null })).toBe(
      "OpenAI-compatible server at http://127.0.0.1:8080/v1 · profile unknown: pick one below · no models listed",
    );
  });

  it("picking a server sets kind, URL, profile and a model it has", () => {
    expect(formForServer(empty, llama)).toMatchObject({
      kind: "openai",
      baseUrl: "http://127.0.0.1:8080/v1",
      profile: "llama.cpp",
      model: "gemma-3-270m.gguf",
    });
    expect(formForServer({ ...empty, model: "qwen3-4b.gguf" }, llama).model).toBe("qwen3-4b.gguf");
  });

  it("choosing a kind brings back its kept settings; a new kind keeps the fields shown", () => {
    const kept = { kind: "openai", base_url: "http://127.0.0.1:8080/v1", model: "gemma", profile: "llama.cpp", api_key_set: true };
    const config = view({}, [kept]);
    expect(formForKind(empty, config, "openai")).toMatchObject({ kind: "openai", baseUrl: kept.base_url, model: "gemma", profile: "llama.cpp" });
    const typed = { ...empty, baseUrl: "http://x", model: "m" };
    expect(formForKind(typed, config, "ollama")).toEqual({ ...typed, kind: "ollama" });
    expect(formForKind(typed, config, "builtin")).toEqual({ ...typed, kind: "builtin" });
    // The header's switcher: the one in use, the kept ones, and always offline.
    expect(choices(config)).toEqual([
      { value: "builtin", label: "Offline (no AI model)" },
      { value: "openai", label: "gemma · OpenAI-compatible server" },
    ]);
    expect(choices(view({ kind: "ollama", model: "qwen3:4b" })).map((c) => c.label)).toEqual(["qwen3:4b · Ollama", "Offline (no AI model)"]);
  });

  it("sends the key only when typed or removed, the profile only for openai", () => {
    const form = { ...empty, kind: "openai", baseUrl: " http://x/v1 ", profile: "", model: "m" };
    expect(formValues(form)).toEqual({
      "runtime.kind": "openai",
      "runtime.base_url": "http://x/v1",
      "runtime.model": "m",
      "runtime.profile": null,
    });
    expect(formValues({ ...form, apiKey: " sk-1 " })["runtime.api_key"]).toBe("sk-1");
    expect(formValues({ ...form, apiKey: "sk-1", clearKey: true })["runtime.api_key"]).toBeNull();
    expect("runtime.profile" in formValues({ ...form, kind: "ollama" })).toBe(false);
  });

  it("says what the test gave: the JSON, or the error in words and the raw reply", () => {
    const base = { type: "config.test.result", id: "i", reply_to: "r", elapsed_ms: 5, message: "m answered." } as const;
    const runtime = { kind: "openai", model: "m", offline: true, label: "m via llama.cpp" };
    const ok = testResultText({ ...base, ok: true, runtime, answer: { reply: "Ready." } });
    expect(ok).toEqual({ ok: true, headline: "Connected. m answered.", details: ['It answered: {"reply":"Ready."}'] });
    const bad = testResultText({
      ...base,
      ok: false,
      runtime,
      raw: "Sure!",
      error: { code: "INVALID_MODEL_OUTPUT", message: "the model answered, but it is not JSON", retryable: true },
    });
    expect(bad.ok).toBe(false);
    expect(bad.headline).toBe("Not working: m via llama.cpp");
    expect(bad.details[1]).toBe("It answered: Sure!");
    expect(bad.details[0]).toMatch(/couldn't be used|not JSON/);
  });
});

describe("the settings view", () => {
  beforeEach(() => {
    // jsdom lays nothing out, so it has no scrolling.
    Element.prototype.scrollIntoView ??= () => undefined;
    const html = fs.readFileSync(path.join(__dirname, "..", "static", "sidepanel.html"), "utf8");
    const doc = htmlDoc(html);
    document.body.replaceChildren(...[...doc.body.children].map((n) => document.importNode(n, true)));
  });

  it("finds servers on open, fills the model picker, tests and saves without ever showing the key", async () => {
    const asked: SidebarHostRequest[] = [];
    const reply = (msg: object) => ({ id: "h", reply_to: "r", ...msg }) as unknown as RoutedHostMessage;
    const savedRuntimes: string[] = [];
    const settings = new SettingsView({
      saved: (runtime) => savedRuntimes.push(runtime.label),
      request: async (req) => {
        asked.push(req);
        switch (req.type) {
          case "config.get":
            return reply({ type: "config.get.result", config: view({ api_key_set: true }) });
          case "config.discover":
            return reply({ type: "config.discover.result", ports: [8080], servers: [llama] });
          case "config.test":
            return reply({
              type: "config.test.result", ok: true, elapsed_ms: 9, message: "gemma answered in 9 ms.",
              runtime: { kind: "openai", model: "gemma", offline: true, label: "gemma" }, answer: { reply: "Ready." },
            });
          default:
            return reply({
              type: "config.set.result", config: view({ kind: "openai", api_key_set: true }), saved_to: "/c.toml",
              runtime: { kind: "openai", model: "qwen3-4b.gguf", offline: true, label: "qwen3-4b.gguf via llama.cpp" },
            });
        }
      },
    });
    await settings.load();
    expect(asked.map((r) => r.type)).toEqual(["config.get", "config.discover"]);
    const kinds = [...document.querySelectorAll<HTMLOptionElement>("#set-kind option")].map((o) => o.value);
    expect(kinds).not.toContain("scripted");
    const key = document.getElementById("set-api-key") as HTMLInputElement;
    expect(key.type).toBe("password");
    expect(key.value).toBe("");
    expect(key.placeholder).toMatch(/^set/);
    const items = document.querySelectorAll("#discover-list li");
    expect(items).toHaveLength(1);
    const first = items[0] as HTMLElement;
    expect(first.textContent).toContain("context 8,192 tokens");

    (first.querySelector("button") as HTMLButtonElement).click();
    expect((document.getElementById("set-kind") as HTMLSelectElement).value).toBe("openai");
    expect((document.getElementById("set-profile") as HTMLSelectElement).value).toBe("llama.cpp");
    const pick = document.getElementById("set-model-pick") as HTMLSelectElement;
    expect(pick.hidden).toBe(false);
    expect([...pick.options].map((o) => o.value)).toEqual(llama.models);
    pick.value = "qwen3-4b.gguf";
    pick.dispatchEvent(new Event("change"));
    expect((document.getElementById("set-model") as HTMLInputElement).value).toBe("qwen3-4b.gguf");

    await settings.test();
    const test = asked.at(-1) as Extract<SidebarHostRequest, { type: "config.test" }>;
    expect(test.values).toEqual({
      "runtime.kind": "openai",
      "runtime.base_url": llama.base_url,
      "runtime.model": "qwen3-4b.gguf",
      "runtime.profile": "llama.cpp",
    });
    const result = document.getElementById("test-result") as HTMLElement;
    expect(result.getAttribute("role")).toBe("status");
    expect(result.dataset.ok).toBe("true");
    expect(result.textContent).toContain('It answered: {"reply":"Ready."}');

    key.value = "sk-new-key";
    await settings.save();
    const set = asked.at(-1) as Extract<SidebarHostRequest, { type: "config.set" }>;
    expect(set.values["runtime.api_key"]).toBe("sk-new-key");
    expect(key.value).toBe("");
    expect(document.getElementById("settings-message")?.textContent).toContain("Saved to /c.toml");
    expect(savedRuntimes).toEqual(["qwen3-4b.gguf via llama.cpp"]);
  });

  it("offers to remove the stored key only when one is set", async () => {
    for (const api_key_set of [true, false]) {
      const settings = new SettingsView({
        saved: () => undefined,
        request: async (req) =>
          ({ id: "h", reply_to: "r", ...(req.type === "config.get"
            ? { type: "config.get.result", config: view({ kind: "openai", base_url: "http://x/v1", model: "m", api_key_set }) }
            : { type: "config.discover.result", ports: [], servers: [] }) }) as unknown as RoutedHostMessage,
      });
      await settings.load();
      expect(document.getElementById("set-api-key-row")?.hidden).toBe(!api_key_set);
    }
  });
});
