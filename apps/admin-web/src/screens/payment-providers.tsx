import {
  Alert,
  Anchor,
  Badge,
  Button,
  Checkbox,
  CopyButton,
  Group,
  PasswordInput,
  Select,
  Stack,
  Textarea,
  TextInput,
} from '@mantine/core';
import { useDisclosure } from '@mantine/hooks';
import type { AdminSchemas } from '@svc/api-client';
import { DataTable } from '@svc/web-ui';
import { useMutation, useQueryClient } from '@tanstack/react-query';
import { createColumnHelper } from '@tanstack/react-table';
import { useMemo, useState } from 'react';
import { Controller, useForm } from 'react-hook-form';
import { useTranslation } from 'react-i18next';
import { api, unwrap } from '../api.ts';
import { useCursorList } from '../components/cursor-list.ts';
import { DeleteButton } from '../components/delete-button.tsx';
import { Dialog } from '../components/dialog.tsx';
import { showProblem } from '../components/form-errors.ts';
import { PageHeader } from '../components/page-header.tsx';
import { ReadOnlyNote } from '../components/read-only-note.tsx';
import { useCan } from '../me.tsx';

type Provider = AdminSchemas['PaymentProvider'];
type Kind = AdminSchemas['CreatePaymentProvider']['kind'];
const col = createColumnHelper<Provider>();

/** Each kind's settings: secrets are write-only (the API says which are set, never their values). */
const FIELDS: Record<Kind, Array<{ name: string; secret: boolean; required: boolean; long?: boolean }>> = {
  stripe: [
    { name: 'secret_key', secret: true, required: true },
    { name: 'webhook_secret', secret: true, required: true },
    { name: 'publishable_key', secret: false, required: false },
  ],
  cryptobot: [
    { name: 'api_token', secret: true, required: true },
    { name: 'network', secret: false, required: false },
  ],
  yookassa: [
    { name: 'shop_id', secret: false, required: true },
    { name: 'secret_key', secret: true, required: true },
    { name: 'allowed_source_cidrs', secret: false, required: false },
  ],
  manual: [{ name: 'instructions', secret: false, required: true, long: true }],
};

/** Payment providers customers pay through (docs/payments.md); each gets a webhook URL to give the provider. */
export function PaymentProvidersScreen() {
  const { t } = useTranslation();
  const can = useCan();
  const list = useCursorList(['payment-providers'], (cursor) =>
    unwrap(api.GET('/api/v1/payment-providers', { params: { query: { ...(cursor ? { cursor } : {}), limit: 100 } } })),
  );
  const [creating, create] = useDisclosure(false);
  const [editing, setEditing] = useState<Provider | null>(null);
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
      col.accessor('enabled', {
        header: t('fields.status'),
        cell: (c) => (
          <Badge variant="dot" color={c.getValue() ? 'teal' : 'gray'}>
            {t(c.getValue() ? 'status.enabled' : 'status.disabled')}
          </Badge>
        ),
      }),
      col.accessor('secrets_set', { header: t('providers.secretsSet'), cell: (c) => c.getValue().join(', ') || '—' }),
      col.accessor('webhook_url', {
        header: t('providers.webhookUrl'),
        cell: (c) =>
          c.getValue() ? (
            <CopyButton value={c.getValue() as string}>
              {({ copied, copy }) => (
                <Button size="compact-xs" variant="subtle" onClick={copy} title={c.getValue() as string}>
                  {copied ? t('common.copied') : t('providers.copyWebhook')}
                </Button>
              )}
            </CopyButton>
          ) : (
            '—'
          ),
      }),
    ],
    [t, can.write],
  );
  return (
    <>
      <PageHeader
        title={t('providers.title')}
        subtitle={t('providers.subtitle')}
        actions={
          can.write && (
            <Button onClick={create.open} data-testid="create-payment-provider">
              {t('providers.create')}
            </Button>
          )
        }
      />
      <ReadOnlyNote />
      <DataTable
        label={t('providers.title')}
        rows={list.rows}
        columns={columns}
        rowId={(p) => p.id}
        loading={list.loading}
        hasMore={list.hasMore}
        loadMore={list.loadMore}
        empty={t('providers.empty')}
        sortLabels={{ asc: t('common.sortAsc'), desc: t('common.sortDesc'), none: t('common.sortNone') }}
      />
      <Dialog opened={creating} onClose={create.close} title={t('providers.create')}>
        <ProviderForm onSaved={create.close} />
      </Dialog>
      <Dialog opened={editing !== null} onClose={() => setEditing(null)} title={editing?.name ?? ''}>
        {editing && <ProviderForm provider={editing} onSaved={() => setEditing(null)} />}
      </Dialog>
    </>
  );
}

