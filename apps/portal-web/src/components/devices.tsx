import { Alert, Group, Stack, Text } from '@mantine/core';
import { formatRelativeTime } from '@svc/format';
import { deviceTitle } from '@svc/web-ui';
import { useQuery, useQueryClient } from '@tanstack/react-query';
import { useTranslation } from 'react-i18next';
import { api, unwrap } from '../api.ts';
import { ConfirmAction } from './confirm-action.tsx';

export const devicesKey = ['/portal/v1/devices'];

/**
 * The devices of one subscription (GET /portal/v1/devices): how many it may use at once, the
 * devices its apps registered when they fetched the link (each removable: its place is freed
 * for another phone), and how many addresses are connected right now. A subscription without a
 * device limit and without registered devices shows nothing.
 */
export function Devices({ subscriptionId }: { subscriptionId: string }) {
  const { t, i18n } = useTranslation();
  const lng = i18n.language;
  const queryClient = useQueryClient();
  const devices = useQuery({
    queryKey: devicesKey,
    queryFn: () => unwrap(api.GET('/portal/v1/devices')),
    refetchInterval: 30_000,
  });
  const mine = devices.data?.items.find((d) => d.subscription_id === subscriptionId);
  if (!mine || (mine.device_limit === null && mine.registered.length === 0)) return null;
  const online = new Set(mine.online.map((o) => o.address)).size;
  const remove = async (id: string) => {
    await unwrap(api.DELETE('/portal/v1/devices/{deviceId}', { params: { path: { deviceId: id } } }));
    await queryClient.invalidateQueries({ queryKey: devicesKey });
  };
  return (
    <Stack gap="xs" component="section" aria-label={t('devices.title')} data-testid="devices">
      <Text size="xs" c="dimmed" tt="uppercase" fw={600}>
        {t('devices.title')}
      </Text>
      <Text size="sm" data-testid="devices-summary">
        {mine.device_limit === null
          ? t('devices.summaryNoLimit', { registered: mine.registered.length, online })
          : t('devices.summary', { registered: mine.registered.length, limit: mine.device_limit, online })}
      </Text>
      {mine.denied.length > 0 && (
        <Alert color="orange" data-testid="devices-refused">
          {t('devices.refused', { limit: mine.device_limit ?? 0 })}
        </Alert>
      )}
      {mine.registered.map((d) => (
        <Group key={d.id} justify="space-between" wrap="nowrap" gap="xs" data-testid="device">
          <div style={{ minWidth: 0 }}>
            <Text size="sm" fw={500} style={{ overflowWrap: 'anywhere' }}>
              {deviceTitle(d, t('devices.unknown'))}
            </Text>
            <Text size="xs" c="dimmed">
              {t('devices.lastSeen', { when: formatRelativeTime(new Date(d.last_seen_at), new Date(), lng) })}
            </Text>
          </div>
          <ConfirmAction
            label={t('devices.remove')}
            ariaLabel={t('devices.removeNamed', { name: deviceTitle(d, t('devices.unknown')) })}
            testId={`remove-device-${d.id}`}
            title={t('devices.removeTitle', { name: deviceTitle(d, t('devices.unknown')) })}
            text={t('devices.removeText')}
            confirmLabel={t('devices.removeConfirm')}
            run={() => remove(d.id)}
          />
        </Group>
      ))}
    </Stack>
  );
}
