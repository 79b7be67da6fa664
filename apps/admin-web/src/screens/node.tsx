import { Alert, Button, Card, Code, CopyButton, Grid, Group, Loader, Stack, Table, Tabs, Text, Title } from '@mantine/core';
import type { AdminSchemas } from '@svc/api-client';
import { formatBytes, formatDateTime, formatRelative } from '@svc/web-ui';
import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { useNavigate } from '@tanstack/react-router';
import { useState } from 'react';
import { useTranslation } from 'react-i18next';
import { api, unwrap } from '../api.ts';
import { DeleteButton } from '../components/delete-button.tsx';
import { Dialog } from '../components/dialog.tsx';
import { notify } from '../components/notify.ts';
import { PageHeader } from '../components/page-header.tsx';
import { ReadOnlyNote } from '../components/read-only-note.tsx';
import { StatusBadge } from '../components/status-badge.tsx';
import { useFallbackInterval } from '../events.ts';
import { useCan } from '../me.tsx';
import { NodeEnforcementCard } from './node-enforcement.tsx';
import { NodeLogTail } from './node-logs.tsx';
import { NodeLimitedAlert, NodeSettingsForm, NodeTrafficCard } from './node-traffic.tsx';
import { AgentUpdateBadge, Revision } from './nodes.tsx';

type EnrollToken = AdminSchemas['NodeEnrollToken'];
type Node = AdminSchemas['Node'];

/**
 * One node: state, last status, engine, its traffic against its quota (and whether the quota took
 * it out of service), the enrollment token with the install command to run, its settings,
 * restart, the agent's upgrade (offered when this control plane serves a newer release), the live log.
 */