function ProviderForm({ provider, onSaved }: { provider?: Provider; onSaved: () => void }) {
  const { t } = useTranslation();
  const queryClient = useQueryClient();
  const form = useForm<{ name: string; kind: Kind; enabled: boolean; config: Record<string, string> }>({
    defaultValues: {
      name: provider?.name ?? '',
      kind: (provider?.kind as Kind) ?? 'manual',
      enabled: provider?.enabled ?? false,
      config: { ...(provider?.config ?? {}) },
    },
  });
  const kind = form.watch('kind');
  const { errors, isSubmitting } = form.formState;
  const remove = useMutation({
    mutationFn: (id: string) => unwrap(api.DELETE('/api/v1/payment-providers/{id}', { params: { path: { id } } })),
    onSuccess: () => {
      void queryClient.invalidateQueries({ queryKey: ['payment-providers'] });
      onSaved();
    },
  });
  const submit = form.handleSubmit(async (v) => {
    // Empty secrets are left out (kept); empty public settings are cleared.
    const config: Record<string, string | null> = {};
    for (const f of FIELDS[v.kind]) {
      const value = (v.config[f.name] ?? '').trim();
      if (f.secret) {
        if (value) config[f.name] = value;
      } else config[f.name] = value || null;
    }
    try {
      if (provider)
        await unwrap(
          api.PATCH('/api/v1/payment-providers/{id}', {
            params: { path: { id: provider.id } },
            body: { name: v.name, enabled: v.enabled, config },
          }),
        );
      else await unwrap(api.POST('/api/v1/payment-providers', { body: { name: v.name, kind: v.kind, enabled: v.enabled, config } }));
      await queryClient.invalidateQueries({ queryKey: ['payment-providers'] });
      onSaved();
    } catch (err) {
      const message = showProblem(err, form.setError, ['name', 'kind', 'enabled']);
      const configErrors = Object.entries((err as { problem?: { errors?: Record<string, string> } }).problem?.errors ?? {}).filter(([k]) =>
        k.startsWith('config'),
      );
      form.setError('root', { message: [message, ...configErrors.map(([k, e]) => `${k}: ${e}`)].filter(Boolean).join('; ') });
    }
  });
  return (
    <form onSubmit={submit} noValidate>
      <Stack gap="sm">
        <TextInput
          label={t('fields.name')}
          description={t('providers.nameHint')}
          required
          error={errors.name?.message}
          {...form.register('name', { required: t('common.required') })}
        />
        {!provider && (
          <Select
            label={t('dns.kind')}
            allowDeselect={false}
            value={kind}
            onChange={(v) => form.setValue('kind', (v as Kind) ?? 'manual')}
            data={(Object.keys(FIELDS) as Kind[]).map((k) => ({ value: k, label: k }))}
          />
        )}
        {FIELDS[kind].map((f) => {
          const set = provider?.secrets_set.includes(f.name);
          const description = f.secret ? (set ? t('providers.secretKept') : t('providers.secretHint')) : undefined;
          if (f.secret)
            return (
              <PasswordInput
                key={`${kind}-${f.name}`}
                label={f.name}
                description={description}
                required={f.required && !set}
                autoComplete="off"
                {...form.register(`config.${f.name}`)}
              />
            );
          if (f.long)
            return (
              <Textarea
                key={`${kind}-${f.name}`}
                label={f.name}
                description={t('providers.instructionsHint')}
                required={f.required}
                autosize
                minRows={3}
                {...form.register(`config.${f.name}`)}
              />
            );
          return <TextInput key={`${kind}-${f.name}`} label={f.name} required={f.required} {...form.register(`config.${f.name}`)} />;
        })}
        <Controller
          control={form.control}
          name="enabled"
          render={({ field }) => (
            <Checkbox
              label={t('status.enabled')}
              description={t('providers.enabledHint')}
              checked={field.value}
              onChange={(e) => field.onChange(e.currentTarget.checked)}
            />
          )}
        />
        {errors.root?.message && (
          <Alert color="red" role="alert">
            {errors.root.message}
          </Alert>
        )}
        <Group justify="space-between">
          {provider ? (
            <DeleteButton
              title={t('providers.deleteTitle', { name: provider.name })}
              body={t('providers.deleteBody')}
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
