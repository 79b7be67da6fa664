import { Alert, Anchor, Badge, Button, Card, Group, Loader, Stack, Table, Text, Title } from '@mantine/core';
import { formatDateTimeUtc, formatMoney, formatRelativeTime } from '@svc/format';
import { useQuery, useQueryClient } from '@tanstack/react-query';
import { Link } from '@tanstack/react-router';
import { useEffect } from 'react';
import { useTranslation } from 'react-i18next';
import { api, problemOf, unwrap } from '../api.ts';
import { isSettled, PAYMENT_STATUS_COLOR, type Payment, providerPage } from '../billing.ts';
import { useBranding } from '../branding.ts';
import { Busy, Failure } from '../frame.tsx';

/** How often a pending payment is read again while its page is open. */
const POLL_MS = 3000;

/**
 * One payment (GET /portal/v1/payments/{id}): where the payer lands back from the provider's page
 * (billing.return_url's default) and where a manual payment's instructions are. While it is
 * pending it is read again every few seconds, so the page turns "paid" by itself when the
 * provider's webhook (or an admin's confirmation) lands; the status is a live region. A paid
 * payment shows its receipt, printable.
 */
export function PaymentScreen({ id, outcome }: { id: string; outcome?: 'success' | 'canceled' }) {
  const { t } = useTranslation();
  const queryClient = useQueryClient();
  const payment = useQuery({
    queryKey: ['/portal/v1/payments/{id}', id],
    queryFn: () => unwrap(api.GET('/portal/v1/payments/{id}', { params: { path: { id } } })),
    refetchInterval: (q) => (q.state.data && isSettled(q.state.data) ? false : POLL_MS),
    refetchIntervalInBackground: false,
    staleTime: 0,
  });
  const status = payment.data?.status;
  // Settled: what it changed shows everywhere (a new or longer subscription, the history).
  useEffect(() => {
    if (status && status !== 'pending') {
      void queryClient.invalidateQueries({ queryKey: ['/portal/v1/me'] });
      void queryClient.invalidateQueries({ queryKey: ['/portal/v1/payments'] });
    }
  }, [status, queryClient]);
  if (payment.isError && !payment.data) {
    if (problemOf(payment.error)?.status === 404)
      return (
        <Stack gap="md">
          <Title order={1} size="h2">
            {t('payment.title')}
          </Title>
          <Alert color="orange" role="alert">
            {t('payment.notFound')}
          </Alert>
          <Anchor component={Link} to="/payments">
            {t('payment.toHistory')}
          </Anchor>
        </Stack>
      );
    return <Failure message={t('common.unreachable')} retry={() => payment.refetch()} />;
  }
  if (!payment.data) return <Busy />;
  const p = payment.data;
  return (
    <Stack gap="lg">
      <Title order={1} size="h2">
        {t('payment.title')}
      </Title>
      <Outcome p={p} outcome={outcome} />
      {p.status === 'pending' && p.provider_kind === 'manual' && <ManualInstructions p={p} />}
      <Receipt p={p} />
      <Anchor component={Link} to="/payments" className="svc-no-print">
        {t('payment.toHistory')}
      </Anchor>
    </Stack>
  );
}

/** The status in words, said again when it changes (role=status): waiting, paid, or why not. */
function Outcome({ p, outcome }: { p: Payment; outcome: 'success' | 'canceled' | undefined }) {
  const { t } = useTranslation();
  const page = providerPage(p.checkout_url);
  return (
    <Card withBorder padding="md" radius="md" className="svc-no-print">
      <Stack gap="sm" role="status" aria-live="polite" data-testid="payment-outcome" data-status={p.status}>
        {p.status === 'pending' ? (
          <>
            <Group gap="sm" wrap="nowrap">
              <Loader size="sm" aria-hidden />
              <Text fw={600}>
                {p.provider_kind === 'manual'
                  ? t('payment.waitingManual')
                  : outcome === 'canceled'
                    ? t('payment.notCompleted')
                    : t('payment.waiting')}
              </Text>
            </Group>
            <Text size="sm">
              {p.provider_kind === 'manual'
                ? t('payment.waitingManualHint')
                : outcome === 'canceled'
                  ? t('payment.notCompletedHint')
                  : outcome === 'success'
                    ? t('payment.confirmingHint')
                    : t('payment.waitingHint')}
            </Text>
            {page && (
              <Button component="a" href={page} variant={outcome === 'success' ? 'default' : 'filled'} data-testid="continue-payment">
                {t('payment.continue')}
              </Button>
            )}
          </>
        ) : p.status === 'succeeded' ? (
          <>
            <Text fw={700} fz="lg" data-testid="payment-paid">
              {t('payment.paid')}
            </Text>
            <Text size="sm">{p.subscription_id ? t('payment.paidHint') : t('payment.paidHintPending')}</Text>
            <Button component={Link} to="/" data-testid="to-subscriptions">
              {t('payment.toSubscriptions')}
            </Button>
          </>
        ) : (
          <>
            <Text fw={700} fz="lg">
              {t(`payment.ended.${p.status}`)}
            </Text>
            {p.status_reason && (
              <Text size="sm" dir="auto">
                {p.status_reason}
              </Text>
            )}
            {p.status !== 'refunded' && (
              <Button component={Link} to="/plans" variant="default">
                {t('payment.again')}
              </Button>
            )}
          </>
        )}
      </Stack>
    </Card>
  );
}

