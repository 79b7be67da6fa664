import { Alert, Badge, Card, Group, Table, Text, Title } from '@mantine/core';
import type { AdminSchemas } from '@svc/api-client';
import { formatRelative } from '@svc/web-ui';
import { useTranslation } from 'react-i18next';

type Node = AdminSchemas['Node'];

/**
 * What the node's agent enforces of the subscriptions' limits on live connections (docs/limits.md):
 * device limits (and from where it learns the addresses), speed caps (the devices it shapes),
 * entitlements while the control plane is away; why not, when it cannot. An agent of an earlier
 * release reports nothing and enforces none of them: said plainly, with what to do.
 */
export function NodeEnforcementCard({ node }: { node: Node }) {
  const { t, i18n } = useTranslation();
  const e = node.enforcement;
  return (
    <Card withBorder data-testid="node-enforcement">
      <Title order={3} size="h5" mb="sm">
        {t('limits.nodeTitle')}
      </Title>
      {!e ? (
        <Alert color="yellow" data-testid="node-enforcement-none">
          <Text size="sm">
            {node.enrolled ? t('limits.nodeNone', { version: node.agent_version ?? '—' }) : t('limits.nodeNotEnrolled')}
          </Text>
        </Alert>
      ) : (
        <Table>
          <Table.Tbody>
            <Capability
              label={t('limits.deviceLimits')}
              ok={e.device_limits}
              detail={
                e.device_limits ? t(`limits.sources.${e.device_source === 'engine-online-ips' ? 'engine' : 'log'}`) : e.device_limits_error
              }
            />
            <Capability
              label={t('limits.speedCaps')}
              ok={e.speed_caps}
              detail={e.speed_caps ? t('limits.shaped', { devices: e.shaped_devices.join(', ') || '—' }) : e.speed_caps_error}
            />
            <Capability label={t('limits.entitlements')} ok={e.entitlements} detail={e.entitlements ? t('limits.entitlementsHint') : ''} />
            <Table.Tr>
              <Table.Th scope="row" w="40%">
                {t('limits.reportedAt')}
              </Table.Th>
              <Table.Td>{formatRelative(i18n.language, e.reported_at)}</Table.Td>
            </Table.Tr>
          </Table.Tbody>
        </Table>
      )}
    </Card>
  );
}

function Capability({ label, ok, detail }: { label: string; ok: boolean; detail: string }) {
  const { t } = useTranslation();
  return (
    <Table.Tr>
      <Table.Th scope="row" w="40%">
        {label}
      </Table.Th>
      <Table.Td>
        <Group gap="xs" wrap="nowrap" align="flex-start">
          <Badge color={ok ? 'teal' : 'red'} variant="dot" style={{ flexShrink: 0 }}>
            {ok ? t('limits.enforced') : t('limits.notEnforced')}
          </Badge>
          {detail && (
            <Text size="sm" style={{ overflowWrap: 'anywhere' }}>
              {detail}
            </Text>
          )}
        </Group>
      </Table.Td>
    </Table.Tr>
  );
}
