import { Skeleton } from '@mantine/core';
import { useEffect, useState } from 'react';

/** A QR code of `value` drawn in the page (qrcode, loaded on first use), as an image with `label` for its alt text. */
export function QrCode({ value, label, size = 220 }: { value: string; label: string; size?: number }) {
  const [src, setSrc] = useState<string | null>(null);
  useEffect(() => {
    let live = true;
    import('qrcode')
      .then((qr) => qr.toDataURL(value, { margin: 2, width: size, errorCorrectionLevel: 'M' }))
      .then((url) => {
        if (live) setSrc(url);
      });
    return () => {
      live = false;
    };
  }, [value, size]);
  if (!src) return <Skeleton width={size} height={size} />;
  return <img src={src} width={size} height={size} alt={label} data-qr-value={value} style={{ background: '#fff', borderRadius: 8 }} />;
}
