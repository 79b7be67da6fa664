/**
 * A moment as every page and mail writes it: "2027-01-01 00:00 UTC" (minutes, cut, not
 * rounded: the moment has begun). One form for every locale and reader: the same instant reads
 * the same in a mail, on the page and in the API's ISO text, whatever the reader's time zone.
 * Accepts the API's ISO strings too; "" for what is not a date.
 */
export function formatDateTimeUtc(at: Date | string): string {
  const date = typeof at === 'string' ? new Date(at) : at;
  if (!Number.isFinite(date.getTime())) return '';
  const iso = date.toISOString();
  return `${iso.slice(0, 10)} ${iso.slice(11, 16)} UTC`;
}
