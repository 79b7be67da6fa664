import { Alert, Anchor, Button, Group, List, PasswordInput, Select, Stack, Text, TextInput } from '@mantine/core';
import { useDisclosure } from '@mantine/hooks';
import type { AdminSchemas } from '@svc/api-client';
import { DataTable, formatDateTime } from '@svc/web-ui';
import { useMutation, useQueryClient } from '@tanstack/react-query';
import { createColumnHelper } from '@tanstack/react-table';
import { useMemo, useState } from 'react';
import { useForm } from 'react-hook-form';
import { useTranslation } from 'react-i18next';
import { api, unwrap } from '../api.ts';
import { useCursorList } from '../components/cursor-list.ts';
import { DeleteButton } from '../components/delete-button.tsx';
import { Dialog } from '../components/dialog.tsx';
import { showProblem } from '../components/form-errors.ts';
import { PageHeader } from '../components/page-header.tsx';
import { ReadOnlyNote } from '../components/read-only-note.tsx';
import { useCan } from '../me.tsx';

type DnsProvider = AdminSchemas['DnsProvider'];
type Kind = AdminSchemas['CreateDnsProvider']['kind'];
const col = createColumnHelper<DnsProvider>();

/** The credentials each kind takes (write-only; the API says which are set, never their values). */
const CREDENTIALS: Record<Kind, Array<{ name: string; secret: boolean; optional?: boolean }>> = {
  cloudflare: [{ name: 'api_token', secret: true }],
  route53: [
    { name: 'access_key_id', secret: false },
    { name: 'secret_access_key', secret: true },
    { name: 'region', secret: false, optional: true },
    { name: 'hosted_zone_id', secret: false, optional: true },
  ],
  rfc2136: [
    { name: 'server', secret: false },
    { name: 'port', secret: false, optional: true },
    { name: 'key_name', secret: false },
    { name: 'key_algorithm', secret: false, optional: true },
    { name: 'key_secret', secret: true },
    { name: 'zone', secret: false, optional: true },
  ],
  digitalocean: [{ name: 'api_token', secret: true }],
};

/** DNS providers that publish ACME DNS-01 records, with the step-by-step check. */
export function DnsProvidersScreen() {
  const { t, i18n } = useTranslation();
  const can = useCan();
  const list = useCursorList(['dns-providers'], (cursor) =>
    unwrap(api.GET('/api/v1/dns-providers', { params: { query: { ...(cursor ? { cursor } : {}), limit: 100 } } })),
  );
  const [creating, create] = useDisclosure(false);
  const [editing, setEditing] = useState<DnsProvider | null>(null);
  const [checking, setChecking] = useState<DnsProvider | null>(null);
  const columns = useMemo(
    () => [
      col.accessor('name', {
        header: t('fields.name'),
        cell: (c) =>
          can.write ? (
            <Anchor component="button" type="button" onClick={() => setEditing(c.row.original)}>
              {c.getValue()}
            </Anchor>
          ) : (
            c.getValue()
          ),
      }),
      col.accessor('kind', { header: t('dns.kind') }),
      col.accessor('credentials_set', { header: t('dns.credentialsSet'), cell: (c) => c.getValue().join(', ') || '—' }),
      col.accessor('updated_at', { header: t('fields.updated'), cell: (c) => formatDateTime(i18n.language, c.getValue()) }),
      col.display({
        id: 'check',
        header: () => <span className="sr-only">{t('common.actions')}</span>,
        cell: (c) =>
          can.write ? (
            <Button size="compact-xs" variant="default" onClick={() => setChecking(c.row.original)}>
              {t('dns.check')}
            </Button>
          ) : null,
      }),
    ],
    [t, i18n.language, can.write],
  );
  return (
    <>
      <PageHeader
        title={t('dns.title')}
        subtitle={t('dns.subtitle')}
        actions={
          can.write && (
            <Button onClick={create.open} data-testid="create-dns-provider">
              {t('dns.create')}
            </Button>
          )
        }
      />
      <ReadOnlyNote />
      <DataTable
        label={t('dns.title')}
        rows={list.rows}
        columns={columns}
        rowId={(d) => d.id}
        loading={list.loading}
        hasMore={list.hasMore}
        loadMore={list.loadMore}
        empty={t('dns.empty')}
        sortLabels={{ asc: t('common.sortAsc'), desc: t('common.sortDesc'), none: t('common.sortNone') }}
      />
      <Dialog opened={creating} onClose={create.close} title={t('dns.create')}>
        <DnsProviderForm onSaved={create.close} />
      </Dialog>
      <Dialog opened={editing !== null} onClose={() => setEditing(null)} title={editing?.name ?? ''}>
        {editing && <DnsProviderForm provider={editing} onSaved={() => setEditing(null)} />}
      </Dialog>
      <Dialog
        opened={checking !== null}
        onClose={() => setChecking(null)}
        title={checking ? t('dns.checkTitle', { name: checking.name }) : ''}
        size="lg"
      >
        {checking && <DnsCheck provider={checking} />}
      </Dialog>
    </>
  );
}

