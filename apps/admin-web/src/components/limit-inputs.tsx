import { Group, NumberInput } from '@mantine/core';
import { useTranslation } from 'react-i18next';

const MBIT = 1_000_000;

/** A speed cap in Mbit/s (empty: uncapped), sent as bits per second. */
export function SpeedInput({
  label,
  value,
  onChange,
  error,
}: {
  label: string;
  value: number | null;
  onChange: (bps: number | null) => void;
  error?: string | undefined;
}) {
  const { t } = useTranslation();
  return (
    <NumberInput
      label={label}
      placeholder={t('limits.uncapped')}
      suffix=" Mbit/s"
      min={0}
      decimalScale={3}
      value={value === null ? '' : value / MBIT}
      onChange={(v) => onChange(v === '' || Number(v) <= 0 ? null : Math.round(Number(v) * MBIT))}
      error={error}
    />
  );
}

/** A device limit (empty: no limit). */
export function DeviceLimitInput({
  value,
  onChange,
  error,
}: {
  value: number | null;
  onChange: (limit: number | null) => void;
  error?: string | undefined;
}) {
  const { t } = useTranslation();
  return (
    <NumberInput
      label={t('limits.deviceLimit')}
      description={t('limits.deviceLimitHint')}
      placeholder={t('limits.noDeviceLimit')}
      min={1}
      max={1000}
      allowDecimal={false}
      value={value ?? ''}
      onChange={(v) => onChange(v === '' ? null : Math.trunc(Number(v)))}
      error={error}
    />
  );
}

/** The three limits on live connections, side by side. */
export function LiveLimitInputs({
  deviceLimit,
  uploadBps,
  downloadBps,
  onChange,
  errors,
}: {
  deviceLimit: number | null;
  uploadBps: number | null;
  downloadBps: number | null;
  onChange: (patch: { device_limit?: number | null; upload_bps?: number | null; download_bps?: number | null }) => void;
  errors: { device_limit?: string | undefined; upload_bps?: string | undefined; download_bps?: string | undefined };
}) {
  const { t } = useTranslation();
  return (
    <Group grow align="flex-start">
      <DeviceLimitInput value={deviceLimit} onChange={(v) => onChange({ device_limit: v })} error={errors.device_limit} />
      <SpeedInput
        label={t('limits.download')}
        value={downloadBps}
        onChange={(v) => onChange({ download_bps: v })}
        error={errors.download_bps}
      />
      <SpeedInput label={t('limits.upload')} value={uploadBps} onChange={(v) => onChange({ upload_bps: v })} error={errors.upload_bps} />
    </Group>
  );
}

/** "10 Mbit/s" for bits per second, in the reader's number format. */
export function formatSpeed(lng: string, bps: number): string {
  const mbit = bps / MBIT;
  return `${new Intl.NumberFormat(lng, { maximumFractionDigits: mbit < 10 ? 2 : 0 }).format(mbit)} Mbit/s`;
}
