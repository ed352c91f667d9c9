/**
 * The sidebar's collections panel: the collections and artifacts the host
 * keeps; adding the current page or an open tab to a collection (a new one
 * named by the user); choosing the collection a question is answered over;
 * managing the chosen one (the host's transforms as buttons, a running one
 * stopped with Stop, its sources with Remove, rename, delete with a few
 * seconds to undo); and exporting an artifact as Markdown, text, JSON or
 * CSV to the clipboard or a file. Built with createElement/textContent only.
 */
import type { RoutedHostMessage } from "../shared/protocol.js";
import type { SidebarHostRequest, SidebarRequest } from "../shared/messages.js";
import { ext } from "../shared/api.js";
import { renderDoc } from "./render.js";
import { announce } from "./dom.js";
import { expectReply, UNDO_MS } from "./history.js";
import type { RenderDoc } from "../generated/wire.js";

type Reply<T extends RoutedHostMessage["type"]> = Extract<RoutedHostMessage, { type: T }>;
type CollectionsList = Reply<"collections.list.result">;
type Collection = CollectionsList["collections"][number];
type Transform = CollectionsList["transforms"][number];
type SourceSummary = Reply<"collection.get.result">["sources"][number];

export interface CollectionsDeps {
  /** A host request through the background; rejects with advice on an error. */
  request(req: SidebarHostRequest): Promise<RoutedHostMessage>;
  /** Sends a host request that can be stopped: its id, and its reply as `request` gives it. */
  start(req: SidebarHostRequest): { id: string; reply: Promise<RoutedHostMessage> };
  /** Stops the request sent with this id (the host then answers it with `CANCELLED`). */
  cancel(requestId: string): void;
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

function message(e: unknown): string {
  return e instanceof Error ? e.message : String(e);
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
  private readonly newName = h("input");
  private readonly newRow = h("div");
  private readonly manage = h("section");
  private readonly transforms = h("div");
  private readonly stop = h("button", "Stop");
  private readonly edit = h("details");
  private readonly sources = h("ul");
  private readonly rename = h("input");
  private readonly artifacts = h("ul");
  private readonly format = h("select");
  private readonly status = h("p");
  private readonly toast = h("div");
  private readonly view = h("div");
  private collections: Collection[] = [];
  /** Collections deleted but still undoable: id → the timer that deletes them for real. */
  private readonly pending = new Map<string, ReturnType<typeof setTimeout>>();
  /** The transform running (its buttons stay disabled until it ends), and whether the user stopped it. */
  private running: { id: string; stopped: boolean } | null = null;

  constructor(private readonly deps: CollectionsDeps) {
    this.el = h("details");
    this.el.className = "collections";
    this.el.id = "collections";
    this.el.append(h("summary", "Collections"));
    this.select.id = "collection-select";
    this.tabs.id = "collection-tabs";
    this.tabs.setAttribute("aria-label", "Open tab to add");
    this.format.id = "artifact-format";
    this.format.setAttribute("aria-label", "Export format");
    for (const f of FORMATS) this.format.append(new Option(f === "markdown" ? "Markdown" : f.toUpperCase(), f));
    this.status.className = "hint";
    this.status.id = "collections-status";
    this.status.setAttribute("role", "status");
    this.toast.className = "toast";
    this.toast.id = "collections-toast";
    this.toast.setAttribute("aria-live", "polite");
    this.toast.hidden = true;
    this.artifacts.className = "artifact-list";
    this.artifacts.id = "artifact-list";
    this.view.className = "artifact-view answer";
    this.view.id = "artifact-view";

    const label = h("label", "Answer over ");
    label.htmlFor = "collection-select";
    const over = h("div");
    over.className = "row collection-over";
    over.append(label, this.select);

    // A new collection gets the name typed here (else the page's title).
    this.newName.id = "collection-name";
    this.newName.type = "text";
    this.newName.maxLength = 200;
    this.newName.placeholder = "Name (else the page's title)";
    const nameLabel = h("label", "New collection");
    nameLabel.htmlFor = "collection-name";
    this.newRow.className = "row collection-new";
    this.newRow.append(nameLabel, this.newName);

    const addCurrent = button("Add this page", () => void this.add(null));
    addCurrent.id = "collection-add-page";
    const addTab = button("Add tab", () => {
      const id = Number(this.tabs.value);
      if (Number.isInteger(id)) void this.add(id);
    });
    addTab.id = "collection-add-tab";
    const adds = h("div");
    adds.className = "row collection-adds";
    adds.append(addCurrent, this.tabs, addTab);

    this.manage.id = "collection-manage";
    this.manage.className = "collection-manage";
    this.manage.setAttribute("aria-label", "The chosen collection");
    this.manage.hidden = true;
    this.transforms.className = "row transforms";
    this.transforms.id = "collection-transforms";
    this.stop.type = "button";
    this.stop.id = "collection-stop";
    this.stop.title = "Stop making it; nothing is saved";
    this.stop.hidden = true;
    this.stop.addEventListener("click", () => this.stopTransform());
    this.sources.className = "collection-sources";
    this.sources.id = "collection-sources";
    this.sources.setAttribute("aria-label", "Sources");
    this.rename.id = "collection-rename";
    this.rename.type = "text";
    this.rename.maxLength = 200;
    this.rename.setAttribute("aria-label", "Collection name");
    const renameForm = h("form");
    renameForm.className = "row collection-rename";
    const renameButton = h("button", "Rename");
    renameButton.type = "submit";
    renameButton.id = "collection-rename-save";
    renameForm.append(this.rename, renameButton);
    renameForm.addEventListener("submit", (e) => {
      e.preventDefault();
      void this.renameSelected();
    });
    const remove = button("Delete collection", () => this.deleteSelected());
    remove.id = "collection-delete";
    // Folded: the panel stays short enough to sit above the composer.
    this.edit.id = "collection-edit";
    this.edit.append(h("summary", "Sources, name, delete"), this.sources, renameForm, remove);
    this.manage.append(h("h3", "Make from its sources"), this.transforms, this.stop, this.edit);

    this.el.append(over, this.newRow, adds, this.manage, this.toast, h("h3", "Artifacts"), this.format, this.artifacts, this.view, this.status);
    this.select.addEventListener("change", () => void this.showSelected());
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

  /** The name of the collection questions are answered over, or null for the page. */
  selectedName(): string | null {
    return this.current()?.title ?? null;
  }

  /** Calls `f` when the user picks what questions are answered over. */
  onSelect(f: () => void): void {
    this.select.addEventListener("change", f);
  }

  private current(): Collection | undefined {
    return this.collections.find((c) => c.id === this.select.value);
  }

  private say(text: string): void {
    this.status.textContent = text;
  }

  async refresh(): Promise<void> {
    try {
      const reply = expectReply(await this.deps.request({ type: "collections.list" }), "collections.list.result");
      this.show(reply);
      await this.listTabs();
    } catch (e) {
      this.say(message(e));
    }
  }

  private show(list: CollectionsList): void {
    const keep = this.select.value;
    this.collections = list.collections.filter((c) => !this.pending.has(c.id));
    this.select.replaceChildren(new Option("This page", ""));
    for (const c of this.collections) this.select.append(new Option(`${c.title} (${c.source_count})`, c.id));
    this.select.value = this.collections.some((c) => c.id === keep) ? keep : "";
    this.showTransforms(list.transforms);
    this.artifacts.replaceChildren();
    for (const a of list.artifacts) {
      const li = h("li");
      const title = h("span", a.title);
      title.className = "artifact-title";
      title.title = a.title;
      li.append(title);
      li.append(button("Open", () => void this.open(a.id)));
      li.append(button("Copy", () => void this.export(a.id, "clipboard")));
      li.append(button("Download", () => void this.export(a.id, "file")));
      this.artifacts.append(li);
    }
    void this.showSelected();
  }

  private showTransforms(transforms: Transform[]): void {
    this.transforms.replaceChildren();
    for (const t of transforms) {
      const b = button(t.title, () => void this.transform(t));
      b.dataset["transform"] = t.id;
      b.title = `Make ${t.description}`;
      b.disabled = this.running !== null;
      this.transforms.append(b);
    }
  }

  /** The chosen collection's management, or the new-collection name for "This page". */
  private async showSelected(): Promise<void> {
    const c = this.current();
    this.newRow.hidden = c !== undefined;
    this.manage.hidden = c === undefined;
    if (!c) return;
    this.rename.value = c.title;
    try {
      const reply = expectReply(await this.deps.request({ type: "collection.get", collection_id: c.id }), "collection.get.result");
      if (this.select.value !== c.id) return;
      this.sources.replaceChildren(...reply.sources.map((s) => this.sourceRow(c, s)));
      if (reply.sources.length === 0) this.sources.append(h("li", "No sources yet."));
    } catch (e) {
      this.say(message(e));
    }
  }

  private sourceRow(c: Collection, s: SourceSummary): HTMLLIElement {
    const li = h("li");
    const title = h("span", s.title);
    title.className = "source-title";
    title.title = s.url ?? s.title;
    const remove = button("Remove", () => void this.removeSource(c, s));
    remove.setAttribute("aria-label", `Remove ${s.title}`);
    li.append(title, remove);
    return li;
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
    const collection = this.selected();
    const name = collection ? "" : this.newName.value.trim();
    try {
      const reply = expectReply(
        await this.deps.addPage({ collection_id: collection, tab_id: tabId, ...(name ? { title: name } : {}) }),
        "collection.add_page.result",
      );
      this.newName.value = "";
      this.say(`Added “${reply.title}” to “${reply.collection.title}”.`);
      await this.refresh();
      this.select.value = reply.collection.id;
      // Chosen here, not by the user: say so as a user's choice is said.
      this.select.dispatchEvent(new Event("change"));
    } catch (e) {
      this.say(message(e));
    }
  }

  private async renameSelected(): Promise<void> {
    const c = this.current();
    const title = this.rename.value.trim();
    if (!c) return;
    if (!title) {
      this.say("Type a name first.");
      return;
    }
    try {
      const reply = expectReply(await this.deps.request({ type: "collection.rename", collection_id: c.id, title }), "collection.rename.result");
      this.say(`Renamed to “${reply.collection.title}”.`);
      await this.refresh();
      // The name the chat's Reading line shows changed too.
      this.select.dispatchEvent(new Event("change"));
    } catch (e) {
      this.say(message(e));
    }
  }

  private async removeSource(c: Collection, s: SourceSummary): Promise<void> {
    try {
      const reply = expectReply(
        await this.deps.request({ type: "collection.remove_source", collection_id: c.id, source_id: s.id }),
        "collection.remove_source.result",
      );
      this.say(`Removed “${s.title}”; “${reply.collection.title}” has ${reply.collection.source_count} source(s).`);
      await this.refresh();
    } catch (e) {
      this.say(message(e));
    }
  }

  /** Hides the collection now; the host deletes it only when the undo time is over. */
  private deleteSelected(): void {
    const c = this.current();
    if (!c) return;
    const timer = setTimeout(() => {
      this.pending.delete(c.id);
      this.hideToast();
      void this.deps.request({ type: "collection.delete", collection_id: c.id }).catch((e: unknown) => {
        this.say(`Could not delete: ${message(e)}`);
      });
    }, UNDO_MS);
    this.pending.set(c.id, timer);
    this.collections = this.collections.filter((x) => x.id !== c.id);
    [...this.select.options].find((o) => o.value === c.id)?.remove();
    this.select.value = "";
    this.select.dispatchEvent(new Event("change"));
    const undo = button("Undo", () => {
      clearTimeout(timer);
      this.pending.delete(c.id);
      this.hideToast();
      announce("Collection restored");
      void this.refresh().then(() => {
        this.select.value = c.id;
        this.select.dispatchEvent(new Event("change"));
      });
    });
    undo.id = "collection-undo";
    this.toast.replaceChildren(h("span", `Deleted “${c.title}”.`), undo);
    this.toast.hidden = false;
    undo.focus();
  }

  private hideToast(): void {
    this.toast.hidden = true;
    this.toast.replaceChildren();
  }

  /** Runs a transform over the chosen collection; its artifact opens here. */
  private async transform(t: Transform): Promise<void> {
    const c = this.current();
    if (!c || this.running) return;
    const run = this.deps.start({ type: "transform.run", collection_id: c.id, transform: t.id });
    const running = { id: run.id, stopped: false };
    this.setRunning(running);
    this.say(`Making “${t.title}” from the ${c.source_count} source(s) of “${c.title}”…`);
    try {
      const made = expectReply(await run.reply, "transform.run.result");
      const left = made.sources_failed.length;
      await this.refresh();
      await this.open(made.artifact.id);
      this.say(
        `Made “${made.artifact.title}” from ${made.sources_read} source(s)` +
          (left ? `; ${left} could not be read (${made.sources_failed.map((f) => f.code).join(", ")}).` : "."),
      );
    } catch (e) {
      // The host saves nothing of a stopped transform.
      this.say(running.stopped ? `Stopped: “${t.title}” was not made, and nothing was saved.` : message(e));
    } finally {
      this.setRunning(null);
      // Stop, just used, is hidden now: focus goes back to the button that started the run.
      if (running.stopped) this.transforms.querySelector<HTMLButtonElement>(`[data-transform="${t.id}"]`)?.focus();
    }
  }

  /** Stop: the host stops the transform's model calls; its reply ends the run. */
  private stopTransform(): void {
    if (!this.running || this.running.stopped) return;
    this.running.stopped = true;
    this.stop.disabled = true;
    this.say("Stopping…");
    this.deps.cancel(this.running.id);
  }

  private setRunning(running: { id: string; stopped: boolean } | null): void {
    this.running = running;
    for (const b of this.transforms.querySelectorAll("button")) b.disabled = running !== null;
    this.stop.hidden = running === null;
    this.stop.disabled = false;
  }

  /** Shows the artifact in the panel, rendered like an answer. */
  private async open(artifactId: string): Promise<void> {
    try {
      const reply = expectReply(
        await this.deps.request({ type: "artifact.export", artifact_id: artifactId, format: "json" }),
        "artifact.export.result",
      );
      const stored: unknown = JSON.parse(reply.content);
      const doc = (stored as { doc?: RenderDoc | null }).doc;
      const text = (stored as { text?: string | null }).text;
      this.view.replaceChildren(doc ? renderDoc(document, doc) : h("pre", text ?? ""));
      this.say(`Opened “${reply.title}”.`);
    } catch (e) {
      this.say(message(e));
    }
  }

  private async export(artifactId: string, target: "clipboard" | "file"): Promise<void> {
    const format = this.format.value as Format;
    try {
      const reply = expectReply(
        await this.deps.request({ type: "artifact.export", artifact_id: artifactId, format }),
        "artifact.export.result",
      );
      if (target === "clipboard") {
        await navigator.clipboard.writeText(reply.content);
        this.say(`Copied “${reply.title}” as ${format}.`);
      } else {
        download(reply.filename, reply.mime, reply.content);
        this.say(`Saved ${reply.filename}.`);
      }
    } catch (e) {
      this.say(message(e));
    }
  }
}
