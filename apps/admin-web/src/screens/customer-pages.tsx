import {
  ActionIcon,
  Alert,
  Badge,
  Box,
  Button,
  Card,
  Checkbox,
  ColorInput,
  FileButton,
  Grid,
  Group,
  Image,
  NativeSelect,
  Stack,
  Tabs,
  Text,
  Textarea,
  TextInput,
  Title,
} from '@mantine/core';
import type { AdminSchemas } from '@svc/api-client';
import { appsFor, CLIENT_APPS, DEFAULT_APP_ORDER, PLATFORMS, type Platform } from '@svc/client-apps';
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

type CustomerPages = AdminSchemas['CustomerPages'];
type Patch = AdminSchemas['CustomerPagesPatch'];

/** The largest logo the server keeps (decoded bytes), refused here before it is sent. */
const LOGO_MAX_BYTES = 64 * 1024;
const LOGO_TYPES = ['image/png', 'image/jpeg', 'image/webp'];
/** The customer pages' own primary colour when the operator chose none (packages/web-ui's brand, shade 8). */
const DEFAULT_COLOR = '#086f96';
const LANGS = LOCALES.map((l) => l.code);

interface Values {
  name: string;
  logo: string | null;
  primary_color: string;
  support_url: string;
  announcement: string;
  /** Per platform the apps offered in order, or null: the default order. */
  apps: Record<Platform, string[] | null>;
  texts: Record<LocaleCode, { welcome: string; announcement: string }>;
}

function toValues(s: CustomerPages): Values {
  return {
    name: s.name ?? '',
    logo: s.logo,
    primary_color: s.primary_color ?? '',
    support_url: s.support_url ?? '',
    announcement: s.announcement ?? '',
    apps: Object.fromEntries(PLATFORMS.map((p) => [p, s.apps[p] ?? null])) as Values['apps'],
    texts: Object.fromEntries(
      LANGS.map((l) => [l, { welcome: s.texts[l]?.welcome ?? '', announcement: s.texts[l]?.announcement ?? '' }]),
    ) as Values['texts'],
  };
}

const orNull = (v: string) => v.trim() || null;

/** The form as the API takes it: blank is null, a platform on the default order is left out, empty texts dropped. */
function toBody(v: Values): Required<Patch> {
  const apps: NonNullable<Patch['apps']> = {};
  for (const p of PLATFORMS) if (v.apps[p]) apps[p] = v.apps[p] as string[];
  const texts: NonNullable<Patch['texts']> = {};
  for (const l of LANGS) {
    const welcome = orNull(v.texts[l].welcome);
    const announcement = orNull(v.texts[l].announcement);
    if (welcome || announcement) texts[l] = { ...(welcome ? { welcome } : {}), ...(announcement ? { announcement } : {}) };
  }
  return {
    name: orNull(v.name),
    logo: v.logo,
    primary_color: orNull(v.primary_color),
    support_url: orNull(v.support_url),
    announcement: orNull(v.announcement),
    apps,
    texts,
  };
}

/** Only what changed since the last save (PATCH merges top-level fields). */
function changes(before: Values, after: Values): Patch {
  const a = toBody(before);
  const b = toBody(after);
  return Object.fromEntries(Object.entries(b).filter(([k, v]) => JSON.stringify(v) !== JSON.stringify(a[k as keyof Patch]))) as Patch;
}

/** Black or white, whichever reads better on `hex` (WCAG relative luminance). */
function textOn(hex: string): string {
  const [r, g, b] = [1, 3, 5].map((i) => {
    const c = Number.parseInt(hex.slice(i, i + 2), 16) / 255;
    return c <= 0.03928 ? c / 12.92 : ((c + 0.055) / 1.055) ** 2.4;
  }) as [number, number, number];
  const l = 0.2126 * r + 0.7152 * g + 0.0722 * b;
  return 1.05 / (l + 0.05) >= (l + 0.05) / 0.05 ? '#ffffff' : '#000000';
}

