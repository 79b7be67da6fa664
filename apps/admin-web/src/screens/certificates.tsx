import { Alert, Anchor, Badge, Button, Group, SegmentedControl, Select, Stack, TagsInput, Text, Textarea, TextInput } from '@mantine/core';
import { useDisclosure } from '@mantine/hooks';
import type { AdminSchemas } from '@svc/api-client';
import { DataTable, formatDateTime } from '@svc/web-ui';
import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { createColumnHelper } from '@tanstack/react-table';
import { useMemo, useState } from 'react';
import { Controller, useForm } from 'react-hook-form';
import { useTranslation } from 'react-i18next';
import { api, unwrap } from '../api.ts';
import { useCursorList } from '../components/cursor-list.ts';
import { DeleteButton } from '../components/delete-button.tsx';
import { Dialog } from '../components/dialog.tsx';
import { showProblem } from '../components/form-errors.ts';
import { notify } from '../components/notify.ts';
import { PageHeader } from '../components/page-header.tsx';
import { ReadOnlyNote } from '../components/read-only-note.tsx';
import { useFallbackInterval } from '../events.ts';
import { useCan } from '../me.tsx';

type Certificate = AdminSchemas['Certificate'];
const col = createColumnHelper<Certificate>();
const STATUS_COLORS: Record<string, string> = { active: 'teal', issued: 'teal', pending: 'yellow', failed: 'red' };

export interface CertificatesSearch {
  /** expiring: not expired, expiring within 30 days (the dashboard's count); failing: the last issuance or renewal failed. */
  state?: 'expiring' | 'failing' | undefined;
}

/** Certificates: uploaded ones and ACME ones (ordered over DNS-01), with their state, last error and renewal. */
export function CertificatesScreen({ search, setSearch }: { search: CertificatesSearch; setSearch: (s: CertificatesSearch) => void }) {
  const { t, i18n } = useTranslation();
  const lng = i18n.language;
  const can = useCan();
  const queryClient = useQueryClient();
  const poll = useFallbackInterval(30_000);
  const filter =
    search.state === 'expiring' ? { expiring_within_days: 30 } : search.state === 'failing' ? { failing: 'true' as const } : {};
  const list = useCursorList(
    ['certificates', filter],
    (cursor) => unwrap(api.GET('/api/v1/certificates', { params: { query: { ...filter, ...(cursor ? { cursor } : {}), limit: 100 } } })),
    poll || undefined,
  );
  const [creating, create] = useDisclosure(false);
  const [editing, setEditing] = useState<Certificate | null>(null);
  const renew = useMutation({
    mutationFn: (id: string) => unwrap(api.POST('/api/v1/certificates/{id}/renew', { params: { path: { id } } })),
    onSuccess: () => {
      notify(t('certificates.renewRequested'));
      void queryClient.invalidateQueries({ queryKey: ['certificates'] });
    },
    onError: (e) => notify(e.message, 'red'),
  });
  const columns = useMemo(
    () => [
      col.accessor('name', {
        header: t('fields.name'),
        cell: (c) => {
          const label = c.getValue() ?? c.row.original.domains.join(', ');
          return can.write ? (
            <Anchor component="button" type="button" onClick={() => setEditing(c.row.original)}>
              {label}
            </Anchor>
          ) : (
            label
          );
        },
      }),
      col.accessor('domains', { header: t('certificates.domains'), cell: (c) => c.getValue().join(', ') }),
      col.accessor('kind', { header: t('certificates.kind'), cell: (c) => t(`certificates.kinds.${c.getValue()}`) }),
      col.accessor('status', {
        header: t('fields.status'),
        cell: (c) => (
          <Group gap={4} wrap="nowrap">
            <Badge variant="dot" color={STATUS_COLORS[c.getValue()] ?? 'gray'}>
              {t(`certificates.statuses.${c.getValue()}`, { defaultValue: c.getValue() })}
            </Badge>
            {c.row.original.issuing && (
              <Badge variant="dot" color="blue">
                {t('certificates.issuing')}
              </Badge>
            )}
          </Group>
        ),
      }),
      col.accessor('not_after', { header: t('certificates.expires'), cell: (c) => formatDateTime(lng, c.getValue()) }),
      col.accessor('last_error', {
        header: t('certificates.lastError'),
        cell: (c) =>
          c.getValue() ? (
            <Text size="sm" c="red" title={c.getValue() ?? ''}>
              {c.getValue()}
            </Text>
          ) : (
            '—'
          ),
      }),
      col.display({
        id: 'actions',
        header: () => <span className="sr-only">{t('common.actions')}</span>,
        cell: (c) =>
          can.write && c.row.original.kind === 'acme' ? (
            <Button size="compact-xs" variant="default" onClick={() => renew.mutate(c.row.original.id)}>
              {t('certificates.renew')}
            </Button>
          ) : null,
      }),
    ],
    [t, lng, can.write, renew],
  );
  return (
    <>
      <PageHeader
        title={t('certificates.title')}
        subtitle={t('certificates.subtitle')}
        actions={
          can.write && (
            <Button onClick={create.open} data-testid="create-certificate">
              {t('certificates.create')}
            </Button>
          )
        }
      />
      <ReadOnlyNote />
      <SegmentedControl
        mb="sm"
        aria-label={t('certificates.show')}
        value={search.state ?? 'all'}
        onChange={(v) => setSearch({ state: v === 'all' ? undefined : (v as 'expiring' | 'failing') })}
        data={[
          { value: 'all', label: t('certificates.showAll') },
          { value: 'expiring', label: t('certificates.showExpiring') },
          { value: 'failing', label: t('certificates.showFailing') },
        ]}
      />
      <DataTable
        label={t('certificates.title')}
        rows={list.rows}
        columns={columns}
        rowId={(c) => c.id}
        loading={list.loading}
        hasMore={list.hasMore}
        loadMore={list.loadMore}
        empty={t('certificates.empty')}
        sortLabels={{ asc: t('common.sortAsc'), desc: t('common.sortDesc'), none: t('common.sortNone') }}
      />
      <Dialog opened={creating} onClose={create.close} title={t('certificates.create')} size="lg">
        <CertificateForm onSaved={create.close} />
      </Dialog>
      <Dialog opened={editing !== null} onClose={() => setEditing(null)} title={t('certificates.edit')} size="lg">
        {editing && <CertificateForm certificate={editing} onSaved={() => setEditing(null)} />}
      </Dialog>
    </>
  );
}

