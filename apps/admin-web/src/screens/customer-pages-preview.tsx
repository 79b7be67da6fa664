import { Alert, Box, Card, Group, Stack, Text, Title } from '@mantine/core';
import type { Platform } from '@svc/client-apps';
import { LOCALES, type LocaleCode } from '@svc/web-ui';
import { useTranslation } from 'react-i18next';
import { appName, DEFAULT_COLOR, type Values } from './customer-pages-values.ts';

/** Black or white, whichever reads better on `hex` (WCAG relative luminance). */
function textOn(hex: string): string {
  const [r, g, b] = [1, 3, 5].map((i) => {
    const c = Number.parseInt(hex.slice(i, i + 2), 16) / 255;
    return c <= 0.03928 ? c / 12.92 : ((c + 0.055) / 1.055) ** 2.4;
  }) as [number, number, number];
  const l = 0.2126 * r + 0.7152 * g + 0.0722 * b;
  return 1.05 / (l + 0.05) >= (l + 0.05) / 0.05 ? '#ffffff' : '#000000';
}

/** A small mock of the portal: header (logo and name on the primary colour), the announcement, the connect buttons in order. */
export function Preview({ values, platform, lang, apps }: { values: Values; platform: Platform; lang: LocaleCode; apps: string[] }) {
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
