import { Alert, Box, Button, Card, ColorInput, Grid, Group, Stack, Tabs, Text, Textarea, TextInput, Title } from '@mantine/core';
import { PLATFORMS, type Platform } from '@svc/client-apps';
import { LOCALES, type LocaleCode } from '@svc/web-ui';
import { useQuery, useQueryClient } from '@tanstack/react-query';
import { useState } from 'react';
import { Controller, type FieldErrors, useForm } from 'react-hook-form';
import { useTranslation } from 'react-i18next';
import { api, unwrap } from '../api.ts';
import { showProblem } from '../components/form-errors.ts';
import { notify } from '../components/notify.ts';
import { PageHeader } from '../components/page-header.tsx';
import { useCan } from '../me.tsx';

import { AppsCard, LogoField } from './customer-pages-fields.tsx';
import { Preview } from './customer-pages-preview.tsx';
import { type CustomerPages, changes, DEFAULT_COLOR, enabledApps, LANGS, toValues, type Values } from './customer-pages-values.ts';

/**
 * The operator's brand on the customer pages (issue 32 item 6): what the portal web app and the
 * /sub/{token} page show (GET /portal/v1/branding). A live preview beside the form renders the
 * unsaved values. Owners change it; everyone else reads it.
 */
export function CustomerPagesScreen() {
  const { t } = useTranslation();
  const can = useCan();
  const pages = useQuery({
    queryKey: ['settings', 'customer-pages'],
    queryFn: () => unwrap(api.GET('/api/v1/settings/customer-pages')),
  });
  return (
    <>
      <PageHeader title={t('customerPages.title')} subtitle={t('customerPages.subtitle')} />
      {!can.owner && (
        <Alert color="gray" mb="md" data-testid="read-only-note">
          {t('customerPages.ownersOnly')}
        </Alert>
      )}
      {pages.isError && <Alert color="red">{pages.error.message}</Alert>}
      {pages.data && <CustomerPagesForm settings={pages.data} readOnly={!can.owner} />}
    </>
  );
}

