import { Box, Button, Center, Kbd, Loader, Menu, NavLink, Stack, Text, useDirection, useMantineColorScheme } from '@mantine/core';
import { useHotkeys } from '@mantine/hooks';
import { ColorSchemeControl, directionOf, LanguageMenu, Shell } from '@svc/web-ui';
import { useQuery, useQueryClient } from '@tanstack/react-query';
import { Link, Outlet, useRouterState } from '@tanstack/react-router';
import { lazy, Suspense, useEffect, useState } from 'react';
import { useTranslation } from 'react-i18next';
import { api, session, unwrap } from './api.ts';
import { notify } from './components/notify.ts';
import { startLiveEvents } from './events.ts';
import { switchLocale } from './i18n.ts';
import { type Me, MeContext } from './me.tsx';

// Signed-out screens are their own chunks: a reload with a session never loads them.
const SetupScreen = lazy(() => import('./screens/setup.tsx').then((m) => ({ default: m.SetupScreen })));
const SignInScreen = lazy(() => import('./screens/sign-in.tsx').then((m) => ({ default: m.SignInScreen })));
// The Ctrl+K palette: its chunk (Spotlight) loads on first use.
const Palette = lazy(() => import('./components/palette.tsx').then((m) => ({ default: m.Palette })));

/** Sections of the panel, in the order of the navigation column. */
const SECTIONS = [
  { to: '/', key: 'nav.dashboard' },
  { to: '/nodes', key: 'nav.nodes' },
  { to: '/profiles', key: 'nav.profiles' },
  { to: '/inbounds', key: 'nav.inbounds' },
  { to: '/groups', key: 'nav.groups' },
  { to: '/chains', key: 'nav.chains' },
  { to: '/certificates', key: 'nav.certificates' },
  { to: '/dns-providers', key: 'nav.dns' },
  { to: '/acme-accounts', key: 'nav.acme' },
  { to: '/clients', key: 'nav.clients' },
  { to: '/subscriptions', key: 'nav.subscriptions' },
  { to: '/plans', key: 'nav.plans' },
  { to: '/payments', key: 'nav.payments' },
  { to: '/payment-providers', key: 'nav.providers' },
  { to: '/webhooks', key: 'nav.webhooks' },
  { to: '/admins', key: 'nav.admins' },
  { to: '/api-tokens', key: 'nav.apiTokens' },
  { to: '/audit-log', key: 'nav.audit' },
  { to: '/settings', key: 'nav.settings' },
  { to: '/customer-pages', key: 'nav.customerPages' },
] as const;

/**
 * What a visitor sees first: the setup screen on a fresh installation, the sign-in screen without
 * a session (a reload signs in silently through the refresh cookie), else the panel.
 */
export function Frame() {
  const { t } = useTranslation();
  const [resumed, setResumed] = useState<boolean | null>(null);
  const [signedIn, setSignedIn] = useState(session.signedIn);
  const methods = useQuery({ queryKey: ['auth-methods'], queryFn: () => unwrap(api.GET('/api/v1/auth/methods')), staleTime: 0 });
  useEffect(() => session.onChange(setSignedIn), []);
  useEffect(() => {
    if (methods.data && !methods.data.setup_required && resumed === null) session.resume().then(setResumed);
  }, [methods.data, resumed]);
  const me = useQuery({ queryKey: ['me'], queryFn: () => unwrap(api.GET('/api/v1/auth/me')), enabled: signedIn });

  if (methods.isError) return <Failure message={t('frame.unreachable')} retry={() => methods.refetch()} />;
  if (!methods.data) return <Busy />;
  if (methods.data.setup_required && !signedIn) {
    return (
      <Suspense fallback={<Busy />}>
        <SetupScreen onDone={() => methods.refetch()} />
      </Suspense>
    );
  }
  if (!signedIn) {
    if (resumed === null) return <Busy />;
    return (
      <Suspense fallback={<Busy />}>
        <SignInScreen methods={methods.data} />
      </Suspense>
    );
  }
  if (me.isError) return <Failure message={t('frame.unreachable')} retry={() => me.refetch()} />;
  if (!me.data) return <Busy />;
  return (
    <MeContext.Provider value={me.data}>
      <SignedIn me={me.data} />
    </MeContext.Provider>
  );
}

