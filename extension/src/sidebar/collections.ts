/**
 * The sidebar's collections panel: the collections and artifacts the host
 * keeps, adding the current page or an open tab to a collection, choosing
 * the collection a question is answered over, and exporting an artifact as
 * Markdown, text, JSON or CSV to the clipboard or a file. Built with
 * createElement/textContent only.
 */
import type { RoutedHostMessage } from "../shared/protocol.js";
import type { SidebarHostRequest, SidebarRequest } from "../shared/messages.js";
import { ext } from "../shared/api.js";
import { renderDoc } from "./render.js";
import type { RenderDoc } from "../generated/wire.js";

type Reply<T extends RoutedHostMessage["type"]> = Extract<RoutedHostMessage, { type: T }>;
type CollectionsList = Reply<"collections.list.result">;

export interface CollectionsDeps {
  /** A host request through the background; rejects with advice on an error. */
  request(req: SidebarHostRequest): Promise<RoutedHostMessage>;
  /** Sends `add_page` and resolves with the host's reply. */
  addPage(req: Omit<Extract<SidebarRequest, { kind: "add_page" }>, "kind" | "request_id">): Promise<RoutedHostMessage>;
}

const FORMATS = ["markdown", "text", "json", "csv"] as const;
type Format = (typeof FORMATS)[number];

function h<K extends keyof HTMLElementTagNameMap>(tag: K, text?: string): HTMLElementTagNameMap[K] {
  const e = document.createElement(tag);
  if (text !== undefined) e.textContent = text;
  return e;
}

function button(label: string, onClick: () => void): HTMLButtonElement {
  const b = h("button", label);
  b.type = "button";
  b.addEventListener("click", onClick);
  return b;
}

/** Saves `content` as a file through a temporary object URL. */
export function download(filename: string, mime: string, content: string): void {
  const url = URL.createObjectURL(new Blob([content], { type: `${mime};charset=utf-8` }));
  const a = h("a");
  a.href = url;
  a.download = filename;
  a.rel = "noopener";
  document.body.append(a);
  a.click();
  a.remove();
  setTimeout(() => URL.revokeObjectURL(url), 10_000);
}

export class CollectionsPanel {
  readonly el: HTMLElement;
  private readonly select = h("select");
  private readonly tabs = h("select");
  private readonly artifacts = h("ul");
  private readonly format = h("select");
  private readonly status = h("p");
  private readonly view = h("div");

  constructor(private readonly deps: CollectionsDeps) {
    this.el = h("details");
    this.el.className = "collections";
    this.el.id = "collections";
    this.el.append(h("summary", "Collections"));
    this.select.id = "collection-select";
    this.select.setAttribute("aria-label", "Answer over");
    this.tabs.id = "collection-tabs";
    this.tabs.setAttribute("aria-label", "Open tab to add");
    this.format.id = "artifact-format";
    this.format.setAttribute("aria-label", "Export format");
    for (const f of FORMATS) this.format.append(new Option(f === "markdown" ? "Markdown" : f.toUpperCase(), f));
    this.status.className = "hint";
    this.status.setAttribute("role", "status");
    this.artifacts.className = "artifact-list";
    this.view.className = "artifact-view answer";
    this.view.id = "artifact-view";
    this.artifacts.id = "artifact-list";

    const addCurrent = button("Add this page", () => void this.add(null));
    addCurrent.id = "collection-add-page";
    const addTab = button("Add tab", () => {
      const id = Number(this.tabs.value);
      if (Number.isInteger(id)) void this.add(id);
    });
    addTab.id = "collection-add-tab";
    const label = h("label", "Answer over ");
    label.append(this.select);
    this.el.append(label, addCurrent, this.tabs, addTab, h("h3", "Artifacts"), this.format, this.artifacts, this.view, this.status);
    this.el.addEventListener("toggle", () => {
      if (!(this.el as HTMLDetailsElement).open) return;
      // Opened just above the sticky composer: brought into view above it (the page's scroll padding).
      this.el.scrollIntoView({ block: "nearest" });
      void this.refresh();
    });
  }