function CustomerPagesForm({ settings, readOnly }: { settings: CustomerPages; readOnly: boolean }) {
  const { t } = useTranslation();
  const queryClient = useQueryClient();
  const [saved, setSaved] = useState(() => toValues(settings));
  const form = useForm<Values>({ defaultValues: saved });
  const [platform, setPlatform] = useState<Platform>('android');
  const [lang, setLang] = useState<LocaleCode>('en');
  const { errors, isSubmitting } = form.formState;
  const values = form.watch();
  const changed = changes(saved, values);
  const fieldErrors = errors as FieldErrors<Values> & Record<string, { message?: string } | undefined>;

  const submit = form.handleSubmit(async (v) => {
    const body = changes(saved, v);
    if (Object.keys(body).length === 0) return;
    try {
      const next = await unwrap(api.PATCH('/api/v1/settings/customer-pages', { body }));
      queryClient.setQueryData(['settings', 'customer-pages'], next);
      const fresh = toValues(next);
      setSaved(fresh);
      form.reset(fresh);
      notify(t('common.saved'));
    } catch (err) {
      const fields = [
        'name',
        'logo',
        'primary_color',
        'support_url',
        'announcement',
        ...PLATFORMS.map((p) => `apps.${p}`),
        ...LANGS.flatMap((l) => [`texts.${l}.welcome`, `texts.${l}.announcement`]),
      ];
      const message = showProblem(err, form.setError, fields);
      const unplaced = Object.entries((err as { problem?: { errors?: Record<string, string> } }).problem?.errors ?? {}).filter(
        ([k]) => !fields.some((f) => k === f || k.startsWith(`${f}.`)),
      );
      const root = [message, ...unplaced.map(([k, r]) => `${k}: ${r}`)].filter(Boolean).join('; ');
      if (root) form.setError('root', { message: root });
    }
  });

  const enabled = enabledApps(platform, values.apps[platform]);

  return (
    <Grid gap="lg">
      <Grid.Col span={{ base: 12, md: 7 }}>
        <form onSubmit={submit} noValidate>
          <fieldset disabled={readOnly} style={{ border: 0, padding: 0, margin: 0, minWidth: 0 }}>
            <Stack gap="md">
              <Card withBorder>
                <Title order={3} size="h5" mb="sm">
                  {t('customerPages.brand')}
                </Title>
                <Stack gap="sm">
                  <TextInput
                    label={t('customerPages.name')}
                    description={t('customerPages.nameHint', { host: window.location.hostname })}
                    maxLength={60}
                    dir="auto"
                    error={errors.name?.message}
                    {...form.register('name')}
                  />
                  <LogoField form={form} readOnly={readOnly} />
                  <Controller
                    control={form.control}
                    name="primary_color"
                    render={({ field }) => (
                      <ColorInput
                        label={t('customerPages.color')}
                        description={t('customerPages.colorHint')}
                        placeholder={DEFAULT_COLOR}
                        format="hex"
                        withEyeDropper={false}
                        dir="ltr"
                        swatches={['#086f96', '#1d4ed8', '#6d28d9', '#be123c', '#b45309', '#047857', '#111827']}
                        value={field.value}
                        onChange={field.onChange}
                        disabled={readOnly}
                        error={errors.primary_color?.message}
                      />
                    )}
                  />
                  <TextInput
                    type="url"
                    dir="ltr"
                    label={t('customerPages.supportUrl')}
                    description={t('customerPages.supportUrlHint')}
                    placeholder="https://t.me/…"
                    error={errors.support_url?.message}
                    {...form.register('support_url')}
                  />
                  <Textarea
                    label={t('customerPages.announcement')}
                    description={t('customerPages.announcementHint')}
                    autosize
                    minRows={2}
                    maxLength={500}
                    dir="auto"
                    error={errors.announcement?.message}
                    {...form.register('announcement')}
                  />
                </Stack>
              </Card>

              <Card withBorder>
                <Title order={3} size="h5" mb={4}>
                  {t('customerPages.texts')}
                </Title>
                <Text size="xs" c="dimmed" mb="sm">
                  {t('customerPages.textsHint')}
                </Text>
                <Tabs value={lang} onChange={(v) => setLang((v ?? 'en') as LocaleCode)} keepMounted={false}>
                  <Tabs.List>
                    {LOCALES.map((l) => (
                      <Tabs.Tab key={l.code} value={l.code} lang={l.code}>
                        {l.name}
                      </Tabs.Tab>
                    ))}
                  </Tabs.List>
                  {LOCALES.map((l) => (
                    <Tabs.Panel key={l.code} value={l.code} pt="sm">
                      <Stack gap="sm">
                        <TextInput
                          label={t('customerPages.welcome')}
                          description={t('customerPages.welcomeHint')}
                          lang={l.code}
                          dir={l.dir}
                          maxLength={300}
                          error={fieldErrors[`texts.${l.code}.welcome`]?.message ?? errors.texts?.[l.code]?.welcome?.message}
                          {...form.register(`texts.${l.code}.welcome`)}
                        />
                        <Textarea
                          label={t('customerPages.localAnnouncement')}
                          description={t('customerPages.localAnnouncementHint')}
                          lang={l.code}
                          dir={l.dir}
                          autosize
                          minRows={2}
                          maxLength={500}
                          error={fieldErrors[`texts.${l.code}.announcement`]?.message ?? errors.texts?.[l.code]?.announcement?.message}
                          {...form.register(`texts.${l.code}.announcement`)}
                        />
                      </Stack>
                    </Tabs.Panel>
                  ))}
                </Tabs>
              </Card>

              <AppsCard form={form} platform={platform} setPlatform={setPlatform} readOnly={readOnly} />

              {errors.root?.message && (
                <Alert color="red" role="alert">
                  {errors.root.message}
                </Alert>
              )}
              {!readOnly && (
                <Group justify="flex-end">
                  <Button type="submit" loading={isSubmitting} disabled={Object.keys(changed).length === 0}>
                    {t('common.save')}
                  </Button>
                </Group>
              )}
            </Stack>
          </fieldset>
        </form>
      </Grid.Col>
      <Grid.Col span={{ base: 12, md: 5 }}>
        <Box pos="sticky" top={72}>
          <Preview values={values} platform={platform} lang={lang} apps={enabled} />
        </Box>
      </Grid.Col>
    </Grid>
  );
}
