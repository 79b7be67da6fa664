import { Alert, Badge, Button, Code, Group, MultiSelect, Stack, Textarea, TextInput } from '@mantine/core';
import { useDisclosure } from '@mantine/hooks';
import type { AdminSchemas } from '@svc/api-client';
import { DataTable, formatDateTime } from '@svc/web-ui';
import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { createColumnHelper } from '@tanstack/react-table';
import { useMemo, useState } from 'react';
import { Controller, useForm } from 'react-hook-form';
import { useTranslation } from 'react-i18next';
import { api, unwrap } from '../api.ts';
import { Dialog } from '../components/dialog.tsx';
import { showProblem } from '../components/form-errors.ts';
import { PageHeader } from '../components/page-header.tsx';
import { SecretOnce } from '../components/secret-once.tsx';
import { useCan } from '../me.tsx';

type ApiToken = AdminSchemas['ApiToken'];
const col = createColumnHelper<ApiToken>();

/** The resource families a token's scope names (the admin API's tags; docs/integrations.md). */
const FAMILIES = [
  'access-groups',
  'acme-accounts',
  'admins',
  'audit',
  'bulk-jobs',
  'certificates',
  'chains',
  'clients',
  'dns-providers',
  'events',
  'imports',
  'inbound-profiles',
  'inbounds',
  'nodes',
  'payment-providers',
  'payments',
  'plans',
  'settings',
  'stats',
  'subscriptions',
  'webhooks',
] as const;

/** API tokens for integrations: owners see everyone's, admins their own; viewers have none. */
export function ApiTokensScreen() {
  const { t, i18n } = useTranslation();
  const can = useCan();
  const queryClient = useQueryClient();
  const list = useQuery({
    queryKey: ['api-tokens'],
    queryFn: () => unwrap(api.GET('/api/v1/api-tokens')),
    enabled: can.write,
  });
  const [creating, create] = useDisclosure(false);
  const [secret, setSecret] = useState<string | null>(null);
  const revoke = useMutation({
    mutationFn: (id: string) => unwrap(api.DELETE('/api/v1/api-tokens/{id}', { params: { path: { id } } })),
    onSuccess: () => void queryClient.invalidateQueries({ queryKey: ['api-tokens'] }),
  });
  const columns = useMemo(
    () => [
      col.accessor('name', { header: t('fields.name') }),
      col.accessor('scopes', {
        header: t('apiTokens.scopes'),
        cell: (c) => (
          <Group gap={4}>
            {c.getValue().map((s) => (
              <Badge key={s} variant="light" dir="ltr">
                {s === 'role' ? t('apiTokens.wholeRole') : s}
              </Badge>
            ))}
          </Group>
        ),
      }),
      col.accessor('prefix', { header: t('apiTokens.prefix'), cell: (c) => <Code dir="ltr">{c.getValue()}…</Code> }),
      col.accessor('expires_at', {
        header: t('apiTokens.expires'),
        cell: (c) => (c.getValue() ? formatDateTime(i18n.language, c.getValue()) : t('apiTokens.never')),
      }),
      col.accessor('last_used_at', {
        header: t('apiTokens.lastUsed'),
        cell: (c) =>
          c.getValue() ? `${formatDateTime(i18n.language, c.getValue())} · ${c.row.original.last_used_ip ?? ''}` : t('apiTokens.neverUsed'),
      }),
      col.display({
        id: 'state',
        header: t('fields.status'),
        cell: (c) =>
          c.row.original.revoked_at ? (
            <Badge color="gray">{t('apiTokens.revoked')}</Badge>
          ) : (
            <Button size="xs" variant="subtle" color="red" onClick={() => revoke.mutate(c.row.original.id)} loading={revoke.isPending}>
              {t('apiTokens.revoke')}
            </Button>
          ),
      }),
    ],
    [t, i18n.language, revoke],
  );
  if (!can.write) {
    return (
      <>
        <PageHeader title={t('apiTokens.title')} />
        <Alert color="gray" data-testid="read-only-note">
          {t('apiTokens.viewersNone')}
        </Alert>
      </>
    );
  }
  return (
    <>
      <PageHeader
        title={t('apiTokens.title')}
        subtitle={t('apiTokens.subtitle')}
        actions={
          <Button onClick={create.open} data-testid="create-api-token">
            {t('apiTokens.create')}
          </Button>
        }
      />
      {secret && (
        <SecretOnce
          secret={secret}
          title={t('apiTokens.secretTitle')}
          body={t('apiTokens.secretBody')}
          testId="api-token-secret"
          onClose={() => setSecret(null)}
        />
      )}
      <DataTable
        label={t('apiTokens.title')}
        rows={list.data?.items ?? []}
        columns={columns}
        rowId={(row) => row.id}
        loading={list.isLoading}
        hasMore={false}
        loadMore={() => {}}
        empty={t('apiTokens.empty')}
        sortLabels={{ asc: t('common.sortAsc'), desc: t('common.sortDesc'), none: t('common.sortNone') }}
      />
      <Dialog opened={creating} onClose={create.close} title={t('apiTokens.create')}>
        <TokenForm
          onSaved={(s) => {
            create.close();
            setSecret(s);
          }}
        />
      </Dialog>
    </>
  );
}

function TokenForm({ onSaved }: { onSaved: (secret: string) => void }) {
  const { t } = useTranslation();
  const queryClient = useQueryClient();
  const form = useForm<{ name: string; scopes: string[]; expires: string; ips: string }>({
    defaultValues: { name: '', scopes: ['role'], expires: '', ips: '' },
  });
  const { errors, isSubmitting } = form.formState;
  const options = useMemo(
    () => [
      { value: 'role', label: t('apiTokens.wholeRole') },
      ...FAMILIES.flatMap((f) => [
        { value: `${f}:read`, label: `${f}:read` },
        { value: `${f}:write`, label: `${f}:write` },
      ]),
    ],
    [t],
  );
  const submit = form.handleSubmit(async (v) => {
    try {
      const ips = v.ips
        .split(/[\s,]+/)
        .map((s) => s.trim())
        .filter(Boolean);
      const made = await unwrap(
        api.POST('/api/v1/api-tokens', {
          body: {
            name: v.name,
            scopes: v.scopes,
            expires_at: v.expires ? new Date(`${v.expires}T23:59:59Z`).toISOString() : null,
            allowed_ips: ips.length ? ips : null,
          },
        }),
      );
      await queryClient.invalidateQueries({ queryKey: ['api-tokens'] });
      onSaved(made.token);
    } catch (err) {
      const message = showProblem(err, form.setError, ['name', 'scopes']);
      if (message) form.setError('root', { message });
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
        <Controller
          control={form.control}
          name="scopes"
          render={({ field }) => (
            <MultiSelect
              label={t('apiTokens.scopes')}
              description={t('apiTokens.scopesHint')}
              data={options}
              value={field.value}
              onChange={field.onChange}
              searchable
              error={errors.scopes?.message}
            />
          )}
        />
        <TextInput type="date" label={t('apiTokens.expires')} description={t('apiTokens.expiresHint')} {...form.register('expires')} />
        <Textarea
          label={t('apiTokens.allowedIps')}
          description={t('apiTokens.allowedIpsHint')}
          autosize
          minRows={2}
          dir="ltr"
          {...form.register('ips')}
        />
        {errors.root?.message && (
          <Alert color="red" role="alert">
            {errors.root.message}
          </Alert>
        )}
        <Group justify="flex-end">
          <Button type="submit" loading={isSubmitting}>
            {t('common.create')}
          </Button>
        </Group>
      </Stack>
    </form>
  );
}
