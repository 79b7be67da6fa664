import { Alert, Badge, Button, Card, CopyButton, Divider, Group, Progress, Skeleton, Stack, Text, Title } from '@mantine/core';
import { formatBytes, formatDateTimeUtc, formatRelativeTime } from '@svc/format';
import { QrCode } from '@svc/web-ui';
import { useQuery, useQueryClient } from '@tanstack/react-query';
import { Link } from '@tanstack/react-router';
import { lazy, Suspense, useState } from 'react';
import { useTranslation } from 'react-i18next';
import { api, type PortalSchemas, unwrap } from '../api.ts';
import { useMe } from '../billing.ts';
import { useBranding, useBrandText } from '../branding.ts';
import { ConfirmAction } from '../components/confirm-action.tsx';
import { Connect } from '../components/connect.tsx';
import { Devices } from '../components/devices.tsx';
import { Busy, Failure } from '../frame.tsx';

// uPlot and its stylesheet only when a chart shows.
const Usage = lazy(() => import('../components/usage.tsx'));

type Subscription = PortalSchemas['PortalSubscription'];

/**
 * Home: the signed-in customer's subscriptions (GET /portal/v1/me), each with its link and QR
 * code. Sizes and moments through @svc/format, as the /sub page and the mails write them ("50
 * GiB", "in 30 days", "2027-01-01 00:00 UTC"), digits in the reader's language.
 */
export function HomeScreen() {
  const { t } = useTranslation();
  const me = useMe();
  const welcome = useBrandText('welcome');
  const brand = useBranding()?.name ?? t('app.brand');
  if (me.isError) return <Failure message={t('common.unreachable')} retry={() => me.refetch()} />;
  if (!me.data) return <Busy />;
  const { client, subscriptions } = me.data;
  return (
    <Stack gap="lg">
      <div>
        <Title order={1} size="h2">
          {t('home.title')}
        </Title>
        {welcome && (
          <Text mt={4} data-testid="welcome" dir="auto" style={{ whiteSpace: 'pre-line' }}>
            {welcome}
          </Text>
        )}
        <Text size="sm" c="dimmed" data-testid="signed-in-as">
          {t('home.signedInAs', { email: client.email })}
        </Text>
      </div>
      {subscriptions.length === 0 ? (
        <Card withBorder padding="md" radius="md" data-testid="no-subscriptions">
          <Stack gap="sm" align="flex-start">
            <Text>{t('home.none')}</Text>
            <Button component={Link} to="/plans" data-testid="see-plans">
              {t('home.seePlans')}
            </Button>
          </Stack>
        </Card>
      ) : (
        subscriptions.map((s, i) => (
          <SubscriptionCard
            key={s.id}
            s={s}
            title={subscriptions.length > 1 ? t('home.numbered', { n: i + 1 }) : t('home.subscription')}
            // The profile's name in the app: the brand (numbered when there are several).
            profile={subscriptions.length > 1 ? `${brand} ${i + 1}` : brand}
          />
        ))
      )}
    </Stack>
  );
}

const STATUS_COLOR: Record<Subscription['status'], string> = { active: 'teal', limited: 'orange', expired: 'red', disabled: 'gray' };

const linkKey = (id: string) => ['/portal/v1/subscriptions/{id}/link', id];

function SubscriptionCard({ s, title, profile }: { s: Subscription; title: string; profile: string }) {
  const { t, i18n } = useTranslation();
  const lng = i18n.language;
  const titleId = `sub-${s.id}-title`;
  const link = useQuery({
    queryKey: linkKey(s.id),
    queryFn: () => unwrap(api.GET('/portal/v1/subscriptions/{id}/link', { params: { path: { id: s.id } } })),
  });
  const url = link.data?.url;
  return (
    <Card withBorder padding="md" radius="md" component="section" aria-labelledby={titleId} data-testid="subscription">
      <Group justify="space-between" wrap="nowrap" mb="xs">
        <Title order={2} size="h4" id={titleId}>
          {title}
        </Title>
        <Badge color={STATUS_COLOR[s.status]} variant="dot" size="lg" data-testid="subscription-status">
          {t(`status.${s.status}`)}
        </Badge>
      </Group>
      {s.status !== 'active' && (
        <Text size="sm" mb="sm">
          {t(`statusHint.${s.status}`)}
        </Text>
      )}
      <Stack gap="md">
        <Traffic s={s} />
        <Fact label={t('home.expires')} testId="subscription-expiry">
          {s.expires_at === null ? (
            t('home.never')
          ) : (
            <>
              <Text span fw={500}>
                {formatRelativeTime(new Date(s.expires_at), new Date(), lng)}
              </Text>
              <Text span c="dimmed">
                {' · '}
                {formatDateTimeUtc(s.expires_at)}
              </Text>
            </>
          )}
        </Fact>
        <Section title={t('connect.title')}>{url ? <Connect url={url} name={profile} /> : <Skeleton height={120} />}</Section>
        {link.isError ? <Failure message={t('home.linkFailed')} retry={() => link.refetch()} /> : <LinkBlock url={url} />}
        <Devices subscriptionId={s.id} />
        <Section title={t('usage.title')}>
          <Suspense fallback={<Skeleton height={200} />}>
            <Usage id={s.id} />
          </Suspense>
        </Section>
        <Divider />
        <Group grow wrap="wrap" gap="xs">
          <Button renderRoot={(props) => <Link to="/plans" search={{ renew: s.id }} {...props} />} variant="light" data-testid="renew">
            {t('home.renew')}
          </Button>
        </Group>
        <Rotate id={s.id} />
      </Stack>
    </Card>
  );
}

