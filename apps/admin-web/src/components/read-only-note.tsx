import { Alert } from '@mantine/core';
import { useTranslation } from 'react-i18next';
import { useCan } from '../me.tsx';

/** Viewers see every screen without its write actions; this says why they are missing. */
export function ReadOnlyNote() {
  const { t } = useTranslation();
  const can = useCan();
  if (can.write) return null;
  return (
    <Alert color="gray" mb="md" data-testid="read-only-note">
      {t('common.readOnly')}
    </Alert>
  );
}
