/**
 * The first-run card: what Laika reads, where it goes, how to pick a model.
 * Shown at the top of the chat until dismissed (remembered in
 * storage.local); "About Laika" shows it again.
 */
import { ext } from "../shared/api.js";
import { $, button, h } from "./dom.js";

const SEEN_KEY = "laika.firstRunSeen";

function section(title: string, points: string[]): HTMLElement {
  const s = h("section", "welcome-part");
  s.append(h("h3", undefined, title));
  const ul = h("ul");
  for (const p of points) ul.append(h("li", undefined, p));
  s.append(ul);
  return s;
}

function card(onSettings: () => void, onDone: () => void): HTMLElement {
  const c = h("section", "welcome");
  c.id = "welcome";
  c.setAttribute("aria-labelledby", "welcome-title");
  const title = h("h2", undefined, "Welcome to Laika");
  title.id = "welcome-title";
  title.tabIndex = -1;
  c.append(
    title,
    section("What Laika reads", [
      "Only when you ask: the page in the tab in front, the text you select, and other tabs you add.",
      "The page's visible text and structure; never what you type into forms or password fields.",
    ]),
    section("Where it goes", [
      "To the Laika app on this computer, which keeps your history in a file on this computer.",
      "Then to the model you choose: the offline one never sends anything; a model server gets the page you ask about. Each answer says which model answered and whether the page left this computer.",
    ]),
    section("How to pick a model", [
      "Open Settings: keep “builtin” (offline, quotes the page), or choose Ollama or an OpenAI-compatible server, its address and the model.",
    ]),
  );
  const row = h("div", "row");
  row.append(button("Choose a model", onSettings), button("Got it", onDone, "primary"));
  c.append(row);
  return c;
}

export class FirstRun {
  private el: HTMLElement | null = null;

  constructor(private readonly openSettings: () => void) {
    $("about").addEventListener("click", () => this.show(true));
  }

  /** Shows the card if it was never dismissed. */
  async maybeShow(): Promise<void> {
    const seen = await ext.storage.local.get(SEEN_KEY).catch(() => ({}) as Record<string, unknown>);
    if (!(seen as Record<string, unknown>)[SEEN_KEY]) this.show(false);
  }

  show(focus: boolean): void {
    this.el?.remove();
    this.el = card(
      () => {
        this.dismiss();
        this.openSettings();
      },
      () => {
        this.dismiss();
        $("question").focus();
      },
    );
    $("view-chat").prepend(this.el);
    if (focus) this.el.querySelector<HTMLElement>("#welcome-title")?.focus();
  }

  private dismiss(): void {
    this.el?.remove();
    this.el = null;
    void ext.storage.local.set({ [SEEN_KEY]: true }).catch(() => undefined);
  }
}