function DnsProviderForm({ provider, onSaved }: { provider?: DnsProvider; onSaved: () => void }) {
  const { t } = useTranslation();
  const queryClient = useQueryClient();
  const form = useForm<{ name: string; kind: Kind; credentials: Record<string, string> }>({
    defaultValues: { name: provider?.name ?? '', kind: (provider?.kind as Kind) ?? 'cloudflare', credentials: {} },
  });
  const kind = form.watch('kind');
  const { errors, isSubmitting } = form.formState;
  const remove = useMutation({
    mutationFn: (id: string) => unwrap(api.DELETE('/api/v1/dns-providers/{id}', { params: { path: { id } } })),
    onSuccess: () => {
      void queryClient.invalidateQueries({ queryKey: ['dns-providers'] });
      onSaved();
    },
  });
  const submit = form.handleSubmit(async (v) => {
    // The whole set is sent (the API replaces it): empty optional fields are left out.
    const credentials = Object.fromEntries(
      Object.entries(v.credentials).filter(([k, val]) => val.trim() !== '' && CREDENTIALS[v.kind].some((c) => c.name === k)),
    );
    try {
      if (provider) {
        const changed = Object.keys(credentials).length > 0;
        await unwrap(
          api.PATCH('/api/v1/dns-providers/{id}', {
            params: { path: { id: provider.id } },
            body: { name: v.name, ...(changed ? { credentials } : {}) },
          }),
        );
      } else {
        await unwrap(api.POST('/api/v1/dns-providers', { body: { name: v.name, kind: v.kind, credentials } }));
      }
      await queryClient.invalidateQueries({ queryKey: ['dns-providers'] });
      onSaved();
    } catch (err) {
      const message = showProblem(err, form.setError, ['name', 'kind']);
      const credentialErrors = Object.entries((err as { problem?: { errors?: Record<string, string> } }).problem?.errors ?? {}).filter(
        ([k]) => k.startsWith('credentials'),
      );
      form.setError('root', { message: [message, ...credentialErrors.map(([k, e]) => `${k}: ${e}`)].filter(Boolean).join('; ') });
    }
  });
  return (
    <form onSubmit={submit} noValidate>
      <Stack gap="sm">
        <TextInput
          label={t('fields.name')}
          required
          error={errors.name?.message}
          {...form.register('name', { required: t('common.required') })}
        />
        {!provider && (
          <Select
            label={t('dns.kind')}
            allowDeselect={false}
            value={kind}
            onChange={(v) => form.setValue('kind', (v as Kind) ?? 'cloudflare')}
            data={(Object.keys(CREDENTIALS) as Kind[]).map((k) => ({ value: k, label: k }))}
          />
        )}
        {provider && <Text size="sm">{t('dns.replaceCredentials')}</Text>}
        {CREDENTIALS[kind].map((c) =>
          c.secret ? (
            <PasswordInput
              key={`${kind}-${c.name}`}
              label={c.name}
              required={!provider && !c.optional}
              autoComplete="off"
              {...form.register(`credentials.${c.name}`)}
            />
          ) : (
            <TextInput
              key={`${kind}-${c.name}`}
              label={c.name}
              required={!provider && !c.optional}
              autoComplete="off"
              {...form.register(`credentials.${c.name}`)}
            />
          ),
        )}
        {errors.root?.message && (
          <Alert color="red" role="alert">
            {errors.root.message}
          </Alert>
        )}
        <Group justify="space-between">
          {provider ? (
            <DeleteButton
              title={t('dns.deleteTitle', { name: provider.name })}
              body={t('dns.deleteBody')}
              onConfirm={() => remove.mutate(provider.id)}
            />
          ) : (
            <span />
          )}
          <Button type="submit" loading={isSubmitting}>
            {provider ? t('common.save') : t('common.create')}
          </Button>
        </Group>
        {remove.isError && <Alert color="red">{remove.error.message}</Alert>}
      </Stack>
    </form>
  );
}

/** POST /dns-providers/{id}/check: a test TXT record added, seen, removed and gone, step by step. */
function DnsCheck({ provider }: { provider: DnsProvider }) {
  const { t } = useTranslation();
  const [domain, setDomain] = useState('');
  const check = useMutation({
    mutationFn: () => unwrap(api.POST('/api/v1/dns-providers/{id}/check', { params: { path: { id: provider.id } }, body: { domain } })),
  });
  return (
    <Stack>
      <form
        onSubmit={(e) => {
          e.preventDefault();
          check.mutate();
        }}
      >
        <Group align="flex-end">
          <TextInput
            style={{ flex: 1 }}
            label={t('dns.domain')}
            description={t('dns.domainHint')}
            value={domain}
            onChange={(e) => setDomain(e.currentTarget.value)}
            required
          />
          <Button type="submit" loading={check.isPending} disabled={!domain.trim()}>
            {t('dns.runCheck')}
          </Button>
        </Group>
      </form>
      {check.isError && <Alert color="red">{check.error.message}</Alert>}
      {check.data && (
        <Alert
          color={check.data.ok ? 'teal' : 'red'}
          title={check.data.ok ? t('dns.checkOk') : t('dns.checkFailed')}
          data-testid="dns-check-report"
        >
          <Text size="sm" mb="xs" className="svc-mono">
            {check.data.record}
          </Text>
          <List size="sm">
            {check.data.steps.map((s) => (
              <List.Item key={s.step}>
                {s.ok ? '✓' : '✗'} {t(`dns.steps.${s.step}`)} ({s.ms} ms): {s.detail}
              </List.Item>
            ))}
          </List>
        </Alert>
      )}
    </Stack>
  );
}
