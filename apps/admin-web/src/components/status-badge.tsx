import { Badge } from '@mantine/core';
import { useTranslation } from 'react-i18next';

const COLORS: Record<string, string> = {
  online: 'teal',
  offline: 'gray',
  enabled: 'teal',
  disabled: 'gray',
  active: 'teal',
  limited: 'orange',
  expired: 'red',
  pending: 'yellow',
  rejected: 'red',
};

/** A state in words (translated) and colour; the word carries the meaning, the colour only helps. */
export function StatusBadge({ value }: { value: string }) {
  const { t } = useTranslation();
  return (
    <Badge color={COLORS[value] ?? 'gray'} variant="light" autoContrast>
      {t(`status.${value}`, { defaultValue: value })}
    </Badge>
  );
}
