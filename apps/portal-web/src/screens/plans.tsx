import { Alert, Badge, Button, Card, Group, Stack, Text, Title } from '@mantine/core';
import { formatDateTimeUtc } from '@svc/format';
import { Link } from '@tanstack/react-router';
import { useTranslation } from 'react-i18next';
import { type Plan, useMe, usePaymentMethods, usePlans } from '../billing.ts';
import { PlanFacts, PlanPrice } from '../components/plan-facts.tsx';
import { Busy, Failure } from '../frame.tsx';
import type { PlansSearch } from '../router.tsx';

/**
 * The plans on sale (GET /portal/v1/plans): price, how long, traffic, what they include. With
 * ?renew=<subscription>: the same plans, each adding its time to that subscription (the plan it
 * was bought with first, marked). Choosing one goes to the checkout.
 */
export function PlansScreen({ search }: { search: PlansSearch }) {
  const { t } = useTranslation();
  const plans = usePlans();
  const methods = usePaymentMethods();
  const me = useMe();
  if (plans.isError || me.isError)
    return (
      <Failure
        message={t('common.unreachable')}
        retry={() => {
          void plans.refetch();
          void me.refetch();
        }}
      />
    );
  if (!plans.data || !me.data) return <Busy />;
  const subscriptions = me.data.subscriptions;
  const index = search.renew ? subscriptions.findIndex((s) => s.id === search.renew) : -1;
  const renewing = index >= 0 ? subscriptions[index] : undefined;
  const current = renewing?.plan_id ?? null;
  // The plan the subscription was bought with comes first when renewing.
  const list = current ? [...plans.data].sort((a, b) => Number(b.id === current) - Number(a.id === current)) : plans.data;
  return (
    <Stack gap="lg">
      <div>
        <Title order={1} size="h2">
          {renewing ? t('plans.renewTitle') : t('plans.title')}
        </Title>
        <Text c="dimmed" size="sm" mt={4}>
          {renewing
            ? t('plans.renewIntro', {
                name: subscriptions.length > 1 ? t('home.numbered', { n: index + 1 }) : t('home.subscription'),
                until: renewing.expires_at ? formatDateTimeUtc(renewing.expires_at) : t('home.never'),
              })
            : t('plans.intro')}
        </Text>
      </div>
      {search.renew && !renewing && (
        <Alert color="orange" role="alert">
          {t('plans.renewUnknown')}
        </Alert>
      )}
      {methods.data && methods.data.length === 0 && (
        <Alert color="gray" data-testid="no-methods">
          {t('checkout.noMethods')}
        </Alert>
      )}
      {list.length === 0 ? (
        <Alert color="gray" data-testid="no-plans">
          {t('plans.none')}
        </Alert>
      ) : (
        list.map((p) => <PlanCard key={p.id} plan={p} current={p.id === current} {...(renewing ? { renew: renewing.id } : {})} />)
      )}
    </Stack>
  );
}

function PlanCard({ plan, current, renew }: { plan: Plan; current: boolean; renew?: string }) {
  const { t } = useTranslation();
  const titleId = `plan-${plan.id}`;
  return (
    <Card withBorder padding="md" radius="md" component="section" aria-labelledby={titleId} data-testid="plan">
      <Stack gap="sm">
        <Group justify="space-between" wrap="nowrap" align="flex-start">
          <Title order={2} size="h4" id={titleId} dir="auto">
            {plan.name}
          </Title>
          {current && (
            <Badge variant="light" data-testid="current-plan">
              {t('plans.current')}
            </Badge>
          )}
        </Group>
        <PlanPrice plan={plan} />
        <PlanFacts plan={plan} />
        <Button
          renderRoot={(props) => <Link to="/checkout" search={{ plan: plan.id, ...(renew ? { renew } : {}) }} {...props} />}
          fullWidth
          aria-describedby={titleId}
          data-testid="choose-plan"
        >
          {renew ? t('plans.chooseRenew') : t('plans.choose')}
        </Button>
      </Stack>
    </Card>
  );
}
