/**
 * The few numeric choices of main-content extraction, in one place so the
 * held-out harness (`tests/extraction/heldout.mjs`) can score alternatives:
 * each value is chosen on some sites and scored on others (split by site),
 * never tuned on the pages it is scored on. The defaults are the choice
 * made on the whole public corpus by that same rule; docs/PERFORMANCE.md
 * has the figures.
 */
export interface PrimaryOptions {
  /** A pruned node must hold less than this share of the article's text,
   * so a misleading class on the real container cannot empty the result. */
  shareGuard: number;
  /** A list or container whose link text is above this share of its text is
   * navigation or a "related" list. */
  linkDensity: number;
  /** Read only the schema.org `articleBody` the page marks, when it marks one (`hints.ts`). */
  markedBody: boolean;
}

export const DEFAULT_PRIMARY_OPTIONS: Readonly<PrimaryOptions> = {
  shareGuard: 0.3,
  linkDensity: 0.5,
  markedBody: true,
};
