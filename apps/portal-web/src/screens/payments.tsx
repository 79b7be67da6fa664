import { Alert, Anchor, Badge, Card, Group, Stack, Text, Title } from '@mantine/core';
import { formatDateTimeUtc, formatMoney } from '@svc/format';
import { Link } from '@tanstack/react-router';
import { useTranslation } from 'react-i18next';
import { PAYMENT_STATUS_COLOR, usePayments } from '../billing.ts';
import { Busy, Failure } from '../frame.tsx';

/** The customer's payments, newest first: what each bought, when, how much, its status; each opens its page (and receipt). */
export function PaymentsScreen() {
  const { t, i18n } = useTranslation();
  const payments = usePayments();
  if (payments.isError) return <Failure message={t('common.unreachable')} retry={() => payments.refetch()} />;
  if (!payments.data) return <Busy />;
  return (
    <Stack gap="lg">
      <Title order={1} size="h2">
        {t('payments.title')}
      </Title>
      {payments.data.length === 0 ? (
        <Alert color="gray" data-testid="no-payments">
          {t('payments.none')}{' '}
          <Anchor component={Link} to="/plans">
            {t('payments.seePlans')}
          </Anchor>
        </Alert>
      ) : (
        <Stack gap="sm" component="ul" p={0} m={0} style={{ listStyle: 'none' }}>
          {payments.data.map((p) => (
            <Card key={p.id} withBorder padding="sm" radius="md" component="li" data-testid="payment">
              <Group justify="space-between" wrap="nowrap" align="flex-start" gap="sm">
                <Stack gap={2} miw={0}>
                  <Anchor
                    renderRoot={(props) => <Link to="/payments/$id" params={{ id: p.id }} {...props} />}
                    fw={600}
                    dir="auto"
                    data-testid="payment-link"
                  >
                    {p.plan_name}
                  </Anchor>
                  <Text size="xs" c="dimmed">
                    {formatDateTimeUtc(p.paid_at ?? p.created_at)} · {p.provider_name}
                  </Text>
                </Stack>
                <Stack gap={4} align="flex-end" style={{ flex: 'none' }}>
                  <Text fw={600} size="sm" data-testid="payment-amount">
                    {formatMoney(p.amount, p.currency, i18n.language)}
                  </Text>
                  <Badge color={PAYMENT_STATUS_COLOR[p.status]} variant="dot" data-testid="payment-status">
                    {t(`paymentStatus.${p.status}`)}
                  </Badge>
                </Stack>
              </Group>
            </Card>
          ))}
        </Stack>
      )}
    </Stack>
  );
}
