/**
 * The History view: the list (title, page, readable date), search results
 * with the matching words highlighted, one conversation in detail with its
 * answers rendered, and the actions on it: continue, export (Markdown, HTML,
 * JSON) and delete with a few seconds to undo.
 */
import type {
  ConversationDetail,
  ConversationSummary,
  SavedPrompt,
  SearchHit,
  SnippetPart,
} from "../generated/wire.js";
import type { SidebarHostRequest } from "../shared/messages.js";
import type { RoutedHostMessage } from "../shared/protocol.js";
import { $, announce, button, h } from "./dom.js";
import { sourcesMarkdown, toMarkdown } from "./markdown.js";
import { renderDoc } from "./render.js";
import { planChecklist } from "./plan-card.js";
import { describeCall } from "./steps.js";
import { isObject } from "../shared/json.js";
import { fullDate, relativeDate } from "./when.js";

/** How long a deleted conversation can still be brought back. */
export const UNDO_MS = 8000;

export interface HistoryDeps {
  request(req: SidebarHostRequest): Promise<RoutedHostMessage>;
  /** Opens the conversation in the chat view, where new questions continue it. */
  continueWith(conv: ConversationDetail): void;
}

type Reply<T extends RoutedHostMessage["type"]> = Extract<RoutedHostMessage, { type: T }>;

/** The answer to a request, as the result type it must be. */
export function expectReply<T extends RoutedHostMessage["type"]>(msg: RoutedHostMessage, type: T): Reply<T> {
  if (msg.type !== type) throw new Error(`Laika expected ${type} from the host, got ${msg.type}`);
  return msg as Reply<T>;
}

/** A snippet with its matching parts in `<mark>`. */
export function snippetNode(parts: SnippetPart[]): HTMLElement {
  const p = h("span", "snippet");
  for (const part of parts) p.append(part.highlight ? h("mark", undefined, part.text) : document.createTextNode(part.text));
  return p;
}

/** Where a conversation's page is, short: host and path. */
function pageLabel(url: string | null): string {
  if (!url) return "";
  try {
    const u = new URL(url);
    return `${u.host}${u.pathname === "/" ? "" : u.pathname}`;
  } catch {
    return url;
  }
}

function when(iso: string): HTMLElement {
  const t = h("time", "when", relativeDate(iso));
  t.setAttribute("datetime", iso);
  t.title = fullDate(iso);
  return t;
}

function row(title: string, meta: (Node | string)[], open: () => void, extra?: Node): HTMLElement {
  const li = h("li");
  const btn = button("", open, "history-item");
  btn.append(h("span", "history-title", title));
  if (extra) btn.append(extra);
  const m = h("span", "history-meta");
  meta.forEach((part, i) => {
    if (i) m.append(" · ");
    m.append(part);
  });
  btn.append(m);
  li.append(btn);
  return li;
}

function summaryRow(c: ConversationSummary, open: () => void): HTMLElement {
  const meta: (Node | string)[] = [];
  const page = pageLabel(c.page_url);
  if (page) meta.push(page);
  meta.push(c.turns === 1 ? "1 question" : `${c.turns} questions`, when(c.updated_at));
  const li = row(c.title || page || "Untitled conversation", meta, open);
  li.dataset["conversation"] = c.id;
  return li;
}

function hitRow(hit: SearchHit, open: () => void): HTMLElement {
  const li = row(hit.conversation_title || "Untitled conversation", [when(hit.created_at)], open, snippetNode(hit.snippet));
  li.dataset["conversation"] = hit.conversation_id;
  return li;
}

/** A file for the user to save, from text. */
function download(name: string, type: string, text: string): void {
  const url = URL.createObjectURL(new Blob([text], { type }));
  const a = document.createElement("a");
  a.href = url;
  a.download = name;
  document.body.append(a);
  a.click();
  a.remove();
  setTimeout(() => URL.revokeObjectURL(url), 60_000);
}

/** A conversation as Markdown: questions as headings, answers from their render AST. */
const TASK_WORDS: Record<string, string> = { "web.summarize": "Summary", "web.extract": "Extraction", "web.answer": "Question" };

