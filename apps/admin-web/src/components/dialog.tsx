import { Modal, type ModalProps } from '@mantine/core';
import { ModalsProvider } from '@mantine/modals';
import type { ReactNode } from 'react';
import { useTranslation } from 'react-i18next';

/** A modal dialog whose close button is named in the reader's language. */
export function Dialog(props: ModalProps) {
  const { t } = useTranslation();
  return <Modal closeButtonProps={{ 'aria-label': t('common.close') }} {...props} />;
}

/** Confirmation dialogs (modals.openConfirmModal) with the same named close button. */
export function DialogsProvider({ children }: { children: ReactNode }) {
  const { t } = useTranslation();
  return <ModalsProvider modalProps={{ closeButtonProps: { 'aria-label': t('common.close') } }}>{children}</ModalsProvider>;
}
