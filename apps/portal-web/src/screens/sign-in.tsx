import { Alert, Anchor, Button, Divider, Group, PasswordInput, SegmentedControl, Stack, Text, TextInput } from '@mantine/core';
import { Link } from '@tanstack/react-router';
import { useState } from 'react';
import { useForm } from 'react-hook-form';
import { useTranslation } from 'react-i18next';
import { api, session, unwrap } from '../api.ts';
import { useBrandText } from '../branding.ts';
import { AuthCard } from '../components/auth-card.tsx';
import { MagicLinkRequest } from '../components/magic-link-request.tsx';
import { useAuthMethods } from '../components/methods.ts';
import { awaitsApproval, describeProblem } from '../components/problems.ts';
import { WaitingForApproval } from '../components/waiting.tsx';
import { Busy, Failure } from '../frame.tsx';
import { PORTAL_API } from '../paths.ts';

export interface SignInSearch {
  /** The form shown when both are offered: password (default) or a mailed link. */
  with?: 'password' | 'link';
}

/**
 * Sign-in as the installation allows (GET /portal/v1/auth/methods): a mailed link (always), a
 * password, a button per OAuth provider; a way to register when registration is not closed.
 */
export function SignInScreen({ search, setSearch }: { search: SignInSearch; setSearch: (s: SignInSearch) => void }) {
  const { t } = useTranslation();
  const methods = useAuthMethods();
  // A refused OAuth sign-in comes back here with its reason in the fragment (never sent to a server).
  const [oauthError] = useState(() => {
    const hash = window.location.hash;
    if (!hash.startsWith('#oauth_error=')) return null;
    history.replaceState(null, '', window.location.pathname + window.location.search);
    try {
      return decodeURIComponent(hash.slice('#oauth_error='.length)).slice(0, 300);
    } catch {
      return null;
    }
  });
  const [waiting, setWaiting] = useState(false);
  const welcome = useBrandText('welcome');
  if (methods.isError) return <Failure message={t('common.unreachable')} retry={() => methods.refetch()} />;
  if (!methods.data) return <Busy />;
  if (waiting) return <WaitingForApproval emailConfirmed />;
  const m = methods.data;
  const mode = m.password ? (search.with ?? 'password') : 'link';
  return (
    <AuthCard title={t('signIn.title')}>
      {welcome && (
        <Text data-testid="welcome" dir="auto" style={{ whiteSpace: 'pre-line' }}>
          {welcome}
        </Text>
      )}
      {oauthError && (
        <Alert color="red" role="alert" title={t('signIn.oauthRefused')}>
          {oauthError}
        </Alert>
      )}
      {m.password && (
        <SegmentedControl
          fullWidth
          value={mode}
          onChange={(v) => setSearch({ with: v === 'link' ? 'link' : undefined })}
          aria-label={t('signIn.how')}
          data={[
            { value: 'password', label: t('signIn.withPassword') },
            { value: 'link', label: t('signIn.withLink') },
          ]}
        />
      )}
      {mode === 'password' ? (
        <PasswordForm onWaiting={() => setWaiting(true)} />
      ) : (
        <Stack gap="xs">
          <Text size="sm">{t('signIn.linkIntro')}</Text>
          <MagicLinkRequest submitLabel={t('signIn.sendLink')} />
        </Stack>
      )}
      {m.oauth.length > 0 && <Divider label={t('signIn.or')} />}
      {m.oauth.length > 0 && (
        <Stack gap="xs">
          {m.oauth.map((provider) => (
            <Button
              key={provider}
              variant="default"
              component="a"
              href={`${PORTAL_API}/auth/oauth/${encodeURIComponent(provider)}/redirect?session=cookie`}
            >
              {t('signIn.with', { provider })}
            </Button>
          ))}
        </Stack>
      )}
      {m.registration !== 'closed' && (
        <Text size="sm" ta="center">
          {m.password ? (
            <>
              {t('signIn.noAccount')}{' '}
              <Anchor component={Link} to="/register">
                {t('signIn.register')}
              </Anchor>
            </>
          ) : (
            m.oauth.length > 0 && t('signIn.registerWithProvider')
          )}
        </Text>
      )}
    </AuthCard>
  );
}

function PasswordForm({ onWaiting }: { onWaiting: () => void }) {
  const { t } = useTranslation();
  const form = useForm<{ email: string; password: string }>({ defaultValues: { email: '', password: '' } });
  const { errors, isSubmitting } = form.formState;
  const submit = form.handleSubmit(async (values) => {
    try {
      session.accept(await unwrap(api.POST('/portal/v1/auth/login', { params: { query: { session: 'cookie' } }, body: values })));
    } catch (err) {
      if (awaitsApproval(err)) return onWaiting();
      const status = (err as { problem?: { status: number } }).problem?.status;
      const message = status === 401 ? t('signIn.wrong') : describeProblem(t, err, form.setError, ['email', 'password']);
      if (message) form.setError('root', { message });
    }
  });
  return (
    <form onSubmit={submit} noValidate>
      <TextInput
        type="email"
        dir="ltr"
        label={t('fields.email')}
        autoComplete="username"
        inputMode="email"
        required
        error={errors.email?.message}
        {...form.register('email', { required: t('common.required') })}
      />
      <PasswordInput
        mt="sm"
        label={t('fields.password')}
        autoComplete="current-password"
        required
        error={errors.password?.message}
        {...form.register('password', { required: t('common.required') })}
      />
      <Group justify="flex-end" mt={6}>
        <Anchor component={Link} to="/forgot-password" size="sm">
          {t('signIn.forgot')}
        </Anchor>
      </Group>
      {errors.root && (
        <Alert mt="md" color="red" role="alert">
          {errors.root.message}
        </Alert>
      )}
      <Button mt="lg" type="submit" fullWidth loading={isSubmitting}>
        {t('signIn.submit')}
      </Button>
    </form>
  );
}
