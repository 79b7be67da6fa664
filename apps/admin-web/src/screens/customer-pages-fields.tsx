import { ActionIcon, Badge, Box, Button, Card, Checkbox, FileButton, Group, Image, NativeSelect, Stack, Text, Title } from '@mantine/core';
import { CLIENT_APPS, PLATFORMS, type Platform } from '@svc/client-apps';
import { useState } from 'react';
import type { FieldErrors, UseFormReturn } from 'react-hook-form';
import { useTranslation } from 'react-i18next';
import { appName, enabledApps, LOGO_MAX_BYTES, LOGO_TYPES, type Values } from './customer-pages-values.ts';

/** The logo: a thumbnail, upload (PNG, JPEG or WebP up to 64 KiB, checked before it is sent), replace, remove. */
export function LogoField({ form, readOnly }: { form: UseFormReturn<Values>; readOnly: boolean }) {
  const { t } = useTranslation();
  const [logoError, setLogoError] = useState<string | null>(null);
  const logo = form.watch('logo');
  const { errors } = form.formState;
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

  return (
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
          {logo ? (
            <Image src={logo} alt={t('customerPages.logoAlt')} maw={52} mah={52} fit="contain" data-testid="logo-thumb" />
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
                  {logo ? t('customerPages.replace') : t('customerPages.upload')}
                </Button>
              )}
            </FileButton>
            {logo && (
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
  );
}

/** Which apps the portal offers on each platform, in which order (the operator's order or the default). */
export function AppsCard({
  form,
  platform,
  setPlatform,
  readOnly,
}: {
  form: UseFormReturn<Values>;
  platform: Platform;
  setPlatform: (p: Platform) => void;
  readOnly: boolean;
}) {
  const { t } = useTranslation();
  const { errors } = form.formState;
  const fieldErrors = errors as FieldErrors<Values> & Record<string, { message?: string } | undefined>;
  const order = form.watch(`apps.${platform}`);
  const setOrder = (next: string[] | null) => form.setValue(`apps.${platform}`, next, { shouldDirty: true });
  const enabled = enabledApps(platform, order);
  const others = CLIENT_APPS.filter((a) => a.platforms.includes(platform) && !enabled.includes(a.id)).map((a) => a.id);
  const move = (i: number, by: -1 | 1) => {
    const next = [...enabled];
    [next[i], next[i + by]] = [next[i + by] as string, next[i] as string];
    setOrder(next);
  };
  const platformError = fieldErrors[`apps.${platform}`]?.message ?? (errors.apps?.[platform] as { message?: string } | undefined)?.message;

  return (
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
  );
}
