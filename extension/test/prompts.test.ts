import { beforeEach, describe, expect, it } from "vitest";
import type { SavedPrompt } from "../src/generated/wire";
import type { SidebarHostRequest } from "../src/shared/messages";
import type { RoutedHostMessage } from "../src/shared/protocol";
import { installFakeBrowser } from "./fake-browser";
import { PromptSettings } from "../src/sidebar/prompt-settings";
import { matchPrompts, PromptLibrary, promptQuestion, SlashMenu, slashQuery } from "../src/sidebar/prompts";

const prompt = (name: string, over: Partial<SavedPrompt> = {}): SavedPrompt => ({
  id: `id-${name}`,
  name,
  text: `${name} text`,
  task: "web.answer",
  key: null,
  updated_at: "2026-01-01T00:00:00Z",
  ...over,
});

const library = [
  prompt("TL;DR", { task: "web.summarize", key: 1 }),
  prompt("Translate to German"),
  prompt("What's the catch?"),
];

const reply = (msg: object) => ({ id: "h", reply_to: "r", ...msg }) as unknown as RoutedHostMessage;

const tick = () => new Promise((r) => setTimeout(r, 0));

function key(el: HTMLElement, k: string): KeyboardEvent {
  const e = new KeyboardEvent("keydown", { key: k, bubbles: true, cancelable: true });
  el.dispatchEvent(e);
  return e;
}

describe("the / menu's logic", () => {
  it("only a single line starting with / is a query", () => {
    expect(slashQuery("/tl")).toBe("tl");
    expect(slashQuery("/")).toBe("");
    expect(slashQuery("what /tl")).toBeNull();
    expect(slashQuery("/tl\nmore")).toBeNull();
  });

  it("names starting with the query come before names containing it, case aside", () => {
    expect(matchPrompts(library, "").map((p) => p.name)).toEqual(["TL;DR", "Translate to German", "What's the catch?"]);
    expect(matchPrompts(library, "T").map((p) => p.name)).toEqual(["TL;DR", "Translate to German", "What's the catch?"]);
    expect(matchPrompts(library, "cat").map((p) => p.name)).toEqual(["What's the catch?"]);
    expect(matchPrompts(library, "german").map((p) => p.name)).toEqual(["Translate to German"]);
    expect(matchPrompts(library, "zzz")).toEqual([]);
  });

  it("runs a prompt as its task; an extract's text lists its fields", () => {
    expect(promptQuestion(prompt("TL;DR", { task: "web.summarize" }))).toEqual({ task: "web.summarize", text: "TL;DR text", label: "TL;DR" });
    expect(promptQuestion(prompt("Specs", { task: "web.extract", text: "price, sku ,, weight" }))).toEqual({
      task: "web.extract",
      text: "Extract: price, sku, weight",
      label: "Specs",
      fields: ["price", "sku", "weight"],
    });
  });

  it("maps the manifest's commands to slots and nothing else", async () => {
    installFakeBrowser();
    const { promptSlot } = await import("../src/background/opening");
    expect(promptSlot("run-prompt-1")).toBe(1);
    expect(promptSlot("run-prompt-3")).toBe(3);
    expect(promptSlot("run-prompt-0")).toBeNull();
    expect(promptSlot("ask-selection")).toBeNull();
  });
});

describe("the / menu in the composer", () => {
  let field: HTMLTextAreaElement;
  let ran: SavedPrompt[];
  let sent: number;
  let menu: SlashMenu;
  let lists: number;

  beforeEach(() => {
    document.body.replaceChildren();
    field = document.createElement("textarea");
    document.body.append(field);
    ran = [];
    sent = 0;
    lists = 0;
    const lib = new PromptLibrary(async (req) => {
      lists++;
      expect(req).toEqual({ type: "prompts.list" });
      return reply({ type: "prompts.list.result", prompts: library });
    });
    menu = new SlashMenu(field, lib, (p) => ran.push(p));
    document.body.append(menu.el);
    // Enter-to-send, registered after the menu as in the sidebar.
    field.addEventListener("keydown", (e) => {
      if (e.key === "Enter") sent++;
    });
  });

  const type = async (text: string) => {
    field.value = text;
    field.dispatchEvent(new Event("input"));
    await tick();
  };
  const options = () => [...menu.el.querySelectorAll('[role="option"]')].map((o) => o.querySelector(".slash-name")?.textContent);

  it("lists, filters as the user types, and runs the chosen prompt with the keyboard", async () => {
    await type("/");
    expect(menu.isOpen).toBe(true);
    expect(field.getAttribute("aria-activedescendant")).toBe("slash-item-0");
    expect(options()).toEqual(["TL;DR", "Translate to German", "What's the catch?"]);
    await type("/t");
    expect(options()).toEqual(["TL;DR", "Translate to German", "What's the catch?"]);
    await type("/tr");
    expect(options()).toEqual(["Translate to German"]);
    await type("/");
    key(field, "ArrowDown");
    key(field, "ArrowDown");
    expect(field.getAttribute("aria-activedescendant")).toBe("slash-item-2");
    expect(menu.el.querySelector('[aria-selected="true"] .slash-name')?.textContent).toBe("What's the catch?");
    key(field, "ArrowUp");
    const enter = key(field, "Enter");
    expect(enter.defaultPrevented).toBe(true);
    expect(ran.map((p) => p.name)).toEqual(["Translate to German"]);
    expect(sent).toBe(0);
    expect(field.value).toBe("");
    expect(menu.isOpen).toBe(false);
    expect(lists).toBe(1);
  });

  it("wraps around, says when nothing matches, and Escape leaves the text", async () => {
    await type("/");
    key(field, "ArrowUp");
    expect(field.getAttribute("aria-activedescendant")).toBe("slash-item-2");
    await type("/nothing");
    expect(options()).toEqual([]);
    expect(menu.el.textContent).toContain("No saved prompt matches");
    key(field, "Enter");
    expect(ran).toEqual([]);
    expect(sent).toBe(0);
    key(field, "Escape");
    expect(menu.isOpen).toBe(false);
    expect(field.value).toBe("/nothing");
  });

  it("stays shut for ordinary questions, which Enter still sends", async () => {
    await type("What is /this?");
    expect(menu.isOpen).toBe(false);
    key(field, "Enter");
    expect(sent).toBe(1);
  });

  it("a click runs a prompt", async () => {
    await type("/cat");
    menu.el.querySelector('[role="option"]')?.dispatchEvent(new MouseEvent("mousedown", { bubbles: true, cancelable: true }));
    expect(ran.map((p) => p.name)).toEqual(["What's the catch?"]);
  });
});

