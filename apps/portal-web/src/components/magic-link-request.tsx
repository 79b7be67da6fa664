import { Alert, Button, Stack, Text, TextInput } from '@mantine/core';
import { useState } from 'react';
import { useForm } from 'react-hook-form';
import { useTranslation } from 'react-i18next';
import { api, unwrap } from '../api.ts';
import { describeProblem } from './problems.ts';

/**
 * POST /portal/v1/auth/magic-link: one email field. The server answers the same for every email
 * (it never says whether an account exists), so the screen says "if", and how long the link works.
 */
export function MagicLinkRequest({ submitLabel }: { submitLabel: string }) {
  const { t } = useTranslation();
  const [sentTo, setSentTo] = useState<string | null>(null);
  const form = useForm<{ email: string }>({ defaultValues: { email: '' } });
  const { errors, isSubmitting } = form.formState;
  const submit = form.handleSubmit(async ({ email }) => {
    try {
      await unwrap(api.POST('/portal/v1/auth/magic-link', { body: { email } }));
      setSentTo(email);
    } catch (err) {
      const message = describeProblem(t, err, form.setError, ['email']);
      if (message) form.setError('root', { message });
    }
  });
  if (sentTo) {
    return (
      <Stack>
        <Alert color="teal" title={t('magicLink.sentTitle')} role="status" data-testid="magic-link-sent">
          {t('magicLink.sent', { email: sentTo })}
        </Alert>
        <Text size="sm" c="dimmed">
          {t('magicLink.sentHint')}
        </Text>
        <Button variant="default" onClick={() => setSentTo(null)}>
          {t('magicLink.again')}
        </Button>
      </Stack>
    );
  }
  return (
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
      {errors.root && (
        <Alert mt="md" color="red" role="alert">
          {errors.root.message}
        </Alert>
      )}
      <Button mt="lg" type="submit" fullWidth loading={isSubmitting}>
        {submitLabel}
      </Button>
    </form>
  );
}
