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
  outdated: 'orange',
};

/**
 * A state in words (translated) and a coloured dot; the word carries the meaning, the colour
 * only helps. The dot variant keeps the text in the page's text colour: tinted badge text falls
 * under 4.5:1 for several hues (axe, WCAG 1.4.3).
 */
export function StatusBadge({ value }: { value: string }) {
  const { t } = useTranslation();
  return (
    <Badge color={COLORS[value] ?? 'gray'} variant="dot">
      {t(`status.${value}`, { defaultValue: value })}
    </Badge>
  );
}