/** The conversation as Markdown, and the saved prompts (exported with the history, as in the HTML and JSON exports). */
export function conversationMarkdown(conv: ConversationDetail, prompts: readonly SavedPrompt[] = []): string {
  const out = [`# ${conv.title || "Laika conversation"}`];
  if (conv.page_url) out.push(`Page: <${conv.page_url}>`);
  for (const t of conv.turns) {
    out.push(`## ${t.user_text}`);
    out.push(toMarkdown(t.render) || t.answer_text || `(${t.status})`);
    const sources = sourcesMarkdown(t.citations, conv.page_url);
    if (sources) out.push(sources);
  }
  if (prompts.length) {
    out.push("## Saved prompts");
    out.push(
      prompts
        .map((p) => {
          const how = `${TASK_WORDS[p.task] ?? "Question"}${p.key ? ` · shortcut ${p.key}` : ""}`;
          return `- **${p.name}** (${how}): ${p.text.replace(/\s+/g, " ").trim()}`;
        })
        .join("\n"),
    );
  }
  return `${out.join("\n\n")}\n`;
}

function fileStem(conv: ConversationDetail): string {
  const base = (conv.title || "conversation").replace(/[^\p{L}\p{N}]+/gu, "-").replace(/^-|-$/g, "").slice(0, 60);
  return `laika-${base || "conversation"}`;
}

export class HistoryView {
  private readonly list = $("history-list");
  private readonly detail = $("history-detail");
  private readonly toast = $("history-toast");
  /** Conversations deleted but still undoable: id → the timer that deletes them for real. */
  private readonly pending = new Map<string, ReturnType<typeof setTimeout>>();

  constructor(private readonly deps: HistoryDeps) {}

  async load(query: string): Promise<void> {
    this.list.replaceChildren(h("li", "notice", "Loading…"));
    this.detail.replaceChildren();
    try {
      const rows = query
        ? expectReply(await this.deps.request({ type: "history.search", query, limit: 50 }), "history.search.result")
            .hits.filter((hit) => !this.pending.has(hit.conversation_id))
            .map((hit) => hitRow(hit, () => void this.show(hit.conversation_id)))
        : expectReply(await this.deps.request({ type: "history.list", limit: 50, offset: 0 }), "history.list.result")
            .conversations.filter((c) => !this.pending.has(c.id))
            .map((c) => summaryRow(c, () => void this.show(c.id)));
      this.list.replaceChildren(...rows);
      if (rows.length === 0) this.list.append(h("li", "notice", query ? "Nothing found." : "No conversations yet."));
      announce(query ? `${rows.length} result(s) for ${query}` : `${rows.length} conversation(s)`);
    } catch (e) {
      this.list.replaceChildren(h("li", "error", e instanceof Error ? e.message : String(e)));
    }
  }

  async show(id: string): Promise<void> {
    this.detail.replaceChildren(h("p", "notice", "Loading…"));
    try {
      const conv = expectReply(await this.deps.request({ type: "history.get", conversation_id: id }), "history.get.result").conversation;
      this.renderDetail(conv);
    } catch (e) {
      this.detail.replaceChildren(h("p", "error", e instanceof Error ? e.message : String(e)));
    }
  }

  private renderDetail(conv: ConversationDetail): void {
    const title = h("h2", undefined, conv.title || "Untitled conversation");
    title.tabIndex = -1;
    const actions = h("div", "row history-actions");
    actions.append(
      button("Continue this conversation", () => this.deps.continueWith(conv), "primary"),
      button("Export Markdown", () => void this.exportMarkdown(conv)),
      button("Export HTML", () => void this.export(conv, "html")),
      button("Export JSON", () => void this.export(conv, "json")),
      button("Delete", () => this.remove(conv)),
    );
    this.detail.replaceChildren(title);
    if (conv.page_url) this.detail.append(h("p", "page", conv.page_url));
    this.detail.append(actions);
    for (const t of conv.turns) this.detail.append(turnBox(t));
    title.focus();
  }

  private async exportMarkdown(conv: ConversationDetail): Promise<void> {
    // Without the prompts (the host did not answer) the conversation is still exported.
    const prompts = await this.deps
      .request({ type: "prompts.list" })
      .then((r) => expectReply(r, "prompts.list.result").prompts)
      .catch(() => []);
    download(`${fileStem(conv)}.md`, "text/markdown", conversationMarkdown(conv, prompts));
    announce("Exported as Markdown");
  }

