/**
 * Replies offered under an answer as buttons: a clarifying question's
 * choices and a summary's suggested follow-up questions. One click asks the
 * reply; the group's buttons are then disabled and kept as a record, the one
 * clicked marked. Only the newest answer's replies can be asked: a turn
 * that starts retires the groups above it.
 *
 * The texts are the host's (sanitized model output) and reach the DOM as
 * text only.
 */
import { h } from "./dom.js";

export interface ReplyGroup {
  /** The group's class (`choices`, `follow-ups`): what it offers. */
  kind: string;
  /** The group's accessible name. */
  label: string;
  /** A visible line above the buttons, when the buttons alone would not say what they do. */
  caption?: string;
  /** Asks `text`. */
  pick(text: string): void;
}

/** The buttons of `replies`, in a labelled group. */
export function replyButtons(replies: string[], group: ReplyGroup): HTMLElement {
  const box = h("div", `replies ${group.kind}`);
  box.setAttribute("role", "group");
  box.setAttribute("aria-label", group.label);
  if (group.caption) box.append(h("span", "replies-caption", group.caption));
  const buttons = replies.map((text) => {
    const b = document.createElement("button");
    b.className = "choice";
    b.type = "button";
    b.textContent = text;
    b.addEventListener("click", () => {
      retire(box);
      b.classList.add("chosen");
      group.pick(text);
    });
    return b;
  });
  box.append(...buttons);
  return box;
}

/** Disables every reply button under `root`: its answers are no longer the newest. */
export function retireReplies(root: ParentNode): void {
  for (const box of Array.from(root.querySelectorAll(".replies"))) retire(box);
}

function retire(box: Element): void {
  for (const b of Array.from(box.querySelectorAll("button"))) b.disabled = true;
}
