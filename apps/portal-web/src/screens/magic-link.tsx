import { Alert, Anchor, Button, Text } from '@mantine/core';
import { Link, useNavigate } from '@tanstack/react-router';
import { useEffect, useState } from 'react';
import { useTranslation } from 'react-i18next';
import { api, problemOf, session, unwrap } from '../api.ts';
import { AuthCard } from '../components/auth-card.tsx';
import { awaitsApproval, describeProblem } from '../components/problems.ts';
import { WaitingForApproval } from '../components/waiting.tsx';

/** The token of a mailed link, from the fragment (#token=…), which the browser never sends to a server. */
function readToken(): string | null {
  const token = new URLSearchParams(window.location.hash.slice(1)).get('token');
  return token && token.length <= 128 ? token : null;
}

/**
 * Where a mailed sign-in (or confirmation) link lands. Opening it spends nothing: a mail scanner
 * that follows every link only loads this page. The token is posted to
 * POST /portal/v1/auth/callback?session=cookie when the person presses the button; it works once.
 */
export function MagicLinkScreen() {
  const { t } = useTranslation();
  const navigate = useNavigate();
  const [token] = useState(readToken);
  // Out of the address bar and the history at once: a shared screenshot or a back button leaks nothing.
  useEffect(() => {
    if (window.location.hash) history.replaceState(history.state, '', window.location.pathname + window.location.search);
  }, []);
  const [state, setState] = useState<'ready' | 'busy' | 'waiting' | { error: string; spent: boolean }>('ready');

  const signIn = async () => {
    if (!token) return;
    setState('busy');
    try {
      session.accept(await unwrap(api.POST('/portal/v1/auth/callback', { params: { query: { session: 'cookie' } }, body: { token } })));
      await navigate({ to: '/', replace: true });
    } catch (err) {
      if (awaitsApproval(err)) return setState('waiting');
      const p = problemOf(err);
      if (p?.status === 401) return setState({ error: t('magicLink.invalid'), spent: true });
      // A network failure leaves the token unspent: the button works again.
      setState({ error: describeProblem(t, err), spent: p !== null });
    }
  };

  if (state === 'waiting') return <WaitingForApproval emailConfirmed />;
  const failed = typeof state === 'object' ? state : null;
  return (
    <AuthCard title={t('magicLink.title')}>
      {!token ? (
        <Alert color="yellow" role="alert">
          {t('magicLink.noToken')}
        </Alert>
      ) : (
        <>
          <Text>{t('magicLink.intro')}</Text>
          {failed && (
            <Alert color="red" role="alert">
              {failed.error}
            </Alert>
          )}
          {!failed?.spent && (
            <Button onClick={signIn} loading={state === 'busy'} fullWidth size="md" data-testid="magic-link-sign-in">
              {t('magicLink.submit')}
            </Button>
          )}
        </>
      )}
      {(!token || failed?.spent) && (
        <Anchor renderRoot={(props) => <Link {...props} to="/" search={{ with: 'link' }} />} size="sm" ta="center">
          {t('magicLink.askAgain')}
        </Anchor>
      )}
    </AuthCard>
  );
}
