import { Anchor, Box, Button, Center, Container, Group, Loader, Stack, Text } from '@mantine/core';
import { useQueryClient } from '@tanstack/react-query';
import { Link, Outlet, useNavigate } from '@tanstack/react-router';
import { Suspense, useState } from 'react';
import { useTranslation } from 'react-i18next';
import { api, session } from './api.ts';
import { useBranding, useBrandText } from './branding.ts';
import { LanguagePicker } from './components/language-picker.tsx';
import { useSessionState } from './session-state.ts';

/** The width of the one content column: a phone's screen, centred on a wide one. */
export const COLUMN = '40rem';

/**
 * Every screen: a header (the brand, the language, sign-out when signed in) above one column.
 * Designed for a 390 px phone first; wider screens only get margins.
 */
export function Frame() {
  const { t } = useTranslation();
  const state = useSessionState();
  return (
    <>
      <a href="#main" className="svc-skip-link">
        {t('frame.skip')}
      </a>
      <Box component="header" className="svc-header">
        <Container size={COLUMN} px="md" py="xs">
          <Group justify="space-between" wrap="nowrap" gap="xs">
            <Brand />
            <Group gap="xs" wrap="nowrap">
              <LanguagePicker />
              {state === 'signed-in' && <SignOutButton />}
            </Group>
          </Group>
        </Container>
      </Box>
      {state === 'signed-in' && <Nav />}
      <Announcement />
      <Container component="main" id="main" size={COLUMN} px="md" py="lg">
        <Suspense fallback={<Busy />}>
          <Outlet />
        </Suspense>
      </Container>
      <Footer />
    </>
  );
}

/**
 * Where a signed-in customer goes: subscriptions, plans, payments, settings. A row of links
 * under the header (it scrolls sideways when the words do not fit a phone); the current one
 * is marked (aria-current, by the router).
 */
function Nav() {
  const { t } = useTranslation();
  const links = [
    { to: '/', label: t('nav.home'), exact: true },
    { to: '/plans', label: t('nav.plans'), exact: false },
    { to: '/payments', label: t('nav.payments'), exact: false },
    { to: '/settings', label: t('nav.settings'), exact: false },
  ] as const;
  return (
    <Box component="nav" aria-label={t('nav.label')} className="svc-nav">
      <Container size={COLUMN} px="md">
        <div className="svc-nav-row">
          {links.map((l) => (
            <Link
              key={l.to}
              to={l.to}
              className="svc-nav-link"
              activeOptions={{ exact: l.exact, includeSearch: false }}
              data-testid={`nav-${l.to.slice(1) || 'home'}`}
            >
              {l.label}
            </Link>
          ))}
        </div>
      </Container>
    </Box>
  );
}

/** The operator's logo and name (the brand), a link to the start page. */
function Brand() {
  const { t } = useTranslation();
  const b = useBranding();
  return (
    <Anchor component={Link} to="/" fw={700} fz="lg" c="var(--mantine-color-text)" underline="never" miw={0} data-testid="brand">
      <Group gap={8} wrap="nowrap">
        {b?.logo && <img src={b.logo} alt="" className="svc-logo" data-testid="brand-logo" />}
        <Text span inherit truncate="end">
          {b?.name ?? t('app.brand')}
        </Text>
      </Group>
    </Anchor>
  );
}

/** The operator's notice (in the reader's language when given), above every screen. */
function Announcement() {
  const { t } = useTranslation();
  const text = useBrandText('announcement');
  if (!text) return null;
  return (
    <Box component="aside" aria-label={t('frame.announcement')} className="svc-announcement" data-testid="announcement">
      <Container size={COLUMN} px="md" py={8}>
        <Text size="sm" dir="auto" style={{ whiteSpace: 'pre-line' }}>
          {text}
        </Text>
      </Container>
    </Box>
  );
}

/** Where customers get help, when the operator names a place. */
function Footer() {
  const { t } = useTranslation();
  const url = useBranding()?.support_url;
  if (!url) return null;
  return (
    <Container component="footer" size={COLUMN} px="md" pb="xl">
      <Text size="sm" ta="center">
        <Anchor href={url} target="_blank" rel="noopener noreferrer" data-testid="support-link">
          {t('frame.support')}
        </Anchor>
      </Text>
    </Container>
  );
}

/** Ends this session on the server (its refresh cookie is cleared there) and forgets it here. */
function SignOutButton() {
  const { t } = useTranslation();
  const queryClient = useQueryClient();
  const navigate = useNavigate();
  const [busy, setBusy] = useState(false);
  const signOut = async () => {
    setBusy(true);
    await api.POST('/portal/v1/auth/logout').catch(() => undefined);
    session.clear();
    queryClient.clear();
    setBusy(false);
    await navigate({ to: '/' });
  };
  return (
    <Button variant="default" size="xs" onClick={signOut} loading={busy} data-testid="sign-out">
      {t('frame.signOut')}
    </Button>
  );
}

export function Busy() {
  const { t } = useTranslation();
  return (
    <Center py="xl">
      <Loader aria-label={t('frame.loading')} />
    </Center>
  );
}

export function Failure({ message, retry }: { message: string; retry: () => void }) {
  const { t } = useTranslation();
  return (
    <Stack align="center" py="xl">
      <Text role="alert" ta="center">
        {message}
      </Text>
      <Button onClick={retry}>{t('common.retry')}</Button>
    </Stack>
  );
}