const appName = (id: string) => CLIENT_APPS.find((a) => a.id === id)?.name ?? id;

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
  const [logoError, setLogoError] = useState<string | null>(null);
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

  const readLogo = (file: File | null) => {
    setLogoError(null);
    if (!file) return;
    if (!LOGO_TYPES.includes(file.type)) {
      setLogoError(t('customerPages.wrongType'));
      return;
    }
    if (file.size > LOGO_MAX_BYTES) {
      setLogoError(t('customerPages.tooLarge', { size: Math.ceil(file.size / 1024) }));
      return;
    }
    const reader = new FileReader();
    reader.onload = () => form.setValue('logo', String(reader.result), { shouldDirty: true });
    reader.onerror = () => setLogoError(t('customerPages.unreadable'));
    reader.readAsDataURL(file);
  };

  const order = values.apps[platform];
  const setOrder = (next: string[] | null) => form.setValue(`apps.${platform}`, next, { shouldDirty: true });
  const enabled = appsFor(platform, order ?? DEFAULT_APP_ORDER[platform]).map((a) => a.id);
  const others = CLIENT_APPS.filter((a) => a.platforms.includes(platform) && !enabled.includes(a.id)).map((a) => a.id);
  const move = (i: number, by: -1 | 1) => {
    const next = [...enabled];
    [next[i], next[i + by]] = [next[i + by] as string, next[i] as string];
    setOrder(next);
  };
  const platformError = fieldErrors[`apps.${platform}`]?.message ?? (errors.apps?.[platform] as { message?: string } | undefined)?.message;

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
                  <Box>
                    <Text size="sm" fw={500} id="logo-label">
                      {t('customerPages.logo')}
                    </Text>
                    <Text size="xs" c="dimmed" mb={6}>
                      {t('customerPages.logoHint')}
                    </Text>
                    <Group gap="sm">
                      <Box
                        w={56}
                        h={56}
                        style={{
                          border: '1px solid var(--mantine-color-default-border)',
                          borderRadius: 8,
                          display: 'grid',
                          placeItems: 'center',
                        }}
                      >
                        {values.logo ? (
                          <Image
                            src={values.logo}
                            alt={t('customerPages.logoAlt')}
                            maw={52}
                            mah={52}
                            fit="contain"
                            data-testid="logo-thumb"
                          />
                        ) : (
                          <Text size="xs" c="dimmed">
                            {t('customerPages.noLogo')}
                          </Text>
                        )}
                      </Box>
                      {!readOnly && (
                        <>
                          <FileButton onChange={readLogo} accept={LOGO_TYPES.join(',')}>
                            {(props) => (
                              <Button variant="default" size="xs" aria-describedby="logo-label" {...props}>
                                {values.logo ? t('customerPages.replace') : t('customerPages.upload')}
                              </Button>
                            )}
                          </FileButton>
                          {values.logo && (
                            <Button
                              variant="subtle"
                              color="red"
                              size="xs"
                              onClick={() => {
                                setLogoError(null);
                                form.setValue('logo', null, { shouldDirty: true });
                              }}
                            >
                              {t('customerPages.removeLogo')}
                            </Button>
                          )}
                        </>
                      )}
                    </Group>
                    {(logoError ?? errors.logo?.message) && (
                      <Text size="sm" c="red" role="alert" mt={6} data-testid="logo-error">
                        {logoError ?? errors.logo?.message}
                      </Text>
                    )}
                  </Box>
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

              <Card withBorder>
                <Title order={3} size="h5" mb={4}>
                  {t('customerPages.apps')}
                </Title>
                <Text size="xs" c="dimmed" mb="sm">
                  {t('customerPages.appsHint')}
                </Text>
                <Group align="flex-end" mb="sm" wrap="wrap">
                  <NativeSelect
                    label={t('customerPages.platform')}
                    value={platform}
                    onChange={(e) => setPlatform(e.currentTarget.value as Platform)}
                    data={PLATFORMS.map((p) => ({ value: p, label: t(`customerPages.platforms.${p}`) }))}
                    disabled={false}
                    style={{ flex: '1 1 160px' }}
                  />
                  <Badge variant="light" color={order ? 'brand' : 'gray'} mb={8}>
                    {order ? t('customerPages.custom') : t('customerPages.default')}
                  </Badge>
                  {!readOnly && (
                    <Button variant="default" size="xs" mb={4} disabled={!order} onClick={() => setOrder(null)}>
                      {t('customerPages.resetApps')}
                    </Button>
                  )}
                </Group>
                <Stack gap={4} component="ul" style={{ listStyle: 'none', padding: 0, margin: 0 }} data-testid="app-order">
                  {enabled.map((id, i) => (
                    <Group key={id} component="li" gap="xs" wrap="nowrap" justify="space-between" data-testid="app-row">
                      <Checkbox label={`${i + 1}. ${appName(id)}`} checked onChange={() => setOrder(enabled.filter((x) => x !== id))} />
                      {!readOnly && (
                        <Group gap={4} wrap="nowrap">
                          <ActionIcon
                            variant="default"
                            aria-label={t('customerPages.moveUp', { app: appName(id) })}
                            disabled={i === 0}
                            onClick={() => move(i, -1)}
                          >
                            ↑
                          </ActionIcon>
                          <ActionIcon
                            variant="default"
                            aria-label={t('customerPages.moveDown', { app: appName(id) })}
                            disabled={i === enabled.length - 1}
                            onClick={() => move(i, 1)}
                          >
                            ↓
                          </ActionIcon>
                        </Group>
                      )}
                    </Group>
                  ))}
                  {others.map((id) => (
                    <Box key={id} component="li" py={4}>
                      <Checkbox label={appName(id)} checked={false} onChange={() => setOrder([...enabled, id])} />
                    </Box>
                  ))}
                </Stack>
                {enabled.length === 0 && (
                  <Text size="sm" c="dimmed" mt="xs">
                    {t('customerPages.noApps')}
                  </Text>
                )}
                {platformError && (
                  <Text size="sm" c="red" role="alert" mt="xs">
                    {platformError}
                  </Text>
                )}
              </Card>

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

