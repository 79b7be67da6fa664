import { Alert, Badge, Button, Card, CopyButton, Group, Progress, Skeleton, Stack, Text, Title } from '@mantine/core';
import { formatBytes, formatDateTimeUtc, formatRelativeTime } from '@svc/format';
import { QrCode } from '@svc/web-ui';
import { useQuery } from '@tanstack/react-query';
import { useTranslation } from 'react-i18next';
import { api, type PortalSchemas, unwrap } from '../api.ts';
import { Busy, Failure } from '../frame.tsx';

type Subscription = PortalSchemas['PortalSubscription'];

/**
 * Home: the signed-in customer's subscriptions (GET /portal/v1/me), each with its link and QR
 * code. Sizes and moments through @svc/format, as the /sub page and the mails write them ("50
 * GiB", "in 30 days", "2027-01-01 00:00 UTC"), digits in the reader's language.
 */
export function HomeScreen() {
  const { t } = useTranslation();
  const me = useQuery({ queryKey: ['/portal/v1/me'], queryFn: () => unwrap(api.GET('/portal/v1/me')) });
  if (me.isError) return <Failure message={t('common.unreachable')} retry={() => me.refetch()} />;
  if (!me.data) return <Busy />;
  const { client, subscriptions } = me.data;
  return (
    <Stack gap="lg">
      <div>
        <Title order={1} size="h2">
          {t('home.title')}
        </Title>
        <Text size="sm" c="dimmed" data-testid="signed-in-as">
          {t('home.signedInAs', { email: client.email })}
        </Text>
      </div>
      {subscriptions.length === 0 ? (
        <Alert color="gray" data-testid="no-subscriptions">
          {t('home.none')}
        </Alert>
      ) : (
        subscriptions.map((s, i) => (
          <SubscriptionCard key={s.id} s={s} title={subscriptions.length > 1 ? t('home.numbered', { n: i + 1 }) : t('home.subscription')} />
        ))
      )}
    </Stack>
  );
}

const STATUS_COLOR: Record<Subscription['status'], string> = { active: 'teal', limited: 'orange', expired: 'red', disabled: 'gray' };

function SubscriptionCard({ s, title }: { s: Subscription; title: string }) {
  const { t, i18n } = useTranslation();
  const lng = i18n.language;
  const titleId = `sub-${s.id}-title`;
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
        <LinkBlock id={s.id} />
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

/** The subscription link (GET …/link): a QR code to scan with the phone's app, the text to copy as the fallback. */
function LinkBlock({ id }: { id: string }) {
  const { t } = useTranslation();
  const link = useQuery({
    queryKey: ['/portal/v1/subscriptions/{id}/link', id],
    queryFn: () => unwrap(api.GET('/portal/v1/subscriptions/{id}/link', { params: { path: { id } } })),
  });
  if (link.isError) return <Failure message={t('home.linkFailed')} retry={() => link.refetch()} />;
  return (
    <Stack gap="sm" align="center">
      <Text size="xs" c="dimmed" tt="uppercase" fw={600} style={{ alignSelf: 'stretch' }}>
        {t('home.link')}
      </Text>
      {link.data ? (
        <>
          <QrCode value={link.data.url} label={t('home.qr')} size={200} />
          <Text size="xs" c="dimmed" ta="center">
            {t('home.qrHint')}
          </Text>
          <Text className="svc-mono" dir="ltr" ta="center" data-testid="subscription-link">
            {link.data.url}
          </Text>
          <CopyButton value={link.data.url}>
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
