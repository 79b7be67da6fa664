import { List, Text } from '@mantine/core';
import { formatBytes, formatDuration, formatMoney } from '@svc/format';
import { useTranslation } from 'react-i18next';
import type { Plan } from '../billing.ts';

const DAY_MS = 86_400_000;

/** A plan's price in the reader's language ("€9.90"), and for how long ("for 30 days"). */
export function PlanPrice({ plan }: { plan: Plan }) {
  const { t, i18n } = useTranslation();
  const lng = i18n.language;
  return (
    <Text component="p" m={0}>
      <Text span fz={28} fw={700} lh={1.2} data-testid="plan-price">
        {formatMoney(plan.price, plan.currency, lng)}
      </Text>{' '}
      <Text span c="dimmed">
        {t('plans.for', { duration: formatDuration(plan.duration_days * DAY_MS, lng) })}
      </Text>
    </Text>
  );
}

/** What a plan gives: traffic (and when it starts over), and the operator's own words on what it includes. */
export function PlanFacts({ plan }: { plan: Plan }) {
  const { t, i18n } = useTranslation();
  const lng = i18n.language;
  return (
    <>
      <List size="sm" spacing={4} data-testid="plan-facts">
        <List.Item>
          {plan.traffic_limit_bytes === null
            ? t('plans.unlimited')
            : t('plans.traffic', { limit: formatBytes(plan.traffic_limit_bytes, lng) })}
        </List.Item>
        {plan.traffic_limit_bytes !== null && <List.Item>{t(`renewal.${plan.renewal}`)}</List.Item>}
      </List>
      {plan.description && (
        <Text size="sm" dir="auto" style={{ whiteSpace: 'pre-line' }} data-testid="plan-description">
          {plan.description}
        </Text>
      )}
    </>
  );
}
