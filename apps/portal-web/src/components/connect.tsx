import { Anchor, Button, CopyButton, Group, NativeSelect, Paper, Stack, Text } from '@mantine/core';
import { appsFor, type ClientApp, PLATFORMS, type Platform, platformFromUserAgent } from '@svc/client-apps';
import { useState } from 'react';
import { useTranslation } from 'react-i18next';
import { useBranding } from '../branding.ts';

/** Platform names are the vendors' own: the same in every language. */
export const PLATFORM_LABEL: Record<Platform, string> = {
  android: 'Android',
  ios: 'iOS',
  windows: 'Windows',
  macos: 'macOS',
  linux: 'Linux',
  android_tv: 'Android TV',
  apple_tv: 'Apple TV',
};

/** This device's platform from the browser's User-Agent (a phone opens the portal on itself first); Android when unknown. */
const devicePlatform = (): Platform => platformFromUserAgent(navigator.userAgent) ?? 'android';

/**
 * Connect buttons (issue 32 item 3): the apps of the chosen platform (this device's first) in
 * the operator's order (the brand's `apps`, @svc/client-apps), each with "Add to <app>" (the
 * app's own import link for this subscription, named `name`), where to get it and the steps.
 * An app without an import link (v2rayN) gets the copy button and its menu item instead.
 */
export function Connect({ url, name }: { url: string; name: string }) {
  const { t } = useTranslation();
  const order = useBranding()?.apps;
  const [platform, setPlatform] = useState(devicePlatform);
  const apps = appsFor(platform, order?.[platform]);
  return (
    <Stack gap="sm" data-testid="connect">
      <NativeSelect
        label={t('connect.device')}
        value={platform}
        onChange={(e) => setPlatform(e.currentTarget.value as Platform)}
        data={PLATFORMS.map((p) => ({ value: p, label: PLATFORM_LABEL[p] }))}
        data-testid="platform"
      />
      {apps.length === 0 ? (
        <Text size="sm">{t('connect.noApps')}</Text>
      ) : (
        apps.map((app, i) => <AppRow key={app.id} app={app} platform={platform} url={url} name={name} open={i === 0} />)
      )}
    </Stack>
  );
}

function AppRow({ app, platform, url, name, open }: { app: ClientApp; platform: Platform; url: string; name: string; open: boolean }) {
  const { t } = useTranslation();
  const href = app.importLink?.(url, name) ?? null;
  const download = app.downloads[platform];
  const appName = app.name;
  return (
    <Paper withBorder p="sm" radius="md" data-testid="client-app" data-app={app.id}>
      <Group justify="space-between" wrap="wrap" gap="xs">
        <Text fw={600} dir="ltr">
          {appName}
        </Text>
        {download && (
          <Anchor href={download} target="_blank" rel="noopener noreferrer" size="sm" data-testid="get-app">
            {t('connect.get', { app: appName })}
          </Anchor>
        )}
      </Group>
      {href ? (
        <Button component="a" href={href} fullWidth mt="xs" data-testid="add-to-app">
          {t('connect.add', { app: appName })}
        </Button>
      ) : (
        <CopyButton value={url}>
          {({ copied, copy }) => (
            <Button variant={copied ? 'default' : 'filled'} onClick={copy} fullWidth mt="xs" data-testid="copy-for-app">
              {copied ? t('home.copied') : t('home.copy')}
            </Button>
          )}
        </CopyButton>
      )}
      <details open={open} className="svc-guide">
        <summary>{t('connect.how')}</summary>
        <ol data-testid="guide">
          <li>{t('connect.stepInstall', { app: appName })}</li>
          {href ? (
            <>
              <li>{t('connect.stepAdd', { app: appName })}</li>
              <li>{t('connect.stepConfirm', { app: appName })}</li>
            </>
          ) : (
            <>
              <li>{t('connect.stepCopy')}</li>
              <li>{t('connect.stepClipboard', { app: appName })}</li>
            </>
          )}
        </ol>
      </details>
    </Paper>
  );
}