/** A small mock of the portal: header (logo and name on the primary colour), the announcement, the connect buttons in order. */
function Preview({ values, platform, lang, apps }: { values: Values; platform: Platform; lang: LocaleCode; apps: string[] }) {
  const { t } = useTranslation();
  const color = /^#[0-9a-fA-F]{6}$/.test(values.primary_color) ? values.primary_color : DEFAULT_COLOR;
  const ink = textOn(color);
  const name = values.name.trim() || window.location.hostname;
  const welcome = values.texts[lang].welcome.trim();
  const local = values.texts[lang].announcement.trim();
  const announcement = local || values.announcement.trim();
  const dir = LOCALES.find((l) => l.code === lang)?.dir ?? 'ltr';
  return (
    <Card withBorder padding={0} data-testid="preview" aria-labelledby="preview-title">
      <Box px="md" pt="sm" pb="xs">
        <Title order={3} size="h5" id="preview-title">
          {t('customerPages.preview')}
        </Title>
        <Text size="xs" c="dimmed">
          {t('customerPages.previewHint', {
            platform: t(`customerPages.platforms.${platform}`),
            language: LOCALES.find((l) => l.code === lang)?.name,
          })}
        </Text>
      </Box>
      <Box mx="md" mb="md" style={{ border: '1px solid var(--mantine-color-default-border)', borderRadius: 12, overflow: 'hidden' }}>
        <Group gap="sm" px="md" py="sm" style={{ background: color, color: ink }} data-testid="preview-header" wrap="nowrap">
          {values.logo && (
            <img
              src={values.logo}
              alt=""
              width={32}
              height={32}
              style={{ objectFit: 'contain', borderRadius: 6, background: '#fff' }}
              data-testid="preview-logo"
            />
          )}
          <Text fw={700} size="lg" c="inherit" data-testid="preview-name" dir="auto" truncate>
            {name}
          </Text>
        </Group>
        <Stack gap="sm" p="md" bg="var(--mantine-color-body)">
          {announcement && (
            <Alert color="yellow" variant="light" p="xs" data-testid="preview-announcement" {...(local ? { lang, dir } : { dir: 'auto' })}>
              <Text size="sm" c="var(--mantine-color-text)">
                {announcement}
              </Text>
            </Alert>
          )}
          {welcome && (
            <Text size="sm" data-testid="preview-welcome" lang={lang} dir={dir}>
              {welcome}
            </Text>
          )}
          <Stack gap={6} data-testid="preview-apps">
            {apps.map((id, i) => (
              <Box
                key={id}
                px="sm"
                py={8}
                style={{
                  borderRadius: 8,
                  fontSize: 14,
                  fontWeight: 600,
                  ...(i === 0 ? { background: color, color: ink } : { border: `1px solid ${color}`, color: 'var(--mantine-color-text)' }),
                }}
                data-testid="preview-app"
              >
                {appName(id)}
              </Box>
            ))}
            {apps.length === 0 && (
              <Text size="sm" c="dimmed">
                {t('customerPages.noApps')}
              </Text>
            )}
          </Stack>
          {values.support_url.trim() && (
            <Text size="sm" td="underline" c="var(--mantine-color-text)" data-testid="preview-support">
              {t('customerPages.support')}
            </Text>
          )}
        </Stack>
      </Box>
    </Card>
  );
}