/** A manual payment: the operator's instructions, the amount and the deadline to pay by. */
function ManualInstructions({ p }: { p: Payment }) {
  const { t, i18n } = useTranslation();
  return (
    <Card withBorder padding="md" radius="md" component="section" aria-labelledby="how-to-pay" className="svc-no-print">
      <Stack gap="xs">
        <Title order={2} size="h4" id="how-to-pay">
          {t('payment.howToPay')}
        </Title>
        <Text fw={600}>{formatMoney(p.amount, p.currency, i18n.language)}</Text>
        {p.instructions && (
          <Text size="sm" dir="auto" style={{ whiteSpace: 'pre-line' }} data-testid="instructions">
            {p.instructions}
          </Text>
        )}
        {p.expires_at && (
          <Text size="sm" c="dimmed">
            {t('payment.payBy', {
              when: formatRelativeTime(new Date(p.expires_at), new Date(), i18n.language),
              at: formatDateTimeUtc(p.expires_at),
            })}
          </Text>
        )}
      </Stack>
    </Card>
  );
}

/** The payment as a receipt: who sold what to whom, when, for how much; printable on its own. */
function Receipt({ p }: { p: Payment }) {
  const { t, i18n } = useTranslation();
  const brand = useBranding()?.name ?? t('app.brand');
  const rows: [string, React.ReactNode, string][] = [
    [t('receipt.number'), <span dir="ltr">{p.id}</span>, 'receipt-number'],
    [t('receipt.seller'), brand, 'receipt-seller'],
    [t('receipt.item'), <span dir="auto">{p.plan_name}</span>, 'receipt-item'],
    [t('receipt.amount'), formatMoney(p.amount, p.currency, i18n.language), 'receipt-amount'],
    [t('receipt.method'), p.provider_name, 'receipt-method'],
    [t('receipt.created'), formatDateTimeUtc(p.created_at), 'receipt-created'],
    ...(p.paid_at ? ([[t('receipt.paid'), formatDateTimeUtc(p.paid_at), 'receipt-paid']] as [string, string, string][]) : []),
  ];
  const paid = p.status === 'succeeded' || p.status === 'refunded';
  return (
    <Card withBorder padding="md" radius="md" component="section" aria-labelledby="receipt-title" data-testid="receipt">
      <Stack gap="sm">
        <Group justify="space-between" wrap="nowrap">
          <Title order={2} size="h4" id="receipt-title">
            {paid ? t('receipt.title') : t('receipt.details')}
          </Title>
          <Badge color={PAYMENT_STATUS_COLOR[p.status]} variant="dot" data-testid="payment-status">
            {t(`paymentStatus.${p.status}`)}
          </Badge>
        </Group>
        <Table withRowBorders={false} verticalSpacing={4} horizontalSpacing={0}>
          <Table.Tbody>
            {rows.map(([label, value, testId]) => (
              <Table.Tr key={testId}>
                <Table.Th scope="row" fw={500} c="dimmed" fz="sm" w="40%" style={{ verticalAlign: 'top' }}>
                  {label}
                </Table.Th>
                <Table.Td fz="sm" data-testid={testId} style={{ overflowWrap: 'anywhere' }}>
                  {value}
                </Table.Td>
              </Table.Tr>
            ))}
          </Table.Tbody>
        </Table>
        {paid && (
          <Button variant="default" onClick={() => window.print()} className="svc-no-print" data-testid="print-receipt">
            {t('receipt.print')}
          </Button>
        )}
      </Stack>
    </Card>
  );
}
