/**
 * The composer's keyboard: Enter (or Ctrl/⌘+Enter) sends, Shift+Enter
 * inserts a newline. While an input method is composing (Japanese, Chinese,
 * Korean…), Enter belongs to it and never sends. On a narrow panel its
 * secondary controls fold into one menu.
 */
export function sendsOnEnter(e: Pick<KeyboardEvent, "key" | "shiftKey" | "isComposing" | "altKey">): boolean {
  return e.key === "Enter" && !e.shiftKey && !e.altKey && !e.isComposing;
}

export function wireEnterToSend(field: HTMLTextAreaElement, form: HTMLFormElement): void {
  field.addEventListener("keydown", (e) => {
    // keyCode 229: some browsers report IME composition only this way.
    if (!sendsOnEnter(e) || e.keyCode === 229) return;
    e.preventDefault();
    form.requestSubmit();
  });
}

/** Panels narrower than this get the compact composer. */
const NARROW = "(max-width: 479px)";

/**
 * The mode, selection and tabs controls (`more`) fold into one menu on a
 * narrow panel, so the composer stays small; on a wide one they are always
 * shown (the menu's toggle hidden).
 */
export function foldOnNarrowPanels(more: HTMLDetailsElement): void {
  const narrow = window.matchMedia(NARROW);
  const fit = (): void => {
    more.open = !narrow.matches;
    if (narrow.matches) delete more.dataset["wide"];
    else more.dataset["wide"] = "true";
  };
  narrow.addEventListener("change", fit);
  fit();
}
