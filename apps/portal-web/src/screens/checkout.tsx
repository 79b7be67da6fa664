import { Alert, Anchor, Button, Card, Radio, Stack, Text, Title } from '@mantine/core';
import { formatDateTimeUtc, formatDuration, formatMoney } from '@svc/format';
import { useQueryClient } from '@tanstack/react-query';
import { Link, useNavigate } from '@tanstack/react-router';
import { useState } from 'react';
import { useTranslation } from 'react-i18next';
import { api, problemOf, unwrap } from '../api.ts';
import { providerPage, useMe, usePaymentMethods, usePlans } from '../billing.ts';
import { attemptDone, attemptKey, type Purchase } from '../checkout-attempt.ts';
import { PlanFacts, PlanPrice } from '../components/plan-facts.tsx';
import { describeProblem } from '../components/problems.ts';
import { Busy, Failure } from '../frame.tsx';

const DAY_MS = 86_400_000;

/**
 * Paying for a plan (POST /portal/v1/checkout): what is bought (a new subscription, or more time
 * for one), each enabled payment method to choose from, and "Pay". The purchase's
 * Idempotency-Key is made once and sent again on a retry (checkout-attempt.ts). A provider with
 * a payment page (Stripe, CryptoBot, YooKassa) is opened in this tab; its page sends the payer
 * back to the payment's page here. A manual method goes to the payment's page at once, where its
 * instructions are.
 */
export function CheckoutScreen({ planId, renew }: { planId: string; renew?: string }) {
  const { t, i18n } = useTranslation();
  const lng = i18n.language;
  const plans = usePlans();
  const methods = usePaymentMethods();
  const me = useMe();
  const navigate = useNavigate();
  const queryClient = useQueryClient();
  const [chosen, setChosen] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<string | null>(null);
  if (plans.isError || methods.isError || me.isError)
    return (
      <Failure
        message={t('common.unreachable')}
        retry={() => {
          void plans.refetch();
          void methods.refetch();
          void me.refetch();
        }}
      />
    );
  if (!plans.data || !methods.data || !me.data) return <Busy />;
  const plan = plans.data.find((p) => p.id === planId);
  const subscriptions = me.data.subscriptions;
  const index = renew ? subscriptions.findIndex((s) => s.id === renew) : -1;
  const renewing = index >= 0 ? subscriptions[index] : undefined;
  if (!plan || (renew && !renewing))
    return (
      <Stack gap="md">
        <Title order={1} size="h2">
          {t('checkout.title')}
        </Title>
        <Alert color="orange" role="alert">
          {plan ? t('plans.renewUnknown') : t('checkout.planGone')}
        </Alert>
        <Anchor component={Link} to="/plans">
          {t('checkout.backToPlans')}
        </Anchor>
      </Stack>
    );
  // One method: it is the choice.
  const methodId = chosen ?? (methods.data.length === 1 ? (methods.data[0]?.id ?? null) : null);
  const subName = subscriptions.length > 1 ? t('home.numbered', { n: index + 1 }) : t('home.subscription');

  const pay = async () => {
    if (!methodId) return setError(t('checkout.chooseMethod'));
    const purchase: Purchase = { plan_id: plan.id, provider_id: methodId, ...(renewing ? { subscription_id: renewing.id } : {}) };
    setBusy(true);
    setError(null);
    try {
      const answer = await unwrap(
        api.POST('/portal/v1/checkout', { params: { header: { 'idempotency-key': attemptKey(purchase) } }, body: purchase }),
      );
      attemptDone(purchase);
      void queryClient.invalidateQueries({ queryKey: ['/portal/v1/payments'] });
      const page = providerPage(answer.checkout_url);
      if (page && answer.status === 'pending') {
        window.location.assign(page);
        return;
      }
      await navigate({ to: '/payments/$id', params: { id: answer.payment_id } });
    } catch (err) {
      // The same key with another body cannot come from here; if it does, the next try is a new purchase.
      if (problemOf(err)?.status === 422) attemptDone(purchase);
      setError(describeProblem(t, err) || t('common.serverError'));
      setBusy(false);
    }
  };

  return (
    <Stack gap="lg">
      <Title order={1} size="h2">
        {t('checkout.title')}
      </Title>
      <Card withBorder padding="md" radius="md" component="section" aria-labelledby="checkout-plan">
        <Stack gap="sm">
          <Title order={2} size="h4" id="checkout-plan" dir="auto">
            {plan.name}
          </Title>
          <PlanPrice plan={plan} />
          <PlanFacts plan={plan} />
          <Text size="sm" fw={500} data-testid="checkout-what">
            {renewing
              ? t('checkout.renews', {
                  name: subName,
                  duration: formatDuration(plan.duration_days * DAY_MS, lng),
                  until: renewing.expires_at ? formatDateTimeUtc(renewing.expires_at) : t('home.never'),
                })
              : t('checkout.newSubscription')}
          </Text>
        </Stack>
      </Card>
      {methods.data.length === 0 ? (
        <Alert color="gray" data-testid="no-methods">
          {t('checkout.noMethods')}
        </Alert>
      ) : (
        <Radio.Group
          label={t('checkout.method')}
          value={methodId}
          onChange={(v) => {
            setChosen(v);
            setError(null);
          }}
          required
        >
          <Stack gap="xs" mt="xs">
            {methods.data.map((m) => (
              <Radio key={m.id} value={m.id} label={m.name} description={t(`checkout.kind.${kindKey(m.kind)}`)} />
            ))}
          </Stack>
        </Radio.Group>
      )}
      {error && (
        <Alert color="red" role="alert" data-testid="checkout-error">
          {error}
        </Alert>
      )}
      <Button size="md" onClick={pay} loading={busy} disabled={methods.data.length === 0} data-testid="pay">
        {t('checkout.pay', { amount: formatMoney(plan.price, plan.currency, lng) })}
      </Button>
      <Text size="xs" c="dimmed">
        {t('checkout.hint')}
      </Text>
    </Stack>
  );
}

const KINDS = ['stripe', 'cryptobot', 'yookassa', 'manual'] as const;
const kindKey = (kind: string) => ((KINDS as readonly string[]).includes(kind) ? kind : 'other');
