import { Alert, Anchor, Button, PasswordInput, Text, TextInput } from '@mantine/core';
import { Link } from '@tanstack/react-router';
import { useState } from 'react';
import { useForm } from 'react-hook-form';
import { useTranslation } from 'react-i18next';
import { api, type PortalSchemas, problemOf, unwrap } from '../api.ts';
import { AuthCard } from '../components/auth-card.tsx';
import { useAuthMethods } from '../components/methods.ts';
import { newPasswordField } from '../components/new-password.ts';
import { describeProblem } from '../components/problems.ts';
import { WaitingForApproval } from '../components/waiting.tsx';
import { Busy, Failure } from '../frame.tsx';

/** Matches the domain's rule (NewPassword): the server checks it again and names the field if not. */

/**
 * Registration with email and password (POST /portal/v1/auth/register), offered when the mode
 * is not closed and password sign-in is on. A confirmation link is mailed; in mode application
 * an administrator approves afterwards, in mode open the link signs in.
 */
export function RegisterScreen() {
  const { t } = useTranslation();
  const newPassword = newPasswordField(t);
  const methods = useAuthMethods();
  const [done, setDone] = useState<PortalSchemas['Registration'] | null>(null);
  const form = useForm<{ email: string; password: string }>({ defaultValues: { email: '', password: '' } });
  const { errors, isSubmitting } = form.formState;
  const submit = form.handleSubmit(async (values) => {
    try {
      setDone(await unwrap(api.POST('/portal/v1/auth/register', { body: values })));
    } catch (err) {
      const p = problemOf(err);
      if (p?.status === 409) return form.setError('email', { message: t('register.taken') });
      const message = describeProblem(t, err, form.setError, ['email', 'password']);
      if (message) form.setError('root', { message });
    }
  });

  if (methods.isError) return <Failure message={t('common.unreachable')} retry={() => methods.refetch()} />;
  if (!methods.data) return <Busy />;
  if (done?.status === 'pending') return <WaitingForApproval emailConfirmed={false} />;
  if (done) {
    return (
      <AuthCard title={t('register.checkMailTitle')}>
        <Alert color="teal" role="status" data-testid="registered">
          {t('register.checkMail', { email: done.email })}
        </Alert>
        <Text size="sm">{t('register.sameBrowser')}</Text>
      </AuthCard>
    );
  }
  if (methods.data.registration === 'closed' || !methods.data.password) {
    return (
      <AuthCard title={t('register.title')}>
        <Alert color="yellow">{methods.data.registration === 'closed' ? t('register.closed') : t('register.providerOnly')}</Alert>
        <Anchor component={Link} to="/" size="sm" ta="center">
          {t('common.backToSignIn')}
        </Anchor>
      </AuthCard>
    );
  }
  return (
    <AuthCard title={t('register.title')}>
      {methods.data.registration === 'application' && <Text size="sm">{t('register.applicationNote')}</Text>}
      <form onSubmit={submit} noValidate>
        <TextInput
          type="email"
          dir="ltr"
          label={t('fields.email')}
          autoComplete="email"
          inputMode="email"
          required
          error={errors.email?.message}
          {...form.register('email', { required: t('common.required') })}
        />
        <PasswordInput
          mt="sm"
          label={t('fields.newPassword')}
          description={newPassword.description}
          autoComplete="new-password"
          required
          error={errors.password?.message}
          {...form.register('password', newPassword.rules)}
        />
        {errors.root && (
          <Alert mt="md" color="red" role="alert">
            {errors.root.message}
          </Alert>
        )}
        <Button mt="lg" type="submit" fullWidth loading={isSubmitting}>
          {t('register.submit')}
        </Button>
      </form>
      <Text size="sm" ta="center">
        {t('register.haveAccount')}{' '}
        <Anchor component={Link} to="/">
          {t('register.signIn')}
        </Anchor>
      </Text>
    </AuthCard>
  );
}
