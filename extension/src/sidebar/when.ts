/** Readable relative dates ("5 minutes ago", "yesterday"), in the browser's language. */

const UNITS: [Intl.RelativeTimeFormatUnit, number][] = [
  ["year", 365 * 24 * 3600],
  ["month", 30 * 24 * 3600],
  ["week", 7 * 24 * 3600],
  ["day", 24 * 3600],
  ["hour", 3600],
  ["minute", 60],
];

/** `iso` relative to `now`; an unreadable date comes back as it was. */
export function relativeDate(iso: string, now: Date = new Date(), locale?: string): string {
  const t = Date.parse(iso);
  if (Number.isNaN(t)) return iso;
  const seconds = Math.round((t - now.getTime()) / 1000);
  const fmt = new Intl.RelativeTimeFormat(locale, { numeric: "auto" });
  for (const [unit, size] of UNITS) {
    if (Math.abs(seconds) >= size) return fmt.format(Math.trunc(seconds / size), unit);
  }
  return fmt.format(0, "second");
}

/** The full local date and time, for a tooltip next to the relative one. */
export function fullDate(iso: string, locale?: string): string {
  const t = Date.parse(iso);
  return Number.isNaN(t) ? iso : new Date(t).toLocaleString(locale);
}
