import { Group, NumberInput, Select } from '@mantine/core';
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