export function NodeScreen({ id }: { id: string }) {
  const { t, i18n } = useTranslation();
  const lng = i18n.language;
  const can = useCan();
  const navigate = useNavigate();
  const queryClient = useQueryClient();
  const poll = useFallbackInterval(10_000);
  const node = useQuery({
    queryKey: ['nodes', 'one', id],
    queryFn: () => unwrap(api.GET('/api/v1/nodes/{id}', { params: { path: { id } } })),
    refetchInterval: poll,
  });
  const [enroll, setEnroll] = useState<EnrollToken | null>(null);
  const [editing, setEditing] = useState(false);
  const invalidate = () => queryClient.invalidateQueries({ queryKey: ['nodes'] });
  const issue = useMutation({
    mutationFn: () => unwrap(api.POST('/api/v1/nodes/{id}/enroll-token', { params: { path: { id } } })),
    onSuccess: (tok) => {
      setEnroll(tok);
      void invalidate();
    },
  });
  const restart = useMutation({
    mutationFn: () => unwrap(api.POST('/api/v1/nodes/{id}/restart-xray', { params: { path: { id } } })),
    onSuccess: () => notify(t('node.restartSent')),
    onError: (e) => notify(e.message, 'red'),
  });
  const upgrade = useMutation({
    mutationFn: () => unwrap(api.POST('/api/v1/nodes/{id}/upgrade-agent', { params: { path: { id } } })),
    onSuccess: () => invalidate(),
    onError: (e) => notify(e.message, 'red'),
  });
  const toggle = useMutation({
    mutationFn: (admin_status: 'enabled' | 'disabled') =>
      unwrap(api.PATCH('/api/v1/nodes/{id}', { params: { path: { id } }, body: { admin_status } })),
    onSuccess: () => invalidate(),
    onError: (e) => notify(e.message, 'red'),
  });
  const remove = useMutation({
    mutationFn: () => unwrap(api.DELETE('/api/v1/nodes/{id}', { params: { path: { id } } })),
    onSuccess: () => {
      void invalidate();
      void navigate({ to: '/nodes' });
    },
    onError: (e) => notify(e.message, 'red'),
  });

  if (node.isError) return <Alert color="red">{node.error.message}</Alert>;
  const n = node.data;
  if (!n) return null;
  const status = n.status as null | Record<string, number | boolean>;
  return (
    <>
      <PageHeader
        title={n.name}
        subtitle={n.address}
        actions={
          can.write && (
            <>
              <Button variant="default" onClick={() => setEditing(true)} data-testid="edit-node">
                {t('node.edit')}
              </Button>
              <Button variant="default" onClick={() => issue.mutate()} loading={issue.isPending} data-testid="issue-enroll-token">
                {n.enrolled ? t('node.reissueToken') : t('node.issueToken')}
              </Button>
              <Button variant="default" onClick={() => restart.mutate()} disabled={n.connectivity !== 'online'} loading={restart.isPending}>
                {t('node.restartEngine')}
              </Button>
              <Button variant="default" onClick={() => toggle.mutate(n.admin_status === 'enabled' ? 'disabled' : 'enabled')}>
                {n.admin_status === 'enabled' ? t('common.disable') : t('common.enable')}
              </Button>
              <DeleteButton title={t('node.deleteTitle', { name: n.name })} body={t('node.deleteBody')} onConfirm={() => remove.mutate()} />
            </>
          )
        }
      />
      <ReadOnlyNote />
      <NodeLimitedAlert node={n} />
      <Dialog opened={editing} onClose={() => setEditing(false)} title={t('node.editTitle', { name: n.name })}>
        <NodeSettingsForm node={n} onSaved={() => setEditing(false)} />
      </Dialog>
      {issue.isError && (
        <Alert color="red" mb="md">
          {issue.error.message}
        </Alert>
      )}
      {enroll && <EnrollCommands token={enroll} />}
      {n.agent_upgrade?.state === 'failed' && (
        <Alert color="red" mb="md" title={t('node.upgradeFailed', { version: n.agent_upgrade.version })} data-testid="agent-upgrade-failed">
          <Text size="sm" className="svc-mono">
            {n.agent_upgrade.error}
          </Text>
        </Alert>
      )}
      <Grid>
        <Grid.Col span={{ base: 12, md: 6 }}>
          <Card withBorder>
            <Title order={3} size="h5" mb="sm">
              {t('node.state')}
            </Title>
            <Table>
              <Table.Tbody>
                <Row label={t('nodes.connectivity')}>
                  <Group gap={4}>
                    <StatusBadge value={n.connectivity} />
                    <StatusBadge value={n.admin_status} />
                    {n.traffic.limited_since && <StatusBadge value="limited" />}
                  </Group>
                </Row>
                <Row label={t('nodes.revision')}>
                  <Revision node={n} />
                </Row>
                <Row label={t('node.lastSeen')}>{n.last_seen_at ? formatRelative(lng, n.last_seen_at) : '—'}</Row>
                <Row label={t('node.enrolled')}>{n.enrolled ? t('common.yes') : t('common.no')}</Row>
                <Row label={t('node.tokenExpires')}>{formatDateTime(lng, n.enroll_token_expires_at)}</Row>
                <Row label={t('node.certificateExpires')}>{formatDateTime(lng, n.cert_not_after)}</Row>
                {n.last_apply_error && (
                  <Row label={t('node.lastApplyError')}>
                    <Text size="sm" c="red" className="svc-mono">
                      {n.last_apply_error}
                    </Text>
                  </Row>
                )}
              </Table.Tbody>
            </Table>
          </Card>
        </Grid.Col>
        <Grid.Col span={{ base: 12, md: 6 }}>
          <Card withBorder>
            <Title order={3} size="h5" mb="sm">
              {t('node.system')}
            </Title>
            <Table>
              <Table.Tbody>
                <Row label={t('nodes.agent')}>
                  <AgentVersion node={n} canUpgrade={can.write} upgrading={upgrade.isPending} onUpgrade={() => upgrade.mutate()} />
                </Row>
                <Row label={t('node.engine')}>{n.engine.version ? `${n.engine.family} ${n.engine.version}` : '—'}</Row>
                <Row label={t('node.host')}>{[n.hostname, n.os, n.arch].filter(Boolean).join(' · ') || '—'}</Row>
                <Row label={t('node.cpu')}>{status ? `${Math.round(Number(status.cpu_percent ?? 0))} %` : '—'}</Row>
                <Row label={t('node.memory')}>
                  {status
                    ? `${formatBytes(lng, Number(status.memory_used_bytes ?? 0))} / ${formatBytes(lng, Number(status.memory_total_bytes ?? 0))}`
                    : '—'}
                </Row>
                <Row label={t('node.connections')}>{status ? String(status.connections ?? 0) : '—'}</Row>
                <Row label={t('node.engineUptime')}>{status ? formatUptime(Number(status.xray_uptime_seconds ?? 0)) : '—'}</Row>
                <Row label={t('node.statusAt')}>{n.last_status_at ? formatRelative(lng, n.last_status_at) : '—'}</Row>
              </Table.Tbody>
            </Table>
          </Card>
        </Grid.Col>
        <Grid.Col span={{ base: 12, md: 6 }}>
          <NodeTrafficCard node={n} />
        </Grid.Col>
        <Grid.Col span={{ base: 12, md: 6 }}>
          <NodeEnforcementCard node={n} />
        </Grid.Col>
      </Grid>
      <Tabs defaultValue="logs" mt="md">
        <Tabs.List>
          <Tabs.Tab value="logs">{t('nodeLogs.title')}</Tabs.Tab>
        </Tabs.List>
        <Tabs.Panel value="logs" pt="sm">
          <NodeLogTail nodeId={n.id} online={n.connectivity === 'online'} />
        </Tabs.Panel>
      </Tabs>
    </>
  );
}

function formatUptime(seconds: number): string {
  const d = Math.floor(seconds / 86400);
  const h = Math.floor((seconds % 86400) / 3600);
  const m = Math.floor((seconds % 3600) / 60);
  return d > 0 ? `${d}d ${h}h` : h > 0 ? `${h}h ${m}m` : `${m}m`;
}

