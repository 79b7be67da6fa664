import { Alert, Button, PasswordInput, Text, TextInput } from '@mantine/core';
import { useForm } from 'react-hook-form';
import { useTranslation } from 'react-i18next';
import { api, session, unwrap } from '../api.ts';
import { showProblem } from '../components/form-errors.ts';
import { AuthCard } from './auth-layout.tsx';

interface SetupForm {
  token: string;
  email: string;
  password: string;
}

/**
 * A fresh installation (spec 3.4): the setup token from the process log, the owner's email and
 * password; then the owner is signed in (refresh token in its cookie).
 */
export function SetupScreen({ onDone }: { onDone: () => void }) {
  const { t } = useTranslation();
  const form = useForm<SetupForm>({ defaultValues: { token: '', email: '', password: '' } });
  const { errors, isSubmitting } = form.formState;
  const submit = form.handleSubmit(async (values) => {
    try {
      await unwrap(api.POST('/api/v1/setup', { body: values }));
      const tokens = await unwrap(
        api.POST('/api/v1/auth/login', {
          params: { query: { session: 'cookie' } },
          body: { email: values.email, password: values.password },
        }),
      );
      session.accept(tokens);
      onDone();
    } catch (err) {
      const message = showProblem(err, form.setError, ['token', 'email', 'password']);
      if (message) form.setError('root', { message });
    }
  });
  return (
    <AuthCard title={t('setup.title')}>
      <Text size="sm">{t('setup.intro')}</Text>
      <form onSubmit={submit} noValidate>
        <TextInput
          label={t('setup.token')}
          description={t('setup.tokenHint')}
          autoComplete="off"
          spellCheck={false}
          required
          error={errors.token?.message}
          {...form.register('token', { required: t('common.required') })}
        />
        <TextInput
          mt="sm"
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
          autoComplete="new-password"
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
          {t('setup.submit')}
        </Button>
      </form>
    </AuthCard>
  );
}
