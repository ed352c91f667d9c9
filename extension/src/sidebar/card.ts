/**
 * The pieces every question card is made of (a call's approval, a long
 * page's estimate, a plan): a labelled group with a title, a row of
 * buttons, a status line that says what became of the answer, and a
 * countdown to the question's expiry. DOM APIs only; text via textContent.
 */

export interface CardFrame {
  root: HTMLElement;
  buttons: HTMLElement;
  status: HTMLElement;
}

function el(doc: Document, tag: string, cls?: string, text?: string): HTMLElement {
  const e = doc.createElement(tag);
  if (cls) e.className = cls;
  if (text !== undefined) e.textContent = text;
  return e;
}

/** A card titled `title`, announced as `label`; the caller adds its body, then appends `buttons` and `status`. */
export function cardFrame(doc: Document, cls: string, label: string, title: string): CardFrame {
  const root = el(doc, "div", cls);
  root.setAttribute("role", "group");
  root.setAttribute("aria-label", label);
  root.append(el(doc, "div", "approval-title", title));
  const status = el(doc, "div", "approval-status");
  const buttons = el(doc, "div", "row approval-buttons");
  return { root, buttons, status };
}

/** A button of a card's row (`primary`: the main choice). */
export function cardButton(doc: Document, text: string, primary = false): HTMLButtonElement {
  const b = el(doc, "button", primary ? "primary" : undefined, text) as HTMLButtonElement;
  b.type = "button";
  return b;
}

function countdownText(ms: number): string {
  const s = Math.max(0, Math.ceil(ms / 1000));
  return `Expires in ${Math.floor(s / 60)}:${String(s % 60).padStart(2, "0")}`;
}

/**
 * A countdown to the question's expiry at the end of `buttons`, ticking
 * each second until `expire` is called at zero; returns its interval, for
 * the card to stop once answered.
 */
export function countdown(doc: Document, buttons: HTMLElement, inMs: number, now: () => number, expire: () => void): ReturnType<typeof setInterval> {
  const deadline = now() + inMs;
  const timer = el(doc, "span", "countdown");
  timer.setAttribute("role", "timer");
  timer.setAttribute("aria-live", "off");
  buttons.append(timer);
  const tick = () => {
    const left = deadline - now();
    if (left <= 0) expire();
    else timer.textContent = countdownText(left);
  };
  tick();
  return setInterval(tick, 1000);
}
