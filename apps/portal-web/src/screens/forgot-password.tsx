import { Anchor, Stack, Text } from '@mantine/core';
import { Link } from '@tanstack/react-router';
import { useTranslation } from 'react-i18next';
import { AuthCard } from '../components/auth-card.tsx';
import { MagicLinkRequest } from '../components/magic-link-request.tsx';

/**
 * A forgotten password is recovered by a mailed sign-in link (spec 5.7): signed in by it, the
 * customer sets a new password in the account within 10 minutes, without the old one.
 */
export function ForgotPasswordScreen() {
  const { t } = useTranslation();
  return (
    <AuthCard title={t('forgot.title')}>
      <Stack gap="xs">
        <Text size="sm">{t('forgot.intro')}</Text>
        <Text size="sm">{t('forgot.then')}</Text>
      </Stack>
      <MagicLinkRequest submitLabel={t('forgot.submit')} />
      <Anchor component={Link} to="/" size="sm" ta="center">
        {t('common.backToSignIn')}
      </Anchor>
    </AuthCard>
  );
}
