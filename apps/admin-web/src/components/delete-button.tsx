import { Button, Text } from '@mantine/core';
import { modals } from '@mantine/modals';
import type { ReactNode } from 'react';
import { useTranslation } from 'react-i18next';

/** The edit forms' Delete: asks first (title, what deleting does), then calls `onConfirm`. */
export function DeleteButton({ title, body, onConfirm }: { title: string; body: ReactNode; onConfirm: () => void }) {
  const { t } = useTranslation();
  return (
    <Button
      color="red"
      variant="light"
      onClick={() =>
        modals.openConfirmModal({
          title,
          children: <Text size="sm">{body}</Text>,
          labels: { confirm: t('common.delete'), cancel: t('common.cancel') },
          confirmProps: { color: 'red' },
          onConfirm,
        })
      }
    >
      {t('common.delete')}
    </Button>
  );
}
