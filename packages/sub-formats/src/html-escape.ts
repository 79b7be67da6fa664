/**
 * HTML escaping for text and double-quoted attribute values: the five characters that can end a
 * text run, an attribute or a tag (`&`, `<`, `>`, `"`, `'`). Everything else, emoji included,
 * passes through (the page is UTF-8).
 */
const ENTITIES: Record<string, string> = { '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' };

export function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (c) => ENTITIES[c] ?? c);
}
