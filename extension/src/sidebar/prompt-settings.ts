/**
 * Settings → Saved prompts: the library as a list (edit, delete) and one
 * form to add or change a prompt (name, text, task, shortcut slot). The
 * host checks every field and answers with the whole library, which the
 * composer's `/` menu then uses.
 */
import type { SavedPrompt, TaskName } from "../generated/wire.js";
import type { SidebarHostRequest } from "../shared/messages.js";
import type { RoutedHostMessage } from "../shared/protocol.js";
import { announce, button, h, settingsSection } from "./dom.js";
import { errorAdvice } from "./errors.js";
import { expectReply } from "./history.js";
import type { PromptLibrary } from "./prompts.js";

/** Shortcut slots, as the manifest's "run saved prompt N" commands and the host's `key` range. */
export const PROMPT_SLOTS = 3;

export const TASK_LABELS: Record<TaskName, string> = {
  "web.summarize": "Summarize",
  "web.answer": "Answer",
  "web.extract": "Extract",
};

export interface PromptSettingsDeps {
  request(req: SidebarHostRequest): Promise<RoutedHostMessage>;
  library: PromptLibrary;
}

/** The message an `error` reply carries, in the sidebar's words; other failures as they are. */
function failure(e: unknown): string {
  return e instanceof Error ? e.message : String(e);
}

function checkReply<T extends RoutedHostMessage["type"]>(msg: RoutedHostMessage, type: T): ReturnType<typeof expectReply<T>> {
  if (msg.type === "error") throw new Error(errorAdvice(msg.code, msg.message));
  return expectReply(msg, type);
}

export class PromptSettings {
  readonly el: HTMLElement;
  private readonly list: HTMLElement;
  private readonly form: HTMLFormElement;
  private readonly name: HTMLInputElement;
  private readonly text: HTMLTextAreaElement;
  private readonly task: HTMLSelectElement;
  private readonly slot: HTMLSelectElement;
  private readonly message: HTMLElement;
  private readonly submit: HTMLButtonElement;
  private editing: string | null = null;

  constructor(private readonly deps: PromptSettingsDeps) {
    this.el = settingsSection(
      "saved-prompts",
      "prompts-title",
      "Saved prompts",
      "Type / at the start of the question box to run one on the current page. For Extract, the prompt is the fields to extract, comma-separated.",
    );
    this.list = h("ul", "prompt-list");
    this.list.setAttribute("aria-label", "Saved prompts");

    this.form = h("form", "settings prompt-form") as HTMLFormElement;
    this.name = field("input", "prompt-name") as HTMLInputElement;
    this.name.maxLength = 80;
    this.text = field("textarea", "prompt-text") as HTMLTextAreaElement;
    this.text.rows = 3;
    this.text.maxLength = 4000;
    this.task = field("select", "prompt-task") as HTMLSelectElement;
    for (const [value, label] of Object.entries(TASK_LABELS)) this.task.append(option(value, label));
    this.task.value = "web.answer";
    this.slot = field("select", "prompt-slot") as HTMLSelectElement;
    this.slot.append(option("", "None"));
    for (let n = 1; n <= PROMPT_SLOTS; n++) this.slot.append(option(String(n), `Run saved prompt ${n}`));
    this.submit = h("button", "primary", "Save prompt") as HTMLButtonElement;
    this.submit.type = "submit";
    this.message = h("p", "hint");
    this.message.setAttribute("role", "status");
    this.form.append(
      label("prompt-name", "Name"),
      this.name,
      label("prompt-text", "Prompt"),
      this.text,
      label("prompt-task", "Task"),
      this.task,
      label("prompt-slot", "Keyboard shortcut"),
      this.slot,
      h("p", "hint", "Set the keys for each slot in the browser's extension shortcuts page."),
      this.submit,
      this.message,
    );
    this.form.addEventListener("submit", (e) => {
      e.preventDefault();
      void this.save();
    });
    this.el.append(this.list, this.form);
  }

  async load(): Promise<void> {
    try {
      await this.reload();
    } catch (e) {
      this.message.textContent = failure(e);
    }
  }

  async save(): Promise<void> {
    this.message.textContent = "Saving…";
    try {
      const reply = checkReply(
        await this.deps.request({
          type: "prompts.save",
          prompt: {
            prompt_id: this.editing,
            name: this.name.value,
            text: this.text.value,
            task: this.task.value as TaskName,
            key: this.slot.value ? Number(this.slot.value) : null,
          },
        }),
        "prompts.save.result",
      );
      this.show(reply.prompts);
      this.reset();
      this.message.textContent = `Saved “${reply.prompt.name}”.`;
      announce(`Saved prompt ${reply.prompt.name}`);
    } catch (e) {
      this.message.textContent = failure(e);
    }
  }

  private async remove(p: SavedPrompt): Promise<void> {
    try {
      checkReply(await this.deps.request({ type: "prompts.delete", prompt_id: p.id }), "prompts.delete.result");
      if (this.editing === p.id) this.reset();
      await this.reload();
      this.message.textContent = `Deleted “${p.name}”.`;
      announce(`Deleted prompt ${p.name}`);
    } catch (e) {
      this.message.textContent = failure(e);
    }
  }

  private async reload(): Promise<void> {
    this.show(checkReply(await this.deps.request({ type: "prompts.list" }), "prompts.list.result").prompts);
  }

  private edit(p: SavedPrompt): void {
    this.editing = p.id;
    this.name.value = p.name;
    this.text.value = p.text;
    this.task.value = p.task;
    this.slot.value = p.key ? String(p.key) : "";
    this.submit.textContent = "Save changes";
    this.name.focus();
  }

  private reset(): void {
    this.editing = null;
    this.form.reset();
    this.task.value = "web.answer";
    this.submit.textContent = "Save prompt";
  }

  private show(prompts: SavedPrompt[]): void {
    this.deps.library.replace(prompts);
    if (!prompts.length) {
      this.list.replaceChildren(h("li", "hint", "No saved prompts yet."));
      return;
    }
    this.list.replaceChildren(
      ...prompts.map((p) => {
        const li = h("li", "prompt-item");
        const what = [TASK_LABELS[p.task], p.key ? `shortcut ${p.key}` : ""].filter(Boolean).join(" · ");
        const edit = button("Edit", () => this.edit(p));
        edit.setAttribute("aria-label", `Edit ${p.name}`);
        const del = button("Delete", () => void this.remove(p));
        del.setAttribute("aria-label", `Delete ${p.name}`);
        li.append(h("span", "prompt-name", p.name), h("span", "hint", what), edit, del);
        return li;
      }),
    );
  }
}

function field(tag: string, id: string): HTMLElement {
  const el = h(tag);
  el.id = id;
  return el;
}

function label(forId: string, text: string): HTMLElement {
  const l = h("label", undefined, text) as HTMLLabelElement;
  l.htmlFor = forId;
  return l;
}

function option(value: string, text: string): HTMLOptionElement {
  const o = h("option", undefined, text) as HTMLOptionElement;
  o.value = value;
  return o;
}
