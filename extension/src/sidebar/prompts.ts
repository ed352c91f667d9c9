/**
 * Saved prompts in the composer: typing `/` at its start lists them
 * (filtered as the user types, ↑/↓ to choose, Enter or a click runs the
 * chosen one on the current page, Escape closes), and the library the
 * sidebar keeps for the menu and the "run saved prompt N" shortcuts.
 */
import type { SavedPrompt } from "../generated/wire.js";
import type { SidebarHostRequest } from "../shared/messages.js";
import type { RoutedHostMessage } from "../shared/protocol.js";
import { h } from "./dom.js";
import { expectReply } from "./history.js";

/** The host's library, fetched when first needed and replaced on every change. */
export class PromptLibrary {
  private prompts: SavedPrompt[] | null = null;

  constructor(private readonly request: (req: SidebarHostRequest) => Promise<RoutedHostMessage>) {}

  async list(): Promise<SavedPrompt[]> {
    if (!this.prompts) this.prompts = expectReply(await this.request({ type: "prompts.list" }), "prompts.list.result").prompts;
    return this.prompts;
  }

  /** What the host answered after a change. */
  replace(prompts: SavedPrompt[]): void {
    this.prompts = prompts;
  }

  async inSlot(slot: number): Promise<SavedPrompt | undefined> {
    return (await this.list()).find((p) => p.key === slot);
  }
}

/** An extract's fields as typed: comma-separated, at most 32. */
export function fieldList(text: string): string[] {
  return text
    .split(",")
    .map((f) => f.trim())
    .filter(Boolean)
    .slice(0, 32);
}

/** What running `p` asks: its text under its task (an extract's text lists the fields), labelled with its name. */
export function promptQuestion(p: SavedPrompt): { task: SavedPrompt["task"]; text: string; label: string; fields?: string[] } {
  if (p.task === "web.extract") {
    const fields = fieldList(p.text);
    return { task: p.task, text: `Extract: ${fields.join(", ")}`, label: p.name, fields };
  }
  return { task: p.task, text: p.text, label: p.name };
}

/** The query after a leading `/`, or null when the text does not start a command. */
export function slashQuery(text: string): string | null {
  if (!text.startsWith("/") || text.includes("\n")) return null;
  return text.slice(1);
}

/** The prompts matching `query`: names starting with it first, then names containing it, in library order. */
export function matchPrompts(prompts: readonly SavedPrompt[], query: string): SavedPrompt[] {
  const q = query.trim().toLowerCase();
  if (!q) return [...prompts];
  const starts = prompts.filter((p) => p.name.toLowerCase().startsWith(q));
  const within = prompts.filter((p) => !starts.includes(p) && p.name.toLowerCase().includes(q));
  return [...starts, ...within];
}

/** The `/` menu over the composer's text field: a listbox the field points into (`aria-activedescendant`). */
export class SlashMenu {
  readonly el: HTMLElement;
  private shown: SavedPrompt[] = [];
  private active = 0;
  /** Bumped on every input, so a slow library fetch never fills a stale menu. */
  private generation = 0;

  constructor(
    private readonly field: HTMLTextAreaElement,
    private readonly library: PromptLibrary,
    private readonly run: (prompt: SavedPrompt) => void,
  ) {
    this.el = h("ul", "slash-menu");
    this.el.id = "slash-menu";
    this.el.setAttribute("role", "listbox");
    this.el.setAttribute("aria-label", "Saved prompts");
    this.el.hidden = true;
    field.setAttribute("aria-controls", this.el.id);
    // A textbox (not a combobox: it also takes questions) that suggests a list.
    field.setAttribute("aria-autocomplete", "list");
    field.addEventListener("input", () => void this.update());
    // Capture: the menu's keys win over Enter-to-send.
    field.addEventListener("keydown", (e) => this.onKey(e), { capture: true });
    field.addEventListener("blur", () => setTimeout(() => this.close(), 150));
  }

  get isOpen(): boolean {
    return !this.el.hidden;
  }

  async update(): Promise<void> {
    const generation = ++this.generation;
    const query = slashQuery(this.field.value);
    if (query === null) {
      this.close();
      return;
    }
    let prompts: SavedPrompt[];
    try {
      prompts = await this.library.list();
    } catch {
      prompts = [];
    }
    if (generation !== this.generation) return;
    this.shown = matchPrompts(prompts, query);
    this.active = 0;
    this.render(prompts.length === 0 ? "No saved prompts yet: add them in Settings." : "No saved prompt matches.");
  }

  close(): void {
    this.el.hidden = true;
    this.shown = [];
    this.field.removeAttribute("aria-activedescendant");
  }

  private render(empty: string): void {
    const items = this.shown.map((p, i) => {
      const li = h("li", "slash-item");
      li.id = `slash-item-${i}`;
      li.setAttribute("role", "option");
      li.setAttribute("aria-selected", String(i === this.active));
      li.append(h("span", "slash-name", p.name), h("span", "slash-text", p.text));
      // mousedown: before the field's blur closes the menu.
      li.addEventListener("mousedown", (e) => {
        e.preventDefault();
        this.choose(i);
      });
      return li;
    });
    this.el.replaceChildren(...(items.length ? items : [h("li", "slash-empty", empty)]));
    this.el.hidden = false;
    if (items.length) this.field.setAttribute("aria-activedescendant", `slash-item-${this.active}`);
    else this.field.removeAttribute("aria-activedescendant");
  }

  private onKey(e: KeyboardEvent): void {
    if (!this.isOpen || e.isComposing) return;
    const count = this.shown.length;
    if (e.key === "ArrowDown" || e.key === "ArrowUp") {
      if (!count) return;
      e.preventDefault();
      this.active = (this.active + (e.key === "ArrowDown" ? 1 : count - 1)) % count;
      this.render("");
    } else if (e.key === "Enter" && !e.shiftKey) {
      // A `/` line is never sent as a question.
      e.preventDefault();
      e.stopImmediatePropagation();
      if (count) this.choose(this.active);
    } else if (e.key === "Escape") {
      e.preventDefault();
      this.close();
    }
  }

  private choose(index: number): void {
    const prompt = this.shown[index];
    if (!prompt) return;
    this.field.value = "";
    this.close();
    this.run(prompt);
  }
}
