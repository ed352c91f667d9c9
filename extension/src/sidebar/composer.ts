/**
 * The composer's keyboard: Enter (or Ctrl/⌘+Enter) sends, Shift+Enter
 * inserts a newline. While an input method is composing (Japanese, Chinese,
 * Korean…), Enter belongs to it and never sends.
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
