/**
 * The actions under an answer: copy it as Markdown, regenerate it, edit the
 * question and send it again.
 */
import type { AssistantMessage } from "../generated/wire.js";
import { isObject } from "../shared/json.js";
import { announce, button, h } from "./dom.js";
import { sourcesMarkdown, toMarkdown } from "./markdown.js";

export interface AnswerActionDeps {
  regenerate(): void;
  edit(): void;
}

/** Markdown of an answer with its citations as a numbered list of sources. */
export function answerMarkdown(msg: AssistantMessage): string {
  const body = toMarkdown(msg.render);
  const sources = sourcesMarkdown(msg.citations);
  return sources ? `${body}\n\n${sources}\n` : `${body}\n`;
}

/** One CSV field (RFC 4180): quoted when it holds a comma, quote or line break. */
function csvField(v: string): string {
  return /[",\r\n]/.test(v) ? `"${v.replace(/"/g, '""')}"` : v;
}

/**
 * An extraction's fields as CSV: one row per field, its value as shown
 * (text as it is, anything else as JSON, empty when the page did not say).
 */
export function dataCsv(data: Record<string, unknown>): string {
  const rows = Object.entries(data).map(([key, value]) => {
    const shown = value === null ? "" : typeof value === "string" ? value : JSON.stringify(value);
    return `${csvField(key)},${csvField(shown)}`;
  });
  return `field,value\r\n${rows.join("\r\n")}\r\n`;
}

export async function copyText(text: string): Promise<boolean> {
  try {
    await navigator.clipboard.writeText(text);
    return true;
  } catch {
    // No clipboard permission (e.g. the page lost focus): the old way still works in extension pages.
    const area = document.createElement("textarea");
    area.value = text;
    document.body.append(area);
    area.select();
    const ok = document.execCommand("copy");
    area.remove();
    return ok;
  }
}

export function answerActions(msg: AssistantMessage, deps: AnswerActionDeps): HTMLElement {
  const bar = h("div", "answer-actions");
  bar.setAttribute("role", "group");
  bar.setAttribute("aria-label", "Answer actions");
  const copy = button("Copy", () => {
    void copyText(answerMarkdown(msg)).then((ok) => {
      copy.textContent = ok ? "Copied" : "Copy failed";
      announce(ok ? "Answer copied as Markdown" : "Could not copy the answer");
      setTimeout(() => (copy.textContent = "Copy"), 2000);
    });
  });
  copy.title = "Copy the answer as Markdown";
  copy.classList.add("act-copy");
  const again = button("Regenerate", deps.regenerate, "act-regenerate");
  again.title = "Ask the same question again";
  const edit = button("Edit question", deps.edit, "act-edit");
  edit.title = "Put the question back in the box to change and resend it";
  bar.append(copy, again, edit);
  const data = msg.data;
  if (isObject(data)) {
    const csv = button("Copy table (CSV)", () => {
      void copyText(dataCsv(data)).then((ok) => {
        csv.textContent = ok ? "Copied" : "Copy failed";
        announce(ok ? "Table copied as CSV" : "Could not copy the table");
        setTimeout(() => (csv.textContent = "Copy table (CSV)"), 2000);
      });
    });
    csv.title = "Copy the extracted fields as CSV, for a spreadsheet";
    csv.classList.add("act-csv");
    bar.append(csv);
  }
  return bar;
}
