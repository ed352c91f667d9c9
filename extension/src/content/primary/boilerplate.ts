/**
 * The vocabulary of boilerplate inside an article container: class/id words
 * that name page furniture, and short lines that carry publication metadata
 * rather than prose (bylines, datelines, photo credits, a bare link).
 *
 * Page furniture is named the same way across sites, and in the languages
 * of the web's largest news sites, so the lists hold the common word for
 * each kind of widget in English, German, French, Spanish, Italian,
 * Portuguese, Dutch and the Nordic languages, plus CJK dateline labels. No
 * entry names one site. Only short lines are tested (see `pruneArticle`),
 * and nothing here can remove a large share of the article.
 */

/** Words (from class/id, split on separators and camelCase) that mark boilerplate. */
export const NOISE_WORDS = new Set([
  // advertising and ad networks
  "ad", "ads", "advert", "advertisement", "advertorial", "sponsor", "sponsored", "outbrain", "taboola",
  "werbung", "anzeige", "publicité", "publicite", "publicidad", "pubblicità", "pubblicita", "publicidade",
  "reclame", "reklame", "reklam", "annonse",
  // who wrote it and when
  "author", "bio", "byline", "dateline", "date", "timestamp", "autor", "auteur", "autore", "datum", "fecha",
  // figures
  "caption", "captions", "credit", "credits", "gallery", "photo", "slideshow", "carousel", "rollover",
  "bildunterschrift", "légende", "legende", "didascalia", "leyenda",
  // sharing
  "share", "sharing", "social", "teilen", "partager", "partage", "compartir", "condividi", "compartilhar", "delen",
  // related and recommended links
  "related", "recommended", "recirc", "promo", "trending", "verwandt", "similaires", "relacionados",
  "relacionadas", "correlati", "gerelateerd",
  // comments
  "comment", "comments", "kommentar", "kommentare", "commentaires", "comentarios", "comentários", "commenti",
  "reacties",
  // subscription
  "newsletter", "subscribe", "subscription", "abonnieren", "abonnement", "suscripción", "suscripcion", "iscriviti",
  // navigation and overlays
  "breadcrumb", "breadcrumbs", "tags", "toolbar", "tooltip", "popover", "copyright", "disclaimer",
]);

/** A byline: the word for "by" and a capitalised name, not a sentence
 * ("Por sua causa, Carlos." is dialogue, "Por Ana Ruiz" a byline). */
const BYLINE = /^(by|von|par|por|door|av|af)\s+\p{Lu}.*[^.!?]$/isu;
const BYLINE_WORD = /^\S+\s+\p{Lu}/u;

/** A dateline or credit label: "Published …", "Photo: …", "投稿日 …". */
const META_LINE = new RegExp(
  [
    "^(updated|posted|published|last (updated|modified)|veröffentlicht|aktualisiert|publié|mis à jour|publicado|actualizado|pubblicato|aggiornato|atualizado|gepubliceerd|bijgewerkt|publicerad|uppdaterad)(?=[\\s:,]|$)",
    "^(image (copyright|caption)|photo|foto|bild|crédit|credit|crédito|credito|fotografía)\\s*:",
    "^\\(image:",
    "^(投稿日|更新日|公開日|配信日|发布时间|發佈時間|작성일|입력)",
  ].join("|"),
  "iu",
);

/** A photo credit: "Jane Doe | Agency | Getty Images" (names between bars, no sentence). */
const CREDIT_LINE = /^[^|.!?]{1,80}(\s\|\s[^|.!?]{1,60}){2,}$/u;

/** A bare address shown as text: never prose. */
const URL_LINE = /^(https?:\/\/|www\.)\S+$/iu;

/** Whether a short block's flattened text is metadata rather than article prose. */
export function isMetaLine(text: string): boolean {
  const byline = BYLINE.test(text) && BYLINE_WORD.test(text);
  return byline || META_LINE.test(text) || CREDIT_LINE.test(text) || URL_LINE.test(text);
}
