import jsQR from 'jsqr';
import { type DefaultTreeAdapterMap, parse } from 'parse5';

/**
 * Test helpers: the page parsed the way a browser parses it (parse5 implements the WHATWG HTML
 * parsing algorithm), small queries over the tree, and a QR reader for the page's SVG codes.
 */

type Node = DefaultTreeAdapterMap['node'];
export type Element = DefaultTreeAdapterMap['element'];
export type Document = DefaultTreeAdapterMap['document'];

/** The parsed document and the parse errors (error codes) the parser reported. */
export function parseHtml(html: string): { document: Document; errors: string[] } {
  const errors: string[] = [];
  const document = parse(html, { onParseError: (e) => errors.push(`${e.code} at ${e.startLine}:${e.startCol}`) });
  return { document, errors };
}

const isElement = (node: Node): node is Element => 'tagName' in node;
const childrenOf = (node: Node): Node[] => {
  const content = (node as { content?: Node }).content; // <template>
  return [...('childNodes' in node ? node.childNodes : []), ...(content ? [content] : [])];
};

/** Every element under `root` (document order) that `match` accepts. */
export function findAll(root: Node, match: (el: Element) => boolean): Element[] {
  const found: Element[] = [];
  const walk = (node: Node) => {
    if (isElement(node) && match(node)) found.push(node);
    for (const child of childrenOf(node)) walk(child);
  };
  walk(root);
  return found;
}

export const byTag = (root: Node, tag: string) => findAll(root, (el) => el.tagName === tag);

export function attr(el: Element, name: string): string | undefined {
  return el.attrs.find((a) => a.name === name)?.value;
}

export const hasClass = (el: Element, cls: string) => (attr(el, 'class') ?? '').split(/\s+/).includes(cls);

export function byId(root: Node, id: string): Element {
  const [el, ...more] = findAll(root, (e) => attr(e, 'id') === id);
  if (!el || more.length > 0) throw new Error(`expected exactly one element #${id}, found ${more.length + (el ? 1 : 0)}`);
  return el;
}

/** textContent. */
export function text(node: Node): string {
  if (node.nodeName === '#text') return (node as DefaultTreeAdapterMap['textNode']).value;
  return childrenOf(node).map(text).join('');
}

/**
 * Reads a QR `<svg>` back: the viewBox gives the module count, the path's `M{x} {y}h{w}v1h-{w}z`
 * runs the dark modules (anything else in the path fails), drawn 4 px per module onto a white RGBA
 * image that jsQR decodes. Returns the decoded bytes as UTF-8 text.
 */
export function decodeQrSvg(svg: Element): string {
  const [, , size, sizeY] = (attr(svg, 'viewBox') ?? '').split(' ').map(Number);
  if (!size || size !== sizeY) throw new Error('QR svg needs a square viewBox');
  const [rect] = byTag(svg, 'rect');
  const paths = byTag(svg, 'path');
  if (!rect || attr(rect, 'fill') !== '#fff' || paths.length !== 1 || attr(paths[0]!, 'fill') !== '#000') {
    throw new Error('QR svg: expected a white background rect and one black path');
  }
  const d = attr(paths[0]!, 'd') ?? '';
  const dark = new Set<number>();
  let consumed = 0;
  for (const m of d.matchAll(/M(\d+) (\d+)h(\d+)v1h-(\d+)z/g)) {
    const [, x, y, w, back] = m.map(Number) as [number, number, number, number, number];
    if (m.index !== consumed || w !== back) throw new Error(`unexpected path data at ${m.index}`);
    consumed += m[0].length;
    for (let i = 0; i < w; i++) dark.add(y * size + x + i);
  }
  if (consumed !== d.length) throw new Error('path data is not all M/h/v runs');
  const scale = 4;
  const px = size * scale;
  const rgba = new Uint8ClampedArray(px * px * 4).fill(255);
  for (let py = 0; py < px; py++) {
    for (let pxx = 0; pxx < px; pxx++) {
      if (!dark.has(Math.floor(py / scale) * size + Math.floor(pxx / scale))) continue;
      const o = (py * px + pxx) * 4;
      rgba[o] = rgba[o + 1] = rgba[o + 2] = 0;
    }
  }
  const read = (jsQR as unknown as { default?: typeof jsQR }).default ?? jsQR;
  const code = read(rgba, px, px, { inversionAttempts: 'dontInvert' });
  if (!code) throw new Error('jsQR found no QR code');
  return Buffer.from(code.binaryData).toString('utf8');
}
