/**
 * Element handles (`laika-<n>`). They live only in this content script's
 * memory: a page cannot forge or read them (nothing is written to the DOM).
 * An element keeps its handle across observations of the same document, and
 * everything is forgotten on navigation (`clear`).
 */
export class HandleRegistry {
  private byHandle = new Map<string, Element>();
  private byElement = new WeakMap<Element, string>();
  private next = 1;

  handleFor(el: Element): string {
    const known = this.byElement.get(el);
    if (known !== undefined) return known;
    const id = `laika-${this.next++}`;
    this.byHandle.set(id, el);
    this.byElement.set(el, id);
    return id;
  }

  /** The element behind a handle, if it is still in the document. */
  resolve(handle: string): Element | null {
    const el = this.byHandle.get(handle);
    if (!el || !el.isConnected) return null;
    return el;
  }

  clear(): void {
    this.byHandle.clear();
    this.byElement = new WeakMap();
    this.next = 1;
  }

  get size(): number {
    return this.byHandle.size;
  }
}