function Fact({ label, children, testId }: { label: string; children: React.ReactNode; testId?: string }) {
  return (
    <div data-testid={testId}>
      <Text size="xs" c="dimmed" tt="uppercase" fw={600}>
        {label}
      </Text>
      <Text size="sm">{children}</Text>
    </div>
  );
}

/** Traffic of the current period against the limit, and when the period starts again. */
function Traffic({ s }: { s: Subscription }) {
  const { t, i18n } = useTranslation();
  const lng = i18n.language;
  const used = formatBytes(s.used_bytes, lng);
  const limit = s.traffic_limit_bytes;
  const pct = limit === null ? 0 : limit === 0 ? 100 : Math.min(100, (s.used_bytes / limit) * 100);
  return (
    <Fact label={t('home.traffic')} testId="subscription-traffic">
      <Text span fw={500}>
        {limit === null ? t('home.usedUnlimited', { used }) : t('home.usedOf', { used, limit: formatBytes(limit, lng) })}
      </Text>
      {limit !== null && (
        <Progress
          mt={6}
          value={pct}
          color={pct >= 100 ? 'red' : pct > 80 ? 'orange' : 'brand'}
          size="md"
          aria-label={t('home.trafficBar')}
        />
      )}
      <Text span display="block" size="xs" c="dimmed" mt={4}>
        {t(`renewal.${s.renewal}`)}
      </Text>
    </Fact>
  );
}

function Section({ title, children }: { title: string; children: React.ReactNode }) {
  return (
    <Stack gap="xs" component="section" aria-label={title}>
      <Text size="xs" c="dimmed" tt="uppercase" fw={600}>
        {title}
      </Text>
      {children}
    </Stack>
  );
}

/** The subscription link (GET …/link): a QR code to scan with the phone's app, the text to copy as the fallback. */
function LinkBlock({ url }: { url: string | undefined }) {
  const { t } = useTranslation();
  return (
    <Stack gap="sm" align="center">
      <Text size="xs" c="dimmed" tt="uppercase" fw={600} style={{ alignSelf: 'stretch' }}>
        {t('home.link')}
      </Text>
      {url ? (
        <>
          <QrCode value={url} label={t('home.qr')} size={200} />
          <Text size="xs" c="dimmed" ta="center">
            {t('home.qrHint')}
          </Text>
          <Text className="svc-mono" dir="ltr" ta="center" data-testid="subscription-link">
            {url}
          </Text>
          <CopyButton value={url}>
            {({ copied, copy }) => (
              <Button variant={copied ? 'default' : 'filled'} onClick={copy} fullWidth data-testid="copy-link">
                {copied ? t('home.copied') : t('home.copy')}
              </Button>
            )}
          </CopyButton>
        </>
      ) : (
        <Skeleton height={200} width={200} />
      )}
    </Stack>
  );
}

/**
 * A new link (POST …/rotate-credentials): the old one stops at once, so every device must
 * import the new one; asked first. The answer's link replaces the shown one (QR, buttons).
 */
function Rotate({ id }: { id: string }) {
  const { t } = useTranslation();
  const queryClient = useQueryClient();
  const [done, setDone] = useState(false);
  const rotate = async () => {
    const rotated = await unwrap(api.POST('/portal/v1/subscriptions/{id}/rotate-credentials', { params: { path: { id } } }));
    queryClient.setQueryData(linkKey(id), { url: rotated.link });
    void queryClient.invalidateQueries({ queryKey: ['/portal/v1/me'] });
    setDone(true);
  };
  return (
    <Stack gap="xs">
      {done && (
        <Alert color="teal" role="status" title={t('rotate.doneTitle')} data-testid="rotated">
          {t('rotate.done')}
        </Alert>
      )}
      <ConfirmAction
        label={t('rotate.button')}
        testId="rotate"
        title={t('rotate.confirmTitle')}
        text={t('rotate.warning')}
        confirmLabel={t('rotate.confirm')}
        run={rotate}
      />
    </Stack>
  );
}
