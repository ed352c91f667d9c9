import { beforeEach, describe, expect, it } from "vitest";
import type { ModelServer } from "../src/generated/wire";
import type { SidebarHostRequest } from "../src/shared/messages";
import type { RoutedHostMessage } from "../src/shared/protocol";
import { installFakeBrowser } from "./fake-browser";

// The card reads the browser's storage: the fake browser is there before it loads.
installFakeBrowser();
const { HOW_TO_GET_ONE, OfflineCard, answeredOffline, offerFor } = await import("../src/sidebar/offline-card");

const ollama: ModelServer = {
  kind: "ollama",
  base_url: "http://127.0.0.1:11434",
  runtime: "ollama",
  profile: null,
  guessed: false,
  models: ["nomic-embed-text:latest", "llama3.2:latest"],
  context_window: null,
  version: "0.12.6",
};
const unknownProfile: ModelServer = {
  kind: "open_ai_compatible",
  base_url: "http://127.0.0.1:8000/v1",
  runtime: "openai",
  profile: null,
  guessed: false,
  models: ["qwen3-4b"],
  context_window: null,
  version: null,
};

const reply = (msg: object) => ({ id: "h", reply_to: "r", ...msg }) as unknown as RoutedHostMessage;
const done = (kind: string) =>
  reply({ type: "done", runtime: { kind, label: kind, model: "m", offline: true } }) as RoutedHostMessage;

describe("the offline card's offer", () => {
  it("offers the first found server with a model that can chat, and the config that uses it", () => {
    const offer = offerFor([unknownProfile, ollama]);
    expect(offer?.question).toBe("Ollama is running on this computer with llama3.2:latest: use it?");
    expect(offer?.chosen).toBe("The next answer comes from llama3.2:latest via Ollama.");
    expect(offer?.values).toEqual({
      "runtime.kind": "ollama",
      "runtime.base_url": "http://127.0.0.1:11434",
      "runtime.model": "llama3.2:latest",
    });
  });

  it("sends the profile of an OpenAI-compatible server, and offers none it cannot use in one click", () => {
    const llama = { ...unknownProfile, kind: "llama_cpp", profile: "llama.cpp" } as ModelServer;
    expect(offerFor([llama])?.values["runtime.profile"]).toBe("llama.cpp");
    expect(offerFor([unknownProfile])).toBeNull();
    expect(offerFor([{ ...ollama, models: ["nomic-embed-text:latest"] }])).toBeNull();
    expect(offerFor([])).toBeNull();
  });

  it("is shown only after an answer of the offline runtime", () => {
    expect(answeredOffline(done("builtin"))).toBe(true);
    expect(answeredOffline(done("ollama"))).toBe(false);
  });
});

describe("the offline card", () => {
  let asked: SidebarHostRequest[];
  let container: HTMLElement;
  beforeEach(() => {
    installFakeBrowser();
    asked = [];
    container = document.createElement("div");
    document.body.replaceChildren(container);
  });

  const card = (servers: ModelServer[]) =>
    new OfflineCard({
      container,
      openSettings: () => undefined,
      saved: () => undefined,
      request: async (req) => {
        asked.push(req);
        return req.type === "config.discover"
          ? reply({ type: "config.discover.result", ports: [11434], servers })
          : reply({ type: "config.set.result", config: {}, saved_to: "/c.toml" });
      },
    });

  it("says what the offline runtime is and switches to the found model in one click", async () => {
    const c = card([ollama]);
    await c.onHostMessage(done("ollama"));
    expect(container.children).toHaveLength(0);
    await c.onHostMessage(done("builtin"));
    const el = container.querySelector("#offline-card");
    expect(el?.textContent).toContain("not an AI model");
    expect(el?.textContent).toContain("Ollama is running on this computer with llama3.2:latest: use it?");
    const use = [...el!.querySelectorAll("button")].find((b) => b.textContent === "Use it");
    use!.click();
    await new Promise((r) => setTimeout(r, 0));
    expect(asked.at(-1)).toEqual({
      type: "config.set",
      values: { "runtime.kind": "ollama", "runtime.base_url": "http://127.0.0.1:11434", "runtime.model": "llama3.2:latest" },
    });
    expect(el?.textContent).toContain("The next answer comes from llama3.2:latest via Ollama.");
    // Once per sidebar: a second offline answer adds no second card.
    await c.onHostMessage(done("builtin"));
    expect(container.querySelectorAll("#offline-card")).toHaveLength(1);
  });

  it("without a server, tells how to get one on each platform and can look again", async () => {
    const c = card([]);
    await c.onHostMessage(done("builtin"));
    const items = [...container.querySelectorAll(".offline-howto li")].map((li) => li.textContent);
    expect(items).toHaveLength(HOW_TO_GET_ONE.length);
    expect(items.map((t) => t?.split(":")[0])).toEqual(["macOS", "Windows", "Linux"]);
    const again = [...container.querySelectorAll("button")].find((b) => b.textContent === "Look again");
    again!.click();
    await new Promise((r) => setTimeout(r, 0));
    expect(asked.filter((r) => r.type === "config.discover")).toHaveLength(2);
    expect(asked.some((r) => r.type === "config.set")).toBe(false);
  });
});
