/**
 * Places inside what a tab shows that a chunk of its observation can stand
 * for: a PDF's page (`#page=N`, from the host's `pdf.read`) or a time in a
 * video (`t=`, from a transcript). A citation of such a chunk names the
 * place ("p. 12", "4:05") and opens it.
 */
import type { Observation } from "../generated/wire.js";

export interface Place {
  /** "p. 12" or "4:05". */
  label: string;
  /** The address that opens it (the chunk's own `url`). */
  url: string;
}

/** Seconds as a clock: "4:05", "1:02:03". */
export function clock(seconds: number): string {
  const s = Math.max(0, Math.floor(seconds));
  const hh = Math.floor(s / 3600);
  const mm = Math.floor((s % 3600) / 60);
  const ss = String(s % 60).padStart(2, "0");
  return hh ? `${hh}:${String(mm).padStart(2, "0")}:${ss}` : `${mm}:${ss}`;
}

/** The place a chunk address names, if any (only web and file addresses open). */
export function placeOf(url: string): Place | null {
  if (!/^(https?|file):/i.test(url)) return null;
  const page = /#page=(\d+)$/.exec(url);
  if (page) return { label: `p. ${Number(page[1])}`, url };
  const time = /[?&#]t=(\d+)s?$/.exec(url);
  if (time) return { label: clock(Number(time[1])), url };
  return null;
}

/** The place of each chunk, by chunk index − 1. */
export function chunkPlaces(observation: Observation): (Place | null)[] {
  return (observation.chunks ?? []).map((c) => placeOf(c.url));
}
