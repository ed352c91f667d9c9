/**
 * Keeps the newest answer in view while it streams. The chat scrolls with
 * the end of the conversation, just above the sticky composer, unless the
 * user scrolled up to read: then it stays put and "Jump to latest" brings
 * the end back. The page's scroll padding is kept equal to the sticky
 * header and composer, so focus and "scroll into view" never land under
 * them either.
 */

/** Closer than this to the end counts as being at the end (px). */
const AT_END_PX = 24;

/** A scroll this soon after the user's wheel, touch or key is theirs (ms). */
const USER_MOVE_MS = 1000;

/** Keys typed into a field move the caret, not the page. */
function isTyping(target: EventTarget | null): boolean {
  return target instanceof HTMLElement && (target.isContentEditable || ["INPUT", "TEXTAREA", "SELECT"].includes(target.tagName));
}

export class FollowLatest {
  private following = true;
  /** When the user last moved the page themselves (wheel, touch, keys, the scrollbar). */
  private userMovedAt = -Infinity;
  private readonly scroller: Element;

  constructor(
    private readonly messages: HTMLElement,
    private readonly jump: HTMLButtonElement,
    header: HTMLElement,
    composer: HTMLElement,
  ) {
    this.scroller = document.scrollingElement ?? document.documentElement;
    window.addEventListener("scroll", () => this.onScroll(), { passive: true });
    // Only the user stops the following: content that changes size moves the page too, and must not.
    const moved = (): void => {
      this.userMovedAt = performance.now();
    };
    window.addEventListener("wheel", moved, { passive: true });
    window.addEventListener("touchmove", moved, { passive: true });
    window.addEventListener("keydown", (e) => {
      // Tab moves focus, and the page with it, wherever the user is going.
      if (e.key === "Tab" || (["PageUp", "PageDown", "Home", "End", "ArrowUp", "ArrowDown", " "].includes(e.key) && !isTyping(e.target))) moved();
    });
    // A press beside the page's content is on its scrollbar.
    window.addEventListener("mousedown", (e) => {
      if (e.clientX >= document.documentElement.clientWidth) moved();
    });
    new ResizeObserver(() => this.onResize()).observe(messages);
    const root = document.documentElement;
    const bars = new ResizeObserver(() => {
      root.style.scrollPaddingTop = `${header.offsetHeight}px`;
      root.style.scrollPaddingBottom = `${composer.offsetHeight}px`;
    });
    bars.observe(header);
    bars.observe(composer);
    jump.addEventListener("click", () => this.toLatest());
    // A page nobody sees is not scrolled (a sidebar opened as a background tab); it catches up when shown.
    document.addEventListener("visibilitychange", () => this.onResize());
  }

  /** Follows the end again and goes there (a new question, a conversation opened, the button). */
  toLatest(): void {
    this.following = true;
    this.scroller.scrollTop = this.scroller.scrollHeight;
    this.jump.hidden = true;
  }

  /**
   * Stops following without moving: for what is added below an answer that
   * ended (a card about it), which must not push the answer the user is
   * reading up under the header. "Jump to latest" shows what was added.
   */
  stay(): void {
    this.following = false;
  }

  private distanceToEnd(): number {
    return this.scroller.scrollHeight - this.scroller.scrollTop - this.scroller.clientHeight;
  }

  private onScroll(): void {
    if (this.distanceToEnd() <= AT_END_PX) this.following = true;
    else if (performance.now() - this.userMovedAt < USER_MOVE_MS) this.following = false;
    this.jump.hidden = this.following;
  }

  private onResize(): void {
    // A hidden chat (History or Settings shown, or the page not seen) has nothing to follow.
    if (this.messages.offsetParent === null || document.visibilityState === "hidden") return;
    if (this.following) this.toLatest();
    else this.jump.hidden = this.distanceToEnd() <= AT_END_PX;
  }
}
