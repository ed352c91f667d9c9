/** Small DOM helpers of the sidebar: text only, never HTML strings. */

export function $(id: string): HTMLElement {
  const el = document.getElementById(id);
  if (!el) throw new Error(`sidepanel.html lacks #${id}`);
  return el;
}

export function h(tag: string, cls?: string, text?: string): HTMLElement {
  const e = document.createElement(tag);
  if (cls) e.className = cls;
  if (text !== undefined) e.textContent = text;
  return e;
}

/** A settings section named by its own heading (id `titleId`), a hint under it. */
export function settingsSection(cls: string, titleId: string, title: string, hint: string): HTMLElement {
  const section = h("section", cls);
  section.setAttribute("aria-labelledby", titleId);
  const heading = h("h2", undefined, title);
  heading.id = titleId;
  section.append(heading, h("p", "hint", hint));
  return section;
}

export function button(label: string, onClick: () => void, cls?: string): HTMLButtonElement {
  const b = h("button", cls, label) as HTMLButtonElement;
  b.type = "button";
  b.addEventListener("click", onClick);
  return b;
}

/** Says `text` to screen readers once (the polite live region). */
export function announce(text: string): void {
  const region = document.getElementById("announcer");
  if (!region) return;
  region.textContent = "";
  // A change after clearing is what makes readers speak the same text twice.
  setTimeout(() => {
    region.textContent = text;
  }, 50);
}
