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

export class FollowLatest {
  private following = true;
  private lastTop = 0;
  private readonly scroller: Element;

  constructor(
    private readonly messages: HTMLElement,
    private readonly jump: HTMLButtonElement,
    header: HTMLElement,
    composer: HTMLElement,
  ) {
    this.scroller = document.scrollingElement ?? document.documentElement;
    window.addEventListener("scroll", () => this.onScroll(), { passive: true });
    new ResizeObserver(() => this.onResize()).observe(messages);
    const root = document.documentElement;
    const bars = new ResizeObserver(() => {
      root.style.scrollPaddingTop = `${header.offsetHeight}px`;
      root.style.scrollPaddingBottom = `${composer.offsetHeight}px`;
    });
    bars.observe(header);
    bars.observe(composer);
    jump.addEventListener("click", () => this.toLatest());
  }

  /** Follows the end again and goes there (a new question, a conversation opened, the button). */
  toLatest(): void {
    this.following = true;
    this.scroller.scrollTop = this.scroller.scrollHeight;
    this.lastTop = this.scroller.scrollTop;
    this.jump.hidden = true;
  }

  private distanceToEnd(): number {
    return this.scroller.scrollHeight - this.scroller.scrollTop - this.scroller.clientHeight;
  }

  private onScroll(): void {
    const top = this.scroller.scrollTop;
    // Only the user scrolls up: following scrolls down, and content that shrinks leaves us at the end.
    if (this.distanceToEnd() <= AT_END_PX) this.following = true;
    else if (top < this.lastTop) this.following = false;
    this.lastTop = top;
    this.jump.hidden = this.following;
  }

  private onResize(): void {
    // A hidden chat (History or Settings shown) has nothing to follow.
    if (this.messages.offsetParent === null) return;
    if (this.following) this.toLatest();
    else this.jump.hidden = this.distanceToEnd() <= AT_END_PX;
  }
}
