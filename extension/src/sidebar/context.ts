/**
 * What the next question reads besides the page: the selected text (from
 * "Ask Laika about the selection") and other open tabs the user picks. Both
 * stay attached until removed, so follow-ups keep the same focus.
 */
import type { OpenTab } from "../shared/messages.js";
import { $, announce, button, h } from "./dom.js";

const PREVIEW_CHARS = 160;

export class ContextPicker {
  private selection = "";
  private readonly picked = new Map<number, OpenTab>();
  private readonly chips = $("context-chips");
  private readonly list = $("tab-list");
  private readonly pickerBox = $("tab-picker");

  /** `requestTabs` asks the background for the open tabs; they arrive in `showTabs`. */
  constructor(private readonly requestTabs: () => void) {
    $("add-tabs").addEventListener("click", () => this.togglePicker());
    this.render();
  }

  get selectedText(): string {
    return this.selection;
  }

  get tabIds(): number[] {
    return [...this.picked.keys()];
  }

  setSelection(text: string): void {
    this.selection = text.trim();
    this.render();
    if (this.selection) announce("The selected text is attached to your question");
  }

  /** Folds the tab list away (the chips still show what is picked). */
  closePicker(): void {
    this.pickerBox.hidden = true;
    $("add-tabs").setAttribute("aria-expanded", "false");
  }

  private togglePicker(): void {
    const open = this.pickerBox.hidden;
    this.pickerBox.hidden = !open;
    $("add-tabs").setAttribute("aria-expanded", String(open));
    if (open) {
      this.list.replaceChildren(h("li", "notice", "Loading tabs…"));
      this.requestTabs();
    }
  }

  /** The open tabs besides the one in front, as checkboxes. */
  showTabs(offered: OpenTab[]): void {
    this.list.replaceChildren();
    if (!offered.length) {
      this.list.append(h("li", "notice", "No other web pages are open."));
      return;
    }
    for (const t of offered) {
      const li = h("li");
      const id = `tab-${t.id}`;
      const box = document.createElement("input");
      box.type = "checkbox";
      box.id = id;
      box.checked = this.picked.has(t.id);
      box.addEventListener("change", () => {
        if (box.checked) this.picked.set(t.id, t);
        else this.picked.delete(t.id);
        this.render();
      });
      const label = h("label", undefined, t.title || t.url);
      label.setAttribute("for", id);
      label.title = t.url;
      li.append(box, label);
      this.list.append(li);
    }
  }

  private render(): void {
    this.chips.replaceChildren();
    if (this.selection) {
      const preview = this.selection.length > PREVIEW_CHARS ? `${this.selection.slice(0, PREVIEW_CHARS)}…` : this.selection;
      this.chips.append(this.chip("chip selection-chip", `About the selection: “${preview}”`, "Remove the selection", () => this.setSelection("")));
    }
    for (const t of this.picked.values()) {
      this.chips.append(
        this.chip("chip tab-chip", `Also reading: ${t.title || t.url}`, `Stop reading ${t.title || t.url}`, () => {
          this.picked.delete(t.id);
          const box = document.getElementById(`tab-${t.id}`) as HTMLInputElement | null;
          if (box) box.checked = false;
          this.render();
        }),
      );
    }
    this.chips.hidden = !this.chips.hasChildNodes();
  }

  private chip(cls: string, text: string, removeLabel: string, remove: () => void): HTMLElement {
    const c = h("div", cls);
    c.append(h("span", undefined, text));
    const x = button("×", remove, "chip-remove");
    x.setAttribute("aria-label", removeLabel);
    c.append(x);
    return c;
  }
}