  private async export(conv: ConversationDetail, format: "html" | "json"): Promise<void> {
    try {
      const res = expectReply(
        await this.deps.request({ type: "history.export", conversation_id: conv.id, format }),
        "history.export.result",
      );
      if (res.format === "html") download(`${fileStem(conv)}.html`, "text/html", res.export);
      else download(`${fileStem(conv)}.json`, "application/json", JSON.stringify(res.export, null, 2));
      announce(`Exported as ${format.toUpperCase()}`);
    } catch (e) {
      this.showToast(e instanceof Error ? e.message : String(e));
    }
  }

  /** Hides the conversation now; the host deletes it only when the undo time is over. */
  private remove(conv: ConversationDetail): void {
    this.detail.replaceChildren();
    this.list.querySelector(`[data-conversation="${CSS.escape(conv.id)}"]`)?.remove();
    const timer = setTimeout(() => {
      this.pending.delete(conv.id);
      this.hideToast();
      void this.deps.request({ type: "history.delete", conversation_id: conv.id }).catch((e: unknown) => {
        this.showToast(`Could not delete: ${e instanceof Error ? e.message : String(e)}`);
      });
    }, UNDO_MS);
    this.pending.set(conv.id, timer);
    const undo = button("Undo", () => {
      clearTimeout(timer);
      this.pending.delete(conv.id);
      this.hideToast();
      announce("Conversation restored");
      void this.load("").then(() => this.show(conv.id));
    });
    this.showToast(`Deleted “${conv.title || "Untitled conversation"}”.`, undo);
    undo.focus();
  }

  private showToast(text: string, action?: HTMLElement): void {
    this.toast.replaceChildren(h("span", undefined, text));
    if (action) this.toast.append(action);
    this.toast.hidden = false;
  }

  private hideToast(): void {
    this.toast.hidden = true;
    this.toast.replaceChildren();
  }
}

/** One stored turn: the question, its steps, the answer as rendered (history detail, and a continued chat). */
export function turnBox(t: ConversationDetail["turns"][number], tag = "div", cls = "turn"): HTMLElement {
  const box = h(tag, cls);
  box.append(h("div", "user", t.user_text));
  // The plan the turn proposed, with how far each step got: the checklist the live card ended on.
  if (t.plan) box.append(planChecklist(document, t.plan));
  const calls = t.steps.flatMap((st) => st.calls.map((c) => ({ step: st.step, c })));
  if (calls.length) {
    const list = h("ol", "history-steps");
    list.setAttribute("aria-label", "Steps");
    for (const { step, c } of calls) {
      const mark = c.status === "ok" ? "✓" : c.status === "denied" ? "⊘" : "✗";
      // Worded as the live step list words it, not by the tool's name.
      const args = isObject(c.arguments) ? c.arguments : {};
      const li = h("li", undefined, `${mark} Step ${step}: ${describeCall(c.name, args, null)} — ${c.summary || c.status}`);
      li.dataset["status"] = c.status;
      li.dataset["tool"] = c.name;
      list.append(li);
    }
    box.append(list);
  }
  const answer = h("div", "answer");
  const rendered = renderDoc(document, t.render);
  if (rendered.hasChildNodes()) answer.append(rendered);
  else answer.append(h("p", t.error ? "error" : "notice", t.answer_text || t.error?.message || t.status));
  const offered = choicesOffered(t.response_packet);
  if (offered.length) answer.append(h("p", "notice history-choices", `Choices offered: ${offered.join(" · ")}`));
  const suggested = repliesOf(t.response_packet, "follow_ups");
  if (suggested.length) answer.append(h("p", "notice history-follow-ups", `Suggested questions: ${suggested.join(" · ")}`));
  box.append(answer, when(t.created_at));
  return box;
}


/** A stored clarifying question's choices (read from its response packet, which older rows lack). */
function choicesOffered(packet: unknown): string[] {
  return isObject(packet) && packet["mode"] === "clarify" ? repliesOf(packet, "choices") : [];
}

/** The replies a stored answer offered under `assistant[field]` (`choices`, `follow_ups`). */
function repliesOf(packet: unknown, field: string): string[] {
  if (!isObject(packet) || !isObject(packet["assistant"])) return [];
  const replies = packet["assistant"][field];
  return Array.isArray(replies) ? replies.filter((c): c is string => typeof c === "string") : [];
}
