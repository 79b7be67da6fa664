import { Alert, Badge, Button, Group, Stack, Text, TextInput } from '@mantine/core';
import { useDisclosure } from '@mantine/hooks';
import { modals } from '@mantine/modals';
import type { AdminSchemas } from '@svc/api-client';
import { DataTable, formatDateTime } from '@svc/web-ui';
import { useMutation, useQueryClient } from '@tanstack/react-query';
import { createColumnHelper } from '@tanstack/react-table';
import { useMemo } from 'react';
import { useForm } from 'react-hook-form';
import { useTranslation } from 'react-i18next';
import { api, unwrap } from '../api.ts';
import { useCursorList } from '../components/cursor-list.ts';
import { Dialog } from '../components/dialog.tsx';
import { showProblem } from '../components/form-errors.ts';
import { notify } from '../components/notify.ts';
import { PageHeader } from '../components/page-header.tsx';
import { ReadOnlyNote } from '../components/read-only-note.tsx';
import { useFallbackInterval } from '../events.ts';
import { useCan } from '../me.tsx';

type Account = AdminSchemas['AcmeAccount'];
const col = createColumnHelper<Account>();

/** ACME accounts certificates are ordered with; the worker registers each with its CA. */
export function AcmeAccountsScreen() {
  const { t, i18n } = useTranslation();
  const can = useCan();
  const queryClient = useQueryClient();
  const poll = useFallbackInterval(15_000);
  const list = useCursorList(
    ['acme-accounts'],
    (cursor) => unwrap(api.GET('/api/v1/acme-accounts', { params: { query: { ...(cursor ? { cursor } : {}), limit: 100 } } })),
    poll || undefined,
  );
  const [creating, create] = useDisclosure(false);
  const remove = useMutation({
    mutationFn: (id: string) => unwrap(api.DELETE('/api/v1/acme-accounts/{id}', { params: { path: { id } } })),
    onSuccess: () => queryClient.invalidateQueries({ queryKey: ['acme-accounts'] }),
    onError: (e) => notify(e.message, 'red'),
  });
  const columns = useMemo(
    () => [
      col.accessor('email', { header: t('fields.email') }),
      col.accessor('directory_url', { header: t('acme.directory'), cell: (c) => <span className="svc-mono">{c.getValue()}</span> }),
      col.accessor('registered', {
        header: t('fields.status'),
        cell: (c) =>
          c.getValue() ? (
            <Badge variant="dot" color="teal">
              {t('acme.registered')}
            </Badge>
          ) : (
            <Badge variant="dot" color={c.row.original.registration_error ? 'red' : 'yellow'}>
              {c.row.original.registration_error ? t('acme.failed') : t('acme.registering')}
            </Badge>
          ),
      }),
      col.accessor('registration_error', { header: t('certificates.lastError'), cell: (c) => c.getValue() ?? '—' }),
      col.accessor('created_at', { header: t('fields.created'), cell: (c) => formatDateTime(i18n.language, c.getValue()) }),
      col.display({
        id: 'actions',
        header: () => <span className="sr-only">{t('common.actions')}</span>,
        cell: (c) =>
          can.write ? (
            <Button
              size="compact-xs"
              color="red"
              variant="subtle"
              aria-label={t('acme.deleteNamed', { email: c.row.original.email })}
              onClick={() =>
                modals.openConfirmModal({
                  title: t('acme.deleteTitle', { email: c.row.original.email }),
                  children: <Text size="sm">{t('acme.deleteBody')}</Text>,
                  labels: { confirm: t('common.delete'), cancel: t('common.cancel') },
                  confirmProps: { color: 'red' },
                  onConfirm: () => remove.mutate(c.row.original.id),
                })
              }
            >
              {t('common.delete')}
            </Button>
          ) : null,
      }),
    ],
    [t, i18n.language, can.write, remove],
  );
  return (
    <>
      <PageHeader
        title={t('acme.title')}
        subtitle={t('acme.subtitle')}
        actions={
          can.write && (
            <Button onClick={create.open} data-testid="create-acme-account">
              {t('acme.create')}
            </Button>
          )
        }
      />
      <ReadOnlyNote />
      <DataTable
        label={t('acme.title')}
        rows={list.rows}
        columns={columns}
        rowId={(a) => a.id}
        loading={list.loading}
        hasMore={list.hasMore}
        loadMore={list.loadMore}
        empty={t('acme.empty')}
        sortLabels={{ asc: t('common.sortAsc'), desc: t('common.sortDesc'), none: t('common.sortNone') }}
      />
      <Dialog opened={creating} onClose={create.close} title={t('acme.create')}>
        <AcmeAccountForm onSaved={create.close} />
      </Dialog>
    </>
  );
}

function AcmeAccountForm({ onSaved }: { onSaved: () => void }) {
  const { t } = useTranslation();
  const queryClient = useQueryClient();
  const form = useForm<{ email: string; directory_url: string; kid: string; hmac_key: string }>({
    defaultValues: { email: '', directory_url: '', kid: '', hmac_key: '' },
  });
  const { errors, isSubmitting } = form.formState;
  const submit = form.handleSubmit(async (v) => {
    try {
      await unwrap(
        api.POST('/api/v1/acme-accounts', {
          body: {
            email: v.email,
            ...(v.directory_url.trim() ? { directory_url: v.directory_url.trim() } : {}),
            ...(v.kid.trim() && v.hmac_key.trim() ? { external_account_binding: { kid: v.kid.trim(), hmac_key: v.hmac_key.trim() } } : {}),
          },
        }),
      );
      await queryClient.invalidateQueries({ queryKey: ['acme-accounts'] });
      onSaved();
    } catch (err) {
      const message = showProblem(err, form.setError, ['email', 'directory_url']);
      if (message) form.setError('root', { message });
    }
  });
  return (
    <form onSubmit={submit} noValidate>
      <Stack gap="sm">
        <TextInput
          type="email"
          label={t('fields.email')}
          description={t('acme.emailHint')}
          required
          error={errors.email?.message}
          {...form.register('email', { required: t('common.required') })}
        />
        <TextInput
          type="url"
          label={t('acme.directory')}
          description={t('acme.directoryHint')}
          error={errors.directory_url?.message}
          {...form.register('directory_url')}
        />
        <Group grow>
          <TextInput label={t('acme.eabKid')} autoComplete="off" {...form.register('kid')} />
          <TextInput label={t('acme.eabHmac')} autoComplete="off" {...form.register('hmac_key')} />
        </Group>
        <Text size="xs" c="dimmed">
          {t('acme.eabHint')}
        </Text>
        {errors.root && (
          <Alert color="red" role="alert">
            {errors.root.message}
          </Alert>
        )}
        <Button type="submit" loading={isSubmitting}>
          {t('common.create')}
        </Button>
      </Stack>
    </form>
  );
}
