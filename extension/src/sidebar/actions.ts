/**
 * The actions under an answer: copy it as Markdown, regenerate it, edit the
 * question and send it again.
 */
import type { AssistantMessage } from "../generated/wire.js";
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
  return bar;
}
