import { Alert, List, Text } from '@mantine/core';
import { useTranslation } from 'react-i18next';
import { AuthCard } from './auth-card.tsx';

/** Registration in mode application: the email is (or will be) confirmed, an administrator approves. */
export function WaitingForApproval({ emailConfirmed }: { emailConfirmed: boolean }) {
  const { t } = useTranslation();
  return (
    <AuthCard title={t('waiting.title')}>
      <Alert color="yellow" role="status" data-testid="waiting-for-approval">
        {t('waiting.body')}
      </Alert>
      <List spacing="xs" size="sm">
        <List.Item>{emailConfirmed ? t('waiting.stepConfirmed') : t('waiting.stepConfirm')}</List.Item>
        <List.Item>{t('waiting.stepApprove')}</List.Item>
        <List.Item>{t('waiting.stepSignIn')}</List.Item>
      </List>
      <Text size="sm" c="dimmed">
        {t('waiting.hint')}
      </Text>
    </AuthCard>
  );
}
