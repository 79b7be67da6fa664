import { Alert, Badge, Button, Card, Group, Stack, Table, Text, Title } from '@mantine/core';
import { modals } from '@mantine/modals';
import { deviceTitle, formatDateTime, formatRelative } from '@svc/web-ui';
import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { useTranslation } from 'react-i18next';
import { api, unwrap } from '../api.ts';
import { notify } from '../components/notify.ts';

/**
 * The subscription's devices (docs/limits.md): those registered by the HWID headers of link
 * fetches (removable: the place is freed), the client addresses on its live connections per
 * node, and the addresses the fleet-wide device count refuses now.
 */
export function SubscriptionDevicesCard({ id, canWrite }: { id: string; canWrite: boolean }) {
  const { t, i18n } = useTranslation();
  const lng = i18n.language;
  const queryClient = useQueryClient();
  const devices = useQuery({
    queryKey: ['subscriptions', 'devices', id],
    queryFn: () => unwrap(api.GET('/api/v1/subscriptions/{id}/devices', { params: { path: { id } } })),
    // Online addresses change with every connection and no live event carries them: polled.
    refetchInterval: 10_000,
  });
  const remove = useMutation({
    mutationFn: (deviceId: string) =>
      unwrap(api.DELETE('/api/v1/subscriptions/{id}/devices/{deviceId}', { params: { path: { id, deviceId } } })),
    onSuccess: () => {
      void queryClient.invalidateQueries({ queryKey: ['subscriptions', 'devices', id] });
      notify(t('limits.deviceRemoved'));
    },
    onError: (e) => notify(e.message, 'red'),
  });
  if (devices.isError) return <Alert color="red">{devices.error.message}</Alert>;
  const d = devices.data;
  if (!d) return null;
  const addresses = new Set(d.online.map((o) => o.address));
  return (
    <Card withBorder mt="md" data-testid="subscription-devices">
      <Group justify="space-between" mb="sm">
        <Title order={3} size="h5">
          {t('limits.devicesTitle')}
        </Title>
        <Text size="sm" data-testid="device-count">
          {d.device_limit == null
            ? t('limits.devicesNoLimit', { online: addresses.size, registered: d.registered.length })
            : t('limits.devicesOfLimit', { online: addresses.size, registered: d.registered.length, limit: d.device_limit })}
        </Text>
      </Group>
      <Stack gap="md">
        {d.denied.length > 0 && (
          <Alert color="red" data-testid="devices-denied" title={t('limits.deniedTitle')}>
            <Text size="sm" className="svc-mono" dir="ltr">
              {d.denied.join(', ')}
            </Text>
          </Alert>
        )}
        <Table aria-label={t('limits.registered')}>
          <Table.Caption>{t('limits.registered')}</Table.Caption>
          <Table.Thead>
            <Table.Tr>
              <Table.Th>{t('limits.device')}</Table.Th>
              <Table.Th>{t('limits.hwid')}</Table.Th>
              <Table.Th>{t('limits.lastSeen')}</Table.Th>
              {canWrite && <Table.Th aria-label={t('common.actions')} />}
            </Table.Tr>
          </Table.Thead>
          <Table.Tbody>
            {d.registered.length === 0 && (
              <Table.Tr>
                <Table.Td colSpan={canWrite ? 4 : 3}>
                  <Text size="sm" c="dimmed">
                    {t('limits.noRegistered')}
                  </Text>
                </Table.Td>
              </Table.Tr>
            )}
            {d.registered.map((r) => (
              <Table.Tr key={r.id}>
                <Table.Td>
                  <Text size="sm">{deviceTitle(r, t('limits.unknownDevice'))}</Text>
                  <Text size="xs" c="dimmed">
                    {t('limits.firstSeen', { when: formatDateTime(lng, r.first_seen_at) })}
                  </Text>
                </Table.Td>
                <Table.Td>
                  <Text size="xs" className="svc-mono" dir="ltr" style={{ overflowWrap: 'anywhere' }}>
                    {r.hwid}
                  </Text>
                </Table.Td>
                <Table.Td>{formatRelative(lng, r.last_seen_at)}</Table.Td>
                {canWrite && (
                  <Table.Td>
                    <Button
                      size="xs"
                      variant="light"
                      color="red"
                      aria-label={t('limits.removeDeviceNamed', { name: deviceTitle(r, r.hwid) })}
                      onClick={() =>
                        modals.openConfirmModal({
                          title: t('limits.removeDeviceTitle'),
                          children: <Text size="sm">{t('limits.removeDeviceBody')}</Text>,
                          labels: { confirm: t('limits.removeDevice'), cancel: t('common.cancel') },
                          confirmProps: { color: 'red' },
                          onConfirm: () => remove.mutate(r.id),
                        })
                      }
                    >
                      {t('limits.removeDevice')}
                    </Button>
                  </Table.Td>
                )}
              </Table.Tr>
            ))}
          </Table.Tbody>
        </Table>
        <Table aria-label={t('limits.online')}>
          <Table.Caption>{t('limits.online')}</Table.Caption>
          <Table.Thead>
            <Table.Tr>
              <Table.Th>{t('limits.address')}</Table.Th>
              <Table.Th>{t('subscription.node')}</Table.Th>
              <Table.Th>{t('limits.since')}</Table.Th>
              <Table.Th>{t('limits.lastSeen')}</Table.Th>
            </Table.Tr>
          </Table.Thead>
          <Table.Tbody>
            {d.online.length === 0 && (
              <Table.Tr>
                <Table.Td colSpan={4}>
                  <Text size="sm" c="dimmed">
                    {t('limits.noOnline')}
                  </Text>
                </Table.Td>
              </Table.Tr>
            )}
            {d.online.map((o) => (
              <Table.Tr key={`${o.node_id}|${o.address}`} data-testid="online-address">
                <Table.Td>
                  <Group gap="xs" wrap="nowrap">
                    <Text size="sm" className="svc-mono" dir="ltr">
                      {o.address}
                    </Text>
                    {o.denied_at && (
                      <Badge color="red" variant="dot">
                        {t('limits.refused')}
                      </Badge>
                    )}
                  </Group>
                </Table.Td>
                <Table.Td>{o.node_name}</Table.Td>
                <Table.Td>{formatRelative(lng, o.first_seen_at)}</Table.Td>
                <Table.Td>{formatRelative(lng, o.seen_at)}</Table.Td>
              </Table.Tr>
            ))}
          </Table.Tbody>
        </Table>
      </Stack>
    </Card>
  );
}
