import { ActionIcon, AppShell, Burger, Group, Menu, ScrollArea, SegmentedControl, Text, Title, useMantineColorScheme } from '@mantine/core';
import { useDisclosure } from '@mantine/hooks';
import type { ReactNode } from 'react';
import { useTranslation } from 'react-i18next';
import { LOCALES, type LocaleCode } from './locales.ts';

/**
 * The frame of every signed-in screen: a header (menu button below 'sm', title, the controls
 * given) and a navigation column that folds away on narrow screens (a 390 px phone).
 */
export function Shell({
  title,
  nav,
  controls,
  children,
  labels,
}: {
  title: ReactNode;
  nav: (close: () => void) => ReactNode;
  controls: ReactNode;
  children: ReactNode;
  labels: { menu: string; skip: string };
}) {
  const [opened, { toggle, close }] = useDisclosure();
  return (
    <AppShell header={{ height: 56 }} navbar={{ width: 232, breakpoint: 'sm', collapsed: { mobile: !opened } }} padding="md">
      <a href="#main" className="svc-skip-link">
        {labels.skip}
      </a>
      <AppShell.Header>
        <Group h="100%" px="md" justify="space-between" wrap="nowrap">
          <Group gap="sm" wrap="nowrap">
            <Burger opened={opened} onClick={toggle} hiddenFrom="sm" size="sm" aria-label={labels.menu} />
            <Title order={1} size="h4" style={{ whiteSpace: 'nowrap' }}>
              {title}
            </Title>
          </Group>
          <Group gap="xs" wrap="nowrap">
            {controls}
          </Group>
        </Group>
      </AppShell.Header>
      <AppShell.Navbar p="xs" component="nav" aria-label={labels.menu}>
        <AppShell.Section grow component={ScrollArea}>
          {nav(close)}
        </AppShell.Section>
      </AppShell.Navbar>
      <AppShell.Main id="main">{children}</AppShell.Main>
    </AppShell>
  );
}

/** Light, dark, or the system's (auto). */
export function ColorSchemeControl({ labels }: { labels: { light: string; dark: string; auto: string; legend: string } }) {
  const { colorScheme, setColorScheme } = useMantineColorScheme();
  return (
    <SegmentedControl
      size="xs"
      value={colorScheme}
      onChange={(v) => setColorScheme(v as 'light' | 'dark' | 'auto')}
      aria-label={labels.legend}
      data={[
        { value: 'light', label: labels.light },
        { value: 'dark', label: labels.dark },
        { value: 'auto', label: labels.auto },
      ]}
    />
  );
}

export function LanguageMenu({ onChange, label }: { onChange: (code: LocaleCode) => void; label: string }) {
  const { i18n } = useTranslation();
  const current = LOCALES.find((l) => l.code === i18n.language) ?? LOCALES[0];
  return (
    <Menu position="bottom-end" withinPortal>
      <Menu.Target>
        <ActionIcon variant="default" size="lg" aria-label={`${current.code.toUpperCase()} · ${label}: ${current.name}`}>
          <Text size="xs" fw={700}>
            {current.code.toUpperCase()}
          </Text>
        </ActionIcon>
      </Menu.Target>
      <Menu.Dropdown>
        {LOCALES.map((l) => (
          <Menu.Item
            key={l.code}
            onClick={() => onChange(l.code)}
            lang={l.code}
            dir={l.dir}
            aria-current={l.code === current.code ? 'true' : undefined}
          >
            {l.name}
          </Menu.Item>
        ))}
      </Menu.Dropdown>
    </Menu>
  );
}
