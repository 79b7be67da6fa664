import { Alert, Anchor, Button, Group, PasswordInput, Select, Stack, TextInput } from '@mantine/core';
import { useDisclosure } from '@mantine/hooks';
import type { AdminSchemas } from '@svc/api-client';
import { DataTable, formatDateTime } from '@svc/web-ui';
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
import { useCan, useMe } from '../me.tsx';

type Admin = AdminSchemas['Admin'];
const col = createColumnHelper<Admin>();
const ROLES = ['owner', 'admin', 'viewer'] as const;

/** Admins and their roles: owners only (the API refuses everyone else; the screen says so). */
export function AdminsScreen() {
  const { t, i18n } = useTranslation();
  const can = useCan();
  const me = useMe();
  const list = useCursorList(
    ['admins'],
    (cursor) => unwrap(api.GET('/api/v1/admins', { params: { query: { ...(cursor ? { cursor } : {}), limit: 100 } } })),
    undefined,
    can.owner,
  );
  const [creating, create] = useDisclosure(false);
  const [editing, setEditing] = useState<Admin | null>(null);
  const columns = useMemo(
    () => [
      col.accessor('email', {
        header: t('fields.email'),
        cell: (c) => (
          <Anchor component="button" type="button" onClick={() => setEditing(c.row.original)}>
            {c.getValue()}
          </Anchor>
        ),
      }),
      col.accessor('role', { header: t('admins.role'), cell: (c) => t(`roles.${c.getValue()}`) }),
      col.accessor('last_login_at', { header: t('admins.lastLogin'), cell: (c) => formatDateTime(i18n.language, c.getValue()) }),
      col.accessor('created_at', { header: t('fields.created'), cell: (c) => formatDateTime(i18n.language, c.getValue()) }),
    ],
    [t, i18n.language],
  );
  if (!can.owner) {
    return (
      <>
        <PageHeader title={t('admins.title')} />
        <Alert color="gray" data-testid="read-only-note">
          {t('admins.ownersOnly')}
        </Alert>
      </>
    );
  }
  return (
    <>
      <PageHeader
        title={t('admins.title')}
        subtitle={t('admins.subtitle')}
        actions={
          <Button onClick={create.open} data-testid="create-admin">
            {t('admins.create')}
          </Button>
        }
      />
      <DataTable
        label={t('admins.title')}
        rows={list.rows}
        columns={columns}
        rowId={(a) => a.id}
        loading={list.loading}
        hasMore={list.hasMore}
        loadMore={list.loadMore}
        empty={t('admins.empty')}
        sortLabels={{ asc: t('common.sortAsc'), desc: t('common.sortDesc'), none: t('common.sortNone') }}
      />
      <Dialog opened={creating} onClose={create.close} title={t('admins.create')}>
        <AdminForm onSaved={create.close} />
      </Dialog>
      <Dialog opened={editing !== null} onClose={() => setEditing(null)} title={editing?.email ?? ''}>
        {editing && <AdminForm admin={editing} self={editing.id === me.id} onSaved={() => setEditing(null)} />}
      </Dialog>
    </>
  );
}

function AdminForm({ admin, self, onSaved }: { admin?: Admin; self?: boolean; onSaved: () => void }) {
  const { t } = useTranslation();
  const queryClient = useQueryClient();
  const form = useForm<{ email: string; password: string; role: string }>({
    defaultValues: { email: admin?.email ?? '', password: '', role: admin?.role ?? 'admin' },
  });
  const { errors, isSubmitting } = form.formState;
  const remove = useMutation({
    mutationFn: (id: string) => unwrap(api.DELETE('/api/v1/admins/{id}', { params: { path: { id } } })),
    onSuccess: () => {
      void queryClient.invalidateQueries({ queryKey: ['admins'] });
      onSaved();
    },
  });
  const submit = form.handleSubmit(async (v) => {
    try {
      const role = v.role as Admin['role'];
      if (admin) {
        await unwrap(
          api.PATCH('/api/v1/admins/{id}', {
            params: { path: { id: admin.id } },
            body: { email: v.email, role, ...(v.password ? { password: v.password } : {}) },
          }),
        );
      } else {
        await unwrap(api.POST('/api/v1/admins', { body: { email: v.email, role, ...(v.password ? { password: v.password } : {}) } }));
      }
      await queryClient.invalidateQueries({ queryKey: ['admins'] });
      onSaved();
    } catch (err) {
      const message = showProblem(err, form.setError, ['email', 'password', 'role']);
      if (message) form.setError('root', { message });
    }
  });
  return (
    <form onSubmit={submit} noValidate>
      <Stack gap="sm">
        <TextInput
          type="email"
          label={t('fields.email')}
          required
          error={errors.email?.message}
          {...form.register('email', { required: t('common.required') })}
        />
        <Controller
          control={form.control}
          name="role"
          render={({ field }) => (
            <Select
              label={t('admins.role')}
              description={t('admins.roleHint')}
              allowDeselect={false}
              value={field.value}
              onChange={(v) => field.onChange(v ?? 'admin')}
              data={ROLES.map((r) => ({ value: r, label: t(`roles.${r}`) }))}
              error={errors.role?.message}
            />
          )}
        />
        <PasswordInput
          label={t('fields.password')}
          description={admin ? t('admins.passwordKeep') : t('admins.passwordHint')}
          autoComplete="new-password"
          error={errors.password?.message}
          {...form.register('password')}
        />
        {errors.root && (
          <Alert color="red" role="alert">
            {errors.root.message}
          </Alert>
        )}
        <Group justify="space-between">
          {admin && !self ? (
            <DeleteButton
              title={t('admins.deleteTitle', { email: admin.email })}
              body={t('admins.deleteBody')}
              onConfirm={() => remove.mutate(admin.id)}
            />
          ) : (
            <span />
          )}
          <Button type="submit" loading={isSubmitting}>
            {admin ? t('common.save') : t('common.create')}
          </Button>
        </Group>
        {remove.isError && <Alert color="red">{remove.error.message}</Alert>}
      </Stack>
    </form>
  );
}