/**
 * The agent's version, whether this control plane serves a newer release (and, for writers, the
 * button that installs it), and how the last upgrade asked for stands: pending until the agent
 * answers (the page follows it live; asked again after 15 minutes without an answer), or when it
 * succeeded. A failure is the red alert above.
 */
function AgentVersion({
  node,
  canUpgrade,
  upgrading,
  onUpgrade,
}: {
  node: Node;
  canUpgrade: boolean;
  upgrading: boolean;
  onUpgrade: () => void;
}) {
  const { t, i18n } = useTranslation();
  const last = node.agent_upgrade;
  const pending = last?.state === 'pending';
  // An agent before 0.2.0 never answers the command: after 15 minutes it may be asked again.
  const waiting = pending && Date.now() - Date.parse(last.requested_at) < 15 * 60_000;
  return (
    <Stack gap={6} align="flex-start">
      <Group gap={4}>
        <Text size="sm">{node.agent_version ?? '—'}</Text>
        {node.outdated_agent && <StatusBadge value="outdated" />}
        <AgentUpdateBadge node={node} />
      </Group>
      {pending && (
        <Group gap={6} wrap="nowrap" data-testid="agent-upgrade-pending">
          <Loader size="xs" aria-hidden />
          <Text size="sm">{t('node.upgrading', { version: last.version })}</Text>
        </Group>
      )}
      {last?.state === 'succeeded' && (
        <Text size="sm" c="dimmed" data-testid="agent-upgrade-succeeded">
          {t('node.upgraded', { version: last.version, when: formatDateTime(i18n.language, last.finished_at) })}
        </Text>
      )}
      {canUpgrade && node.agent_upgrade_available && (
        <Button
          size="xs"
          variant="default"
          onClick={onUpgrade}
          loading={upgrading}
          disabled={waiting || node.connectivity !== 'online'}
          data-testid="upgrade-agent"
        >
          {t('node.upgradeAgent')}
        </Button>
      )}
    </Stack>
  );
}

function Row({ label, children }: { label: string; children: React.ReactNode }) {
  return (
    <Table.Tr>
      <Table.Th scope="row" w="40%">
        {label}
      </Table.Th>
      <Table.Td>{children}</Table.Td>
    </Table.Tr>
  );
}

/**
 * The token (shown once) as the one line to run as root on the server (the install script this
 * control plane serves), with a copy button; the developer's commands from a checkout folded below.
 */
function EnrollCommands({ token }: { token: EnrollToken }) {
  const { t, i18n } = useTranslation();
  const enrollLine = `npx -y pnpm@10.34.8 svc-agent enroll --server ${token.grpc_endpoint} --token ${token.token} --ca-sha256 ${token.ca_cert_sha256}`;
  const runLine = 'npx -y pnpm@10.34.8 svc-agent run';
  return (
    <Alert color="brand" mb="md" title={t('node.enrollTitle')} data-testid="enroll-commands">
      <Stack gap="xs">
        <Text size="sm">{t('node.installIntro')}</Text>
        <CommandLine line={token.install_command} testId="install-command" prominent />
        <Text size="sm">{t('node.enrollIntro', { expires: formatDateTime(i18n.language, token.expires_at) })}</Text>
        <Text size="xs">
          {t('node.engineOption')}{' '}
          <Code dir="ltr" className="svc-mono">
            --engine-bin /usr/bin/v2ray --engine-api v2ray
          </Code>
        </Text>
        <Text size="xs" c="dimmed">
          {t('node.enrollFoot')}
        </Text>
        <details data-testid="checkout-commands">
          <Text component="summary" size="xs" fw={600} style={{ cursor: 'pointer' }}>
            {t('node.fromCheckout')}
          </Text>
          <Stack gap="xs" mt="xs">
            {[enrollLine, runLine].map((line) => (
              <CommandLine key={line} line={line} />
            ))}
          </Stack>
        </details>
      </Stack>
    </Alert>
  );
}

/** One command, exactly as it is to be run (left to right in every language; long lines wrap), with a copy button. */
function CommandLine({ line, testId, prominent = false }: { line: string; testId?: string; prominent?: boolean }) {
  const { t } = useTranslation();
  return (
    <Group gap="xs" wrap="nowrap" align="flex-start">
      <Code
        block
        dir="ltr"
        style={{ flex: 1, minWidth: 0, ...(prominent ? { fontSize: 'var(--mantine-font-size-sm)' } : {}) }}
        className="svc-mono"
        data-testid={testId}
      >
        {line}
      </Code>
      <CopyButton value={line}>
        {({ copied, copy }) => (
          <Button
            size="xs"
            variant={prominent ? 'filled' : 'default'}
            onClick={copy}
            {...(testId ? { 'data-testid': `copy-${testId}` } : {})}
          >
            {copied ? t('common.copied') : t('common.copy')}
          </Button>
        )}
      </CopyButton>
    </Group>
  );
}