interface Values {
  kind: 'uploaded' | 'acme';
  name: string;
  cert_pem: string;
  key_pem: string;
  domains: string[];
  acme_account_id: string;
  dns_provider_id: string;
}

function CertificateForm({ certificate, onSaved }: { certificate?: Certificate; onSaved: () => void }) {
  const { t } = useTranslation();
  const queryClient = useQueryClient();
  const form = useForm<Values>({
    defaultValues: {
      kind: certificate?.kind ?? 'uploaded',
      name: certificate?.name ?? '',
      cert_pem: '',
      key_pem: '',
      domains: certificate?.domains ?? [],
      acme_account_id: certificate?.acme_account_id ?? '',
      dns_provider_id: certificate?.dns_provider_id ?? '',
    },
  });
  const kind = form.watch('kind');
  const { errors, isSubmitting } = form.formState;
  const accounts = useQuery({
    queryKey: ['acme-accounts', 'options'],
    queryFn: () => unwrap(api.GET('/api/v1/acme-accounts', { params: { query: { limit: 200 } } })),
    select: (p) => p.items.map((a) => ({ value: a.id, label: `${a.email} (${new URL(a.directory_url).host})` })),
    enabled: kind === 'acme',
  });
  const dns = useQuery({
    queryKey: ['dns-providers', 'options'],
    queryFn: () => unwrap(api.GET('/api/v1/dns-providers', { params: { query: { limit: 200 } } })),
    select: (p) => p.items.map((d) => ({ value: d.id, label: `${d.name} (${d.kind})` })),
    enabled: kind === 'acme',
  });
  const remove = useMutation({
    mutationFn: (id: string) => unwrap(api.DELETE('/api/v1/certificates/{id}', { params: { path: { id } } })),
    onSuccess: () => {
      void queryClient.invalidateQueries({ queryKey: ['certificates'] });
      onSaved();
    },
  });
  const submit = form.handleSubmit(async (v) => {
    const material =
      v.kind === 'uploaded' ? { ...(v.cert_pem ? { cert_pem: v.cert_pem } : {}), ...(v.key_pem ? { key_pem: v.key_pem } : {}) } : {};
    const acme = v.kind === 'acme' ? { acme_account_id: v.acme_account_id, dns_provider_id: v.dns_provider_id } : {};
    const domains = v.domains.length > 0 ? { domains: v.domains } : {};
    try {
      if (certificate) {
        await unwrap(
          api.PATCH('/api/v1/certificates/{id}', {
            params: { path: { id: certificate.id } },
            body: { name: v.name.trim() || null, ...material, ...acme, ...domains },
          }),
        );
      } else {
        await unwrap(
          api.POST('/api/v1/certificates', { body: { kind: v.kind, name: v.name.trim() || null, ...material, ...acme, ...domains } }),
        );
      }
      await queryClient.invalidateQueries({ queryKey: ['certificates'] });
      onSaved();
    } catch (err) {
      const message = showProblem(err, form.setError, [
        'kind',
        'name',
        'cert_pem',
        'key_pem',
        'domains',
        'acme_account_id',
        'dns_provider_id',
      ]);
      if (message) form.setError('root', { message });
    }
  });
  return (
    <form onSubmit={submit} noValidate>
      <Stack gap="sm">
        {!certificate && (
          <Controller
            control={form.control}
            name="kind"
            render={({ field }) => (
              <SegmentedControl
                aria-label={t('certificates.kind')}
                value={field.value}
                onChange={field.onChange}
                data={[
                  { value: 'uploaded', label: t('certificates.kinds.uploaded') },
                  { value: 'acme', label: t('certificates.kinds.acme') },
                ]}
              />
            )}
          />
        )}
        <TextInput
          label={t('fields.name')}
          description={t('certificates.nameHint')}
          error={errors.name?.message}
          {...form.register('name')}
        />
        <Controller
          control={form.control}
          name="domains"
          render={({ field }) => (
            <TagsInput
              label={t('certificates.domains')}
              description={kind === 'acme' ? t('certificates.domainsAcmeHint') : t('certificates.domainsHint')}
              value={field.value}
              onChange={field.onChange}
              error={errors.domains?.message}
            />
          )}
        />
        {kind === 'uploaded' ? (
          <>
            <Textarea
              label={t('certificates.certPem')}
              description={certificate ? t('certificates.keepMaterial') : t('certificates.certPemHint')}
              autosize
              minRows={3}
              maxRows={8}
              className="svc-mono"
              error={errors.cert_pem?.message}
              {...form.register('cert_pem')}
            />
            <Textarea
              label={t('certificates.keyPem')}
              description={t('certificates.keyPemHint')}
              autosize
              minRows={3}
              maxRows={8}
              className="svc-mono"
              error={errors.key_pem?.message}
              {...form.register('key_pem')}
            />
          </>
        ) : (
          <>
            <Controller
              control={form.control}
              name="acme_account_id"
              render={({ field }) => (
                <Select
                  label={t('certificates.acmeAccount')}
                  required
                  data={accounts.data ?? []}
                  value={field.value || null}
                  onChange={(v) => field.onChange(v ?? '')}
                  error={errors.acme_account_id?.message}
                />
              )}
            />
            <Controller
              control={form.control}
              name="dns_provider_id"
              render={({ field }) => (
                <Select
                  label={t('certificates.dnsProvider')}
                  required
                  data={dns.data ?? []}
                  value={field.value || null}
                  onChange={(v) => field.onChange(v ?? '')}
                  error={errors.dns_provider_id?.message}
                />
              )}
            />
          </>
        )}
        {certificate?.last_error && (
          <Alert color="red" title={t('certificates.lastError')}>
            {certificate.last_error}
          </Alert>
        )}
        {errors.root && (
          <Alert color="red" role="alert">
            {errors.root.message}
          </Alert>
        )}
        <Group justify="space-between">
          {certificate ? (
            <DeleteButton
              title={t('certificates.deleteTitle')}
              body={t('certificates.deleteBody')}
              onConfirm={() => remove.mutate(certificate.id)}
            />
          ) : (
            <span />
          )}
          <Button type="submit" loading={isSubmitting}>
            {certificate ? t('common.save') : kind === 'acme' ? t('certificates.order') : t('certificates.upload')}
          </Button>
        </Group>
        {remove.isError && <Alert color="red">{remove.error.message}</Alert>}
      </Stack>
    </form>
  );
}
