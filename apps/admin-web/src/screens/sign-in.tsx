import { Alert, Button, Divider, PasswordInput, Stack, TextInput } from '@mantine/core';
import type { AdminSchemas } from '@svc/api-client';
import { useState } from 'react';
import { useForm } from 'react-hook-form';
import { useTranslation } from 'react-i18next';
import { api, session, unwrap } from '../api.ts';
import { showProblem } from '../components/form-errors.ts';
import { API_BASE } from '../paths.ts';
import { AuthCard } from './auth-layout.tsx';

interface SignInForm {
  email: string;
  password: string;
}

/** The enabled methods of GET /api/v1/auth/methods: password, and a button per OAuth provider. */
export function SignInScreen({ methods }: { methods: AdminSchemas['AdminAuthMethods'] }) {
  const { t } = useTranslation();
  // A refused OAuth sign-in comes back to the panel with its reason in the fragment (never sent to a server).
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
  const form = useForm<SignInForm>({ defaultValues: { email: '', password: '' } });
  const { errors, isSubmitting } = form.formState;
  const submit = form.handleSubmit(async (values) => {
    try {
      session.accept(await unwrap(api.POST('/api/v1/auth/login', { params: { query: { session: 'cookie' } }, body: values })));
    } catch (err) {
      const message = showProblem(err, form.setError, ['email', 'password']);
      if (message) form.setError('root', { message });
    }
  });
  return (
    <AuthCard title={t('signIn.title')}>
      {oauthError && (
        <Alert color="red" role="alert" title={t('signIn.oauthRefused')}>
          {oauthError}
        </Alert>
      )}
      {methods.password && (
        <form onSubmit={submit} noValidate>
          <TextInput
            type="email"
            label={t('fields.email')}
            autoComplete="username"
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
          {errors.root && (
            <Alert mt="md" color="red" role="alert">
              {errors.root.message}
            </Alert>
          )}
          <Button mt="lg" type="submit" fullWidth loading={isSubmitting}>
            {t('signIn.submit')}
          </Button>
        </form>
      )}
      {methods.password && methods.oauth.length > 0 && <Divider label={t('signIn.or')} />}
      <Stack gap="xs">
        {methods.oauth.map((provider) => (
          <Button
            key={provider}
            variant="default"
            component="a"
            href={`${API_BASE}/auth/oauth/${encodeURIComponent(provider)}/redirect?session=cookie`}
          >
            {t('signIn.with', { provider })}
          </Button>
        ))}
      </Stack>
      {!methods.password && methods.oauth.length === 0 && <Alert color="yellow">{t('signIn.none')}</Alert>}
    </AuthCard>
  );
}