describe("Settings → Saved prompts", () => {
  it("adds, edits and deletes prompts through the host, and shows its refusals in words", async () => {
    document.body.replaceChildren();
    let stored: SavedPrompt[] = [];
    const asked: SidebarHostRequest[] = [];
    const request = async (req: SidebarHostRequest): Promise<RoutedHostMessage> => {
      asked.push(req);
      switch (req.type) {
        case "prompts.list":
          return reply({ type: "prompts.list.result", prompts: stored });
        case "prompts.save": {
          if (stored.some((p) => p.name === req.prompt.name && p.id !== req.prompt.prompt_id)) {
            return reply({ type: "error", code: "PROMPT_NAME_TAKEN", message: "taken", retryable: false });
          }
          const saved = prompt(req.prompt.name, {
            id: req.prompt.prompt_id ?? `id-${stored.length}`,
            text: req.prompt.text,
            task: req.prompt.task as SavedPrompt["task"],
            key: req.prompt.key ?? null,
          });
          stored = [...stored.filter((p) => p.id !== saved.id), saved];
          return reply({ type: "prompts.save.result", prompt: saved, prompts: stored });
        }
        case "prompts.delete":
          stored = stored.filter((p) => p.id !== req.prompt_id);
          return reply({ type: "prompts.delete.result", prompt_id: req.prompt_id, deleted: true });
        default:
          throw new Error(`unexpected ${req.type}`);
      }
    };
    const lib = new PromptLibrary(request);
    const view = new PromptSettings({ request, library: lib });
    document.body.append(view.el);
    await view.load();
    expect(view.el.querySelector(".prompt-list")?.textContent).toContain("No saved prompts yet");

    const input = (id: string) => document.getElementById(id) as HTMLInputElement;
    input("prompt-name").value = "TL;DR";
    input("prompt-text").value = "Three bullets.";
    input("prompt-task").value = "web.summarize";
    input("prompt-slot").value = "2";
    await view.save();
    expect(asked.at(-1)).toEqual({
      type: "prompts.save",
      prompt: { prompt_id: null, name: "TL;DR", text: "Three bullets.", task: "web.summarize", key: 2 },
    });
    const item = view.el.querySelector(".prompt-item");
    expect(item?.textContent).toContain("TL;DR");
    expect(item?.textContent).toContain("Summarize · shortcut 2");
    expect(input("prompt-name").value).toBe("");
    // The composer's library sees the save without asking the host again.
    expect((await lib.inSlot(2))?.name).toBe("TL;DR");

    input("prompt-name").value = "TL;DR";
    input("prompt-text").value = "Again.";
    await view.save();
    expect(view.el.textContent).toContain("A saved prompt already has this name.");

    (view.el.querySelector('[aria-label="Edit TL;DR"]') as HTMLButtonElement).click();
    expect(input("prompt-text").value).toBe("Three bullets.");
    input("prompt-text").value = "Two bullets.";
    await view.save();
    expect(asked.at(-1)).toMatchObject({ type: "prompts.save", prompt: { prompt_id: "id-0", text: "Two bullets." } });
    expect(stored.map((p) => p.text)).toEqual(["Two bullets."]);

    (view.el.querySelector('[aria-label="Delete TL;DR"]') as HTMLButtonElement).click();
    await tick();
    await tick();
    expect(asked.some((r) => r.type === "prompts.delete" && r.prompt_id === "id-0")).toBe(true);
    expect(view.el.querySelector(".prompt-list")?.textContent).toContain("No saved prompts yet");
    expect(await lib.inSlot(2)).toBeUndefined();
  });
});
