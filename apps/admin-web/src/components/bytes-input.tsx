import { Group, NumberInput, Select } from '@mantine/core';
import { useState } from 'react';
import { useTranslation } from 'react-i18next';

const GIB = 1024 ** 3;

/** A traffic limit in GiB (or none): what people type, sent as bytes. */
export function GibInput({
  value,
  onChange,
  label,
  error,
}: {
  value: number | null;
  onChange: (bytes: number | null) => void;
  label: string;
  error?: string | undefined;
}) {
  const { t } = useTranslation();
  return (
    <Group gap="xs" align="flex-end" wrap="nowrap">
      <Select
        label={label}
        w={140}
        allowDeselect={false}
        value={value === null ? 'none' : 'limit'}
        onChange={(v) => onChange(v === 'none' ? null : (value ?? 100 * GIB))}
        data={[
          { value: 'none', label: t('subscriptions.unlimited') },
          { value: 'limit', label: t('subscriptions.limited') },
        ]}
      />
      {value !== null && (
        <NumberInput
          aria-label={t('subscriptions.limitGib')}
          suffix=" GiB"
          min={0}
          decimalScale={2}
          value={value / GIB}
          onChange={(v) => onChange(Math.round(Number(v || 0) * GIB))}
          error={error}
          style={{ flex: 1 }}
        />
      )}
    </Group>
  );
}

const UNITS = [
  { value: 'MiB', bytes: 1024 ** 2 },
  { value: 'GiB', bytes: GIB },
  { value: 'TiB', bytes: 1024 ** 4 },
] as const;

/** An amount of traffic with its unit (MiB, GiB, TiB), sent as bytes (null until a positive amount is typed). */
export function BytesInput({
  label,
  unitLabel,
  value,
  onChange,
  error,
}: {
  label: string;
  unitLabel: string;
  value: number | null;
  onChange: (bytes: number | null) => void;
  error?: string | undefined;
}) {
  const [amount, setAmount] = useState<number | ''>(() => (value === null ? '' : value / GIB));
  const [unit, setUnit] = useState<(typeof UNITS)[number]['value']>('GiB');
  const send = (a: number | '', u: string) => {
    const per = UNITS.find((x) => x.value === u)?.bytes ?? GIB;
    onChange(a === '' || a <= 0 ? null : Math.round(a * per));
  };
  return (
    <Group gap="xs" align="flex-start" wrap="nowrap">
      <NumberInput
        label={label}
        min={0}
        decimalScale={2}
        value={amount}
        onChange={(v) => {
          const a = v === '' ? '' : Number(v);
          setAmount(a);
          send(a, unit);
        }}
        error={error}
        style={{ flex: 1 }}
        data-testid="bytes-amount"
      />
      <Select
        label={unitLabel}
        w={100}
        allowDeselect={false}
        value={unit}
        onChange={(u) => {
          const next = (u ?? 'GiB') as typeof unit;
          setUnit(next);
          send(amount, next);
        }}
        data={UNITS.map((u) => u.value)}
      />
    </Group>
  );
}