  /** The collection questions are answered over, or null for the page. */
  selected(): string | null {
    return this.select.value || null;
  }

  /** The name of the collection questions are answered over (as its option shows it), or null for the page. */
  selectedName(): string | null {
    return this.select.value ? (this.select.selectedOptions[0]?.textContent ?? null) : null;
  }

  /** Calls `f` when the user picks what questions are answered over. */
  onSelect(f: () => void): void {
    this.select.addEventListener("change", f);
  }

  private say(text: string): void {
    this.status.textContent = text;
  }

  async refresh(): Promise<void> {
    try {
      const reply = await this.deps.request({ type: "collections.list" });
      if (reply.type !== "collections.list.result") throw new Error(`unexpected ${reply.type}`);
      this.show(reply);
      await this.listTabs();
    } catch (e) {
      this.say(e instanceof Error ? e.message : String(e));
    }
  }

  private show(list: CollectionsList): void {
    const keep = this.select.value;
    this.select.replaceChildren(new Option("This page", ""));
    for (const c of list.collections) {
      this.select.append(new Option(`${c.title} (${c.source_count})`, c.id));
    }
    this.select.value = list.collections.some((c) => c.id === keep) ? keep : "";
    this.artifacts.replaceChildren();
    for (const a of list.artifacts) {
      const li = h("li");
      li.append(h("span", a.title));
      li.append(button("Open", () => void this.open(a.id)));
      li.append(button("Copy", () => void this.export(a.id, "clipboard")));
      li.append(button("Download", () => void this.export(a.id, "file")));
      this.artifacts.append(li);
    }
  }

  private async listTabs(): Promise<void> {
    const tabs = await ext.tabs.query({}).catch(() => []);
    this.tabs.replaceChildren();
    for (const t of tabs) {
      if (t.id === undefined || !/^https?:/.test(t.url ?? "")) continue;
      this.tabs.append(new Option(t.title || t.url || String(t.id), String(t.id)));
    }
  }

  private async add(tabId: number | null): Promise<void> {
    this.say("Adding the page…");
    try {
      const reply = await this.deps.addPage({ collection_id: this.selected(), tab_id: tabId });
      if (reply.type !== "collection.add_page.result") throw new Error(`unexpected ${reply.type}`);
      this.say(`Added “${reply.title}” to “${reply.collection.title}”.`);
      await this.refresh();
      this.select.value = reply.collection.id;
      // Chosen here, not by the user: say so as a user's choice is said.
      this.select.dispatchEvent(new Event("change"));
    } catch (e) {
      this.say(e instanceof Error ? e.message : String(e));
    }
  }

  /** Shows the artifact in the panel, rendered like an answer. */
  private async open(artifactId: string): Promise<void> {
    try {
      const reply = await this.deps.request({ type: "artifact.export", artifact_id: artifactId, format: "json" });
      if (reply.type !== "artifact.export.result") throw new Error(`unexpected ${reply.type}`);
      const stored: unknown = JSON.parse(reply.content);
      const doc = (stored as { doc?: RenderDoc | null }).doc;
      const text = (stored as { text?: string | null }).text;
      this.view.replaceChildren(doc ? renderDoc(document, doc) : h("pre", text ?? ""));
      this.say(`Opened “${reply.title}”.`);
    } catch (e) {
      this.say(e instanceof Error ? e.message : String(e));
    }
  }

  private async export(artifactId: string, target: "clipboard" | "file"): Promise<void> {
    const format = this.format.value as Format;
    try {
      const reply = await this.deps.request({ type: "artifact.export", artifact_id: artifactId, format });
      if (reply.type !== "artifact.export.result") throw new Error(`unexpected ${reply.type}`);
      if (target === "clipboard") {
        await navigator.clipboard.writeText(reply.content);
        this.say(`Copied “${reply.title}” as ${format}.`);
      } else {
        download(reply.filename, reply.mime, reply.content);
        this.say(`Saved ${reply.filename}.`);
      }
    } catch (e) {
      this.say(e instanceof Error ? e.message : String(e));
    }
  }
}