function SignedIn({ me }: { me: Me }) {
  const { t } = useTranslation();
  const path = useRouterState({ select: (s) => s.location.pathname });
  const { setDirection } = useDirection();
  const { colorScheme, setColorScheme } = useMantineColorScheme();
  useEffect(() => startLiveEvents(), []);
  const queryClient = useQueryClient();
  // Mounted on first use and kept: later opens are instant.
  const [palette, setPalette] = useState<'never' | 'open' | 'closed'>('never');
  const openPalette = () => setPalette('open');
  useHotkeys([['mod+K', openPalette]], []);
  const signOut = async () => {
    await api.POST('/api/v1/auth/logout').catch(() => undefined);
    session.clear();
    queryClient.clear();
  };
  return (
    <Shell
      title={t('app.title')}
      labels={{ menu: t('frame.menu'), skip: t('frame.skip') }}
      nav={(close) =>
        SECTIONS.map((s) => {
          const active = s.to === '/' ? path === '/' : path === s.to || path.startsWith(`${s.to}/`);
          return (
            <NavLink
              key={s.to}
              component={Link}
              to={s.to}
              label={t(s.key)}
              active={active}
              variant="filled"
              aria-current={active ? 'page' : undefined}
              onClick={close}
            />
          );
        })
      }
      controls={
        <>
          <Button variant="default" size="xs" onClick={openPalette} aria-keyshortcuts="Control+K Meta+K" data-testid="open-palette">
            {t('palette.open')}
            <Kbd size="xs" ms={8} visibleFrom="sm">
              Ctrl K
            </Kbd>
          </Button>
          <Box visibleFrom="sm">
            <ColorSchemeControl
              labels={{ legend: t('frame.theme'), light: t('frame.themeLight'), dark: t('frame.themeDark'), auto: t('frame.themeAuto') }}
            />
          </Box>
          <LanguageMenu label={t('frame.language')} onChange={(code) => switchLocale(code).then(() => setDirection(directionOf(code)))} />
          <Menu position="bottom-end">
            <Menu.Target>
              <Button variant="default" size="xs" aria-label={`${t(`roles.${me.role}`)} · ${t('frame.account', { email: me.email })}`}>
                {t(`roles.${me.role}`)}
              </Button>
            </Menu.Target>
            <Menu.Dropdown>
              <Menu.Label>{me.email}</Menu.Label>
              {/* On a narrow screen the colour scheme is chosen here (the header has no room for it). */}
              <Box hiddenFrom="sm">
                <Menu.Label>{t('frame.theme')}</Menu.Label>
                {(['light', 'dark', 'auto'] as const).map((scheme) => (
                  <Menu.Item key={scheme} onClick={() => setColorScheme(scheme)} aria-current={colorScheme === scheme ? 'true' : undefined}>
                    {t(`frame.theme${scheme[0]?.toUpperCase()}${scheme.slice(1)}`)}
                  </Menu.Item>
                ))}
                <Menu.Divider />
              </Box>
              <Menu.Item onClick={() => signOut().then(() => notify(t('frame.signedOut')))}>{t('frame.signOut')}</Menu.Item>
            </Menu.Dropdown>
          </Menu>
        </>
      }
    >
      <Suspense fallback={<Loader m="xl" aria-label={t('frame.loading')} />}>
        <Outlet />
      </Suspense>
      {palette !== 'never' && (
        <Suspense fallback={null}>
          <Palette
            opened={palette === 'open'}
            onClose={() => setPalette('closed')}
            sections={SECTIONS.map((s) => ({ to: s.to, label: t(s.key) }))}
          />
        </Suspense>
      )}
    </Shell>
  );
}

export function Busy() {
  const { t } = useTranslation();
  return (
    <Center h="100dvh">
      <Loader aria-label={t('frame.loading')} />
    </Center>
  );
}

function Failure({ message, retry }: { message: string; retry: () => void }) {
  const { t } = useTranslation();
  return (
    <Center h="100dvh">
      <Stack align="center">
        <Text role="alert">{message}</Text>
        <Button onClick={retry}>{t('common.retry')}</Button>
      </Stack>
    </Center>
  );
}
