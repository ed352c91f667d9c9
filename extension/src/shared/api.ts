/**
 * The WebExtension API object: `browser` on Firefox (promise-based), `chrome`
 * on Chromium (promise-based in MV3). Both are typed as `chrome`.
 */
declare const browser: typeof chrome | undefined;
declare global {
  const __LAIKA_BROWSER__: "chromium" | "firefox";
}

export const ext: typeof chrome = typeof browser !== "undefined" ? browser : chrome;

/** Which build this is ("chromium" or "firefox"); "test" under vitest. */
export const BUILD_BROWSER: string = typeof __LAIKA_BROWSER__ !== "undefined" ? __LAIKA_BROWSER__ : "test";
