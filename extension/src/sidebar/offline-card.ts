/**
 * The offline card: shown once, under the first answer the offline runtime
 * gives. It says plainly what that runtime is (no AI model: it finds and
 * quotes sentences of the page) and offers a way to a real model: a model
 * server Settings' discovery finds on this computer, used with one click
 * (the next answer comes from it), or how to get one, one line per
 * platform. Closing it or using a model dismisses it for good
 * (storage.local).
 */
import type { ConfigView, ModelServer, RuntimeInfo } from "../generated/wire.js";
import type { SidebarHostRequest } from "../shared/messages.js";
import type { RoutedHostMessage } from "../shared/protocol.js";
import { ext } from "../shared/api.js";
import { announce, button, h } from "./dom.js";
import { expectReply } from "./history.js";
import { SERVER_NAMES, type ConfigSetValues } from "./settings.js";

const SEEN_KEY = "laika.offlineCardSeen";

export const OFFLINE_EXPLAINED =
  "This answer comes from Laika's offline reader, not an AI model: it finds the sentences of the page that match your question and quotes them. It cannot explain, reason or rephrase. A model running on this computer can, and the page still stays on this computer.";

/** How to get a local model server, one line per platform (Ollama: one install, one pull). */
export const HOW_TO_GET_ONE: readonly { platform: string; line: string }[] = [
  { platform: "macOS", line: "brew install ollama (or the app from ollama.com/download), then: ollama pull llama3.2" },
  { platform: "Windows", line: "winget install Ollama.Ollama (or the installer from ollama.com/download), then: ollama pull llama3.2" },
  { platform: "Linux", line: "curl -fsSL https://ollama.com/install.sh | sh, then: ollama pull llama3.2" },
];

/** A found server and model the card can switch to with one click. */
export interface ModelOffer {
  /** "Ollama is running with llama3.2: use it?" */
  question: string;
  /** What the next answer comes from, once chosen. */
  chosen: string;
  values: ConfigSetValues;
}

/** Models that only embed text cannot answer. */
const NOT_CHAT = /(^|[^a-z])(embed|embedding|rerank|bge|minilm)([^a-z]|$)/i;

/**
 * The first server discovery found that one click can use: one that lists a
 * model that can chat, whose runtime needs no profile or has a known one
 * (an unknown profile is the user's pick, in Settings).
 */
export function offerFor(servers: readonly ModelServer[]): ModelOffer | null {
  for (const s of servers) {
    const model = s.models.find((m) => !NOT_CHAT.test(m));
    if (!model || (s.runtime === "openai" && !s.profile)) continue;
    const name = SERVER_NAMES[s.kind];
    const values: ConfigSetValues = { "runtime.kind": s.runtime, "runtime.base_url": s.base_url, "runtime.model": model };
    if (s.runtime === "openai") values["runtime.profile"] = s.profile;
    return {
      question: `${name} is running on this computer with ${model}: use it?`,
      chosen: `The next answer comes from ${model} via ${name}.`,
      values,
    };
  }
  return null;
}

/** Whether a host message is the end of a turn the offline runtime answered. */
export function answeredOffline(msg: RoutedHostMessage): boolean {
  return msg.type === "done" && msg.runtime.kind === "builtin";
}

export interface OfflineCardDeps {
  request(req: SidebarHostRequest): Promise<RoutedHostMessage>;
  /** Where the card goes: after the answer it explains. */
  container: HTMLElement;
  openSettings(): void;
  /** The runtime was switched: the header names it at once. */
  saved(runtime: RuntimeInfo, config: ConfigView): void;
  /** Called just before the card is added: the answer it follows stays where it is. */
  adding?(): void;
}

export class OfflineCard {
  private el: HTMLElement | null = null;
  private shown = false;

  constructor(private readonly deps: OfflineCardDeps) {}

  /** Shows the card after the first offline answer, unless it was dismissed before. */
  async onHostMessage(msg: RoutedHostMessage): Promise<void> {
    if (this.shown || !answeredOffline(msg)) return;
    this.shown = true;
    const seen = await ext.storage.local.get(SEEN_KEY).catch(() => ({}) as Record<string, unknown>);
    if ((seen as Record<string, unknown>)[SEEN_KEY]) return;
    await this.show();
  }

  async show(): Promise<void> {
    this.el?.remove();
    const c = h("section", "offline-card");
    c.id = "offline-card";
    c.setAttribute("aria-label", "About the offline runtime");
    c.append(h("p", undefined, OFFLINE_EXPLAINED));
    const offer = h("div", "offline-offer");
    c.append(offer, this.closeRow());
    this.el = c;
    this.deps.adding?.();
    this.deps.container.append(c);
    await this.look(offer);
  }

  /** Asks discovery what runs on this computer and fills `offer` with it, or with how to get one. */
  private async look(offer: HTMLElement): Promise<void> {
    offer.replaceChildren(h("p", "hint", "Looking for a model server on this computer…"));
    let found: ModelOffer | null;
    try {
      found = offerFor(expectReply(await this.deps.request({ type: "config.discover" }), "config.discover.result").servers);
    } catch {
      // Discovery failed: the card tells how to get a server instead.
      found = null;
    }
    if (found) {
      const chosen = found;
      offer.replaceChildren(h("p", "offline-question", chosen.question), button("Use it", () => void this.use(chosen, offer), "primary"));
      return;
    }
    const list = h("ul", "offline-howto");
    for (const { platform, line } of HOW_TO_GET_ONE) list.append(h("li", undefined, `${platform}: ${line}`));
    offer.replaceChildren(
      h("p", undefined, "No model server is running on this computer. To get one:"),
      list,
      button("Look again", () => void this.look(offer)),
    );
  }

  private async use(chosen: ModelOffer, offer: HTMLElement): Promise<void> {
    try {
      const saved = expectReply(await this.deps.request({ type: "config.set", values: chosen.values }), "config.set.result");
      this.deps.saved(saved.runtime, saved.config);
      offer.replaceChildren(h("p", "offline-chosen", chosen.chosen));
      announce(chosen.chosen);
      this.remember();
    } catch (e) {
      offer.append(h("p", "error", e instanceof Error ? e.message : String(e)));
    }
  }

  private closeRow(): HTMLElement {
    const row = h("div", "row");
    row.append(
      button("Settings", () => {
        this.dismiss();
        this.deps.openSettings();
      }),
      button("Keep the offline reader", () => this.dismiss()),
    );
    return row;
  }

  private dismiss(): void {
    this.el?.remove();
    this.el = null;
    this.remember();
  }

  private remember(): void {
    void ext.storage.local.set({ [SEEN_KEY]: true }).catch(() => undefined);
  }
}
