import QRCode from 'qrcode';
import { escapeHtml } from './html-escape.ts';

/**
 * A QR code as inline SVG, synchronously: `qrcode`'s `create()` computes the module matrix (byte
 * mode, error correction M, the mask it picks is deterministic) and this draws it. One `<path>`
 * holds the dark modules, one `M{x} {y}h{w}v1h-{w}z` per horizontal run; a white rect under it
 * keeps the code dark-on-light in dark mode too (scanners need that), and the 4-module quiet zone
 * is inside the viewBox. Size it with CSS.
 */

export const QR_QUIET_ZONE = 4;

/** The QR matrix: `size` x `size` modules, row-major, true = dark. */
export function qrMatrix(text: string): { size: number; dark: (x: number, y: number) => boolean } {
  const { modules } = QRCode.create(text, { errorCorrectionLevel: 'M' });
  return { size: modules.size, dark: (x, y) => modules.get(y, x) !== 0 };
}

/** The SVG path of the dark modules, offset by the quiet zone. */
export function qrPath(text: string): { viewBox: number; d: string } {
  const { size, dark } = qrMatrix(text);
  const runs: string[] = [];
  for (let y = 0; y < size; y++) {
    for (let x = 0; x < size; ) {
      if (!dark(x, y)) {
        x++;
        continue;
      }
      const start = x;
      while (x < size && dark(x, y)) x++;
      const w = x - start;
      runs.push(`M${start + QR_QUIET_ZONE} ${y + QR_QUIET_ZONE}h${w}v1h-${w}z`);
    }
  }
  return { viewBox: size + 2 * QR_QUIET_ZONE, d: runs.join('') };
}

/** `<svg>` of the QR code of `text`; `label` is its accessible name. */
export function qrSvg(text: string, label: string): string {
  const { viewBox, d } = qrPath(text);
  return (
    `<svg class="qr" xmlns="http://www.w3.org/2000/svg" viewBox="0 0 ${viewBox} ${viewBox}" role="img" ` +
    `aria-label="${escapeHtml(label)}" shape-rendering="crispEdges">` +
    `<rect width="${viewBox}" height="${viewBox}" fill="#fff"/><path fill="#000" d="${d}"/></svg>`
  );
}
